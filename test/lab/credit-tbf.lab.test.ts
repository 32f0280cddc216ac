/**
 * Burst credits in the lab: a real iperf3 TCP run through a veth whose client egress is a tbf
 * token bucket (rate 200 Mbit/s, a 500 MB bucket drained at a 1 Gbit/s peak rate) is fast for
 * the first seconds and then falls to the bucket's rate — the seed's credit cliff. The detector
 * must flag that run and must not flag the same run without shaping. Root; namespaces pb-tcr-c/-s.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flagCreditCliffs, formatCreditFlag } from '../../core/credit.js';
import { parseIperf3 } from '../../probes/iperf3/iperf3.parser.js';
import { IPERF3_DEFAULTS, runIperf3With } from '../../probes/iperf3/iperf3.runner.js';
import type { Iperf3Probe } from '../../probes/iperf3/iperf3.schema.js';
import { sh } from '../helpers/sh.js';

const C = 'pb-tcr-c';
const S = 'pb-tcr-s';
const C_IF = 'pb-tcrc0';
const S_IF = 'pb-tcrs0';
const S_IP = '10.213.78.2';
const PORT = 5201;
const quiet = (...args: string[]) => {
  try {
    sh(...args);
  } catch {
    // already gone
  }
};

let server: ChildProcess | undefined;
let dir = '';
let wrapper = '';

async function teardown() {
  const srv = server;
  if (srv?.pid && srv.exitCode === null && srv.signalCode === null) {
    const gone = new Promise((r) => srv.once('exit', r));
    srv.kill('SIGKILL');
    await gone;
  }
  quiet('ip', 'netns', 'del', C);
  quiet('ip', 'netns', 'del', S);
}

beforeAll(async () => {
  await teardown();
  dir = mkdtempSync(path.join(os.tmpdir(), 'pb-tcr-'));
  sh('ip', 'netns', 'add', C);
  sh('ip', 'netns', 'add', S);
  sh('ip', 'link', 'add', C_IF, 'netns', C, 'type', 'veth', 'peer', 'name', S_IF, 'netns', S);
  sh('ip', '-n', C, 'addr', 'add', '10.213.78.1/30', 'dev', C_IF);
  sh('ip', '-n', S, 'addr', 'add', `${S_IP}/30`, 'dev', S_IF);
  for (const [ns, dev] of [
    [C, C_IF],
    [S, S_IF],
    [C, 'lo'],
    [S, 'lo'],
  ]) {
    sh('ip', '-n', ns, 'link', 'set', dev, 'up');
  }
  server = spawn('ip', ['netns', 'exec', S, 'iperf3', '-s', '-p', String(PORT)], { stdio: 'ignore' });
  // The runner execs "iperf3 ARGS"; this wrapper runs exactly that inside the client namespace.
  wrapper = path.join(dir, 'iperf3-in-client-ns');
  writeFileSync(wrapper, `#!/bin/sh\nexec ip netns exec ${C} iperf3 "$@"\n`);
  chmodSync(wrapper, 0o755);
  for (let i = 0; i < 100; i++) {
    if (sh('ip', 'netns', 'exec', S, 'ss', '-Hltn', `sport = :${PORT}`).trim()) break;
    await sleep(50);
  }
});

afterAll(async () => {
  await teardown();
  rmSync(dir, { recursive: true, force: true });
  const left = sh('ip', 'netns', 'list');
  expect(left).not.toMatch(/pb-tcr-[cs]\b/);
  // Our server (by PID) is gone; other people's iperf3 servers are none of our business.
  expect(server?.signalCode).toBe('SIGKILL');
  expect(() => process.kill(server?.pid as number, 0)).toThrow();
});

const probe: Iperf3Probe = {
  kind: 'iperf3',
  name: 'iperf3-tcp',
  mode: 'tcp',
  streams: 1,
  durationSeconds: 12,
  repeats: 1,
  intervalSeconds: 1,
};

async function measure(label: string) {
  const outDir = path.join(dir, label);
  const out = await runIperf3With(
    probe,
    { target: { host: S_IP, port: PORT }, outDir, log: () => {} },
    { ...IPERF3_DEFAULTS, command: wrapper },
  );
  expect(out.status).toBe('ok');
  const raw = readFileSync(path.join(outDir, 'iperf3-tcp/1.json'), 'utf8');
  const sidecar = readFileSync(path.join(outDir, 'iperf3-tcp/1.meta.json'), 'utf8');
  const records = parseIperf3(raw, { runId: 'lab', pathId: label, probe: 'iperf3-tcp', trial: 1, sidecar });
  const series = records.filter((r) => r.metric === 'throughput_bps').map((r) => r.value as number);
  console.log(`${label}: Mbit/s per interval`, series.map((v) => Math.round(v / 1e6)).join(' '));
  return { records, series };
}

describe('burst-credit cliff through a tbf token bucket (real iperf3, namespaces)', () => {
  it('flags the shaped run at the drop and leaves the unshaped run alone', async () => {
    sh(
      'ip',
      'netns',
      'exec',
      C,
      'tc',
      'qdisc',
      'add',
      'dev',
      C_IF,
      'root',
      'tbf',
      'rate',
      '200mbit',
      'burst',
      '500mb',
      'peakrate',
      '1gbit',
      'mtu',
      '65536',
      'latency',
      '100ms',
    );
    const shaped = await measure('shaped');
    const cliffs = flagCreditCliffs(shaped.records);
    expect(cliffs).toHaveLength(1);
    const c = cliffs[0];
    console.log('shaped:', formatCreditFlag(c));
    expect(c.firstLowIndex).toBeGreaterThanOrEqual(3);
    expect(c.firstLowIndex).toBeLessThanOrEqual(9);
    expect(c.before).toBeGreaterThan(600e6);
    expect(c.after).toBeGreaterThan(150e6);
    expect(c.after).toBeLessThan(250e6);
    const flagged = shaped.records.filter((r) => r.flag === 'credit-exhausted').map((r) => r.seq);
    expect(flagged).toEqual(Array.from({ length: 12 - c.firstLowIndex }, (_, i) => c.firstLowIndex + i));

    sh('ip', 'netns', 'exec', C, 'tc', 'qdisc', 'del', 'dev', C_IF, 'root');
    const plain = await measure('unshaped');
    expect(Math.min(...plain.series.slice(1))).toBeGreaterThan(250e6);
    expect(flagCreditCliffs(plain.records)).toEqual([]);
    expect(plain.records.some((r) => r.flag)).toBe(false);
  });
});
