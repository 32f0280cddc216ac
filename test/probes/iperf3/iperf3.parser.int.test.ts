/**
 * iperf3 runner + parser against the real iperf3 on loopback. The captured outputs for the cases a
 * loopback run cannot provoke (test/fixtures/iperf3) are parsed in iperf3.test.ts.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseIperf3 } from '../../../probes/iperf3/iperf3.parser.js';
import { IPERF3_DEFAULTS, runIperf3With } from '../../../probes/iperf3/iperf3.runner.js';
import type { ProbeContext } from '../../../probes/run-kit/runner-types.js';
import { freePort } from '../../helpers/ports.js';
import { iperf3Probe as probe } from '../../helpers/probes.js';

const meta = (trial = 1, sidecar?: string) => ({ runId: 'r1', pathId: 'p1', probe: 'iperf3-tcp', trial, sidecar });

const procs: ChildProcess[] = [];
const servers: net.Server[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) if (p.exitCode === null) p.kill('SIGKILL');
  for (const s of servers.splice(0)) s.close();
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** True when a TCP socket listens on `port` (from /proc/net/tcp{,6}, state 0A; iperf3 binds ::). */
function isListening(port: number): boolean {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  return `${readFileSync('/proc/net/tcp', 'utf8')}\n${readFileSync('/proc/net/tcp6', 'utf8')}`.split('\n').some((l) => {
    const f = l.trim().split(/\s+/);
    return f[1]?.endsWith(`:${hex}`) && f[3] === '0A';
  });
}

async function iperf3Server(extra: string[] = []): Promise<number> {
  const port = await freePort();
  const p = spawn('iperf3', ['-s', '-1', '-p', String(port), ...extra], { stdio: 'ignore' });
  procs.push(p);
  // Ready when the port is in LISTEN state. (A probing connect would use up the -1 server's one test.)
  for (let i = 0; i < 100; i++) {
    if (isListening(port)) return port;
    await sleep(30);
  }
  throw new Error('iperf3 server did not start');
}

function ctx(port: number): ProbeContext & { lines: string[] } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pb-iperf3-'));
  dirs.push(dir);
  const lines: string[] = [];
  return { target: { host: '127.0.0.1', port }, outDir: dir, log: (m) => lines.push(m), lines };
}

function readTrial(c: ProbeContext, name: string, trial: number) {
  const raw = readFileSync(path.join(c.outDir, name, `${trial}.json`), 'utf8');
  const sidecar = readFileSync(path.join(c.outDir, name, `${trial}.meta.json`), 'utf8');
  return { raw, sidecar, side: JSON.parse(sidecar) as Record<string, unknown> };
}

describe('runIperf3 + parseIperf3 on loopback (real iperf3)', () => {
  it('TCP -P 2: one throughput and one retransmits record per interval, epoch times, raw kept verbatim', async () => {
    const port = await iperf3Server();
    const c = ctx(port);
    const before = Date.now();
    const out = await runIperf3With(probe(), c, IPERF3_DEFAULTS);
    expect(out).toMatchObject({ status: 'ok', trials: 1, files: ['iperf3-tcp/1.json', 'iperf3-tcp/1.meta.json'] });
    expect(out.tools?.iperf3).toMatch(/^3\./);
    const { raw, sidecar, side } = readTrial(c, 'iperf3-tcp', 1);
    expect(side).toMatchObject({ exitCode: 0, timedOut: false, mode: 'tcp', streams: 2 });
    expect(side.reason).toBeUndefined();
    expect(raw.startsWith('{')).toBe(true);
    const recs = parseIperf3(raw, meta(1, sidecar));
    const tput = recs.filter((r) => r.metric === 'throughput_bps');
    expect(tput.map((r) => r.seq)).toEqual([0, 1, 2]);
    for (const r of tput) {
      expect(r).toMatchObject({ ok: true, unit: 'bit/s', mode: 'tcp', streams: 2, trial: 1, kind: 'iperf3' });
      expect(r.value).toBeGreaterThan(1e8);
      expect(r.t_start).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 1000);
      expect(r.t_end - r.t_start).toBeGreaterThan(900);
    }
    expect(tput[1].t_start).toBeCloseTo(tput[0].t_end, 0);
    expect(recs.filter((r) => r.metric === 'retransmits')).toHaveLength(3);
    expect(recs.some((r) => r.flag)).toBe(false);
  });

  it('UDP against a -J server: per-interval jitter and loss from the server output', async () => {
    const port = await iperf3Server(['-J']);
    const c = ctx(port);
    const out = await runIperf3With(
      probe({ name: 'iperf3-udp', mode: 'udp', streams: 1, bitrate: '50M' }),
      c,
      IPERF3_DEFAULTS,
    );
    expect(out.status).toBe('ok');
    const { raw, sidecar } = readTrial(c, 'iperf3-udp', 1);
    const recs = parseIperf3(raw, { ...meta(1, sidecar), probe: 'iperf3-udp' });
    const by = (m: string) => recs.filter((r) => r.metric === m);
    expect(by('throughput_bps')).toHaveLength(3);
    expect(by('throughput_bps')[0].value).toBeGreaterThan(4e7);
    expect(by('jitter_ms').map((r) => r.seq)).toEqual([0, 1, 2]);
    expect(by('lost_percent').every((r) => typeof r.value === 'number' && r.value >= 0 && r.value <= 100)).toBe(true);
    expect(by('retransmits')).toHaveLength(0);
  });

  it('no server: a failed sample with reason connection-refused, never 0 bps (iperf3 exits 0 here)', async () => {
    const port = await freePort();
    const c = ctx(port);
    const out = await runIperf3With(probe({ repeats: 2 }), c, IPERF3_DEFAULTS);
    expect(out).toMatchObject({ status: 'failed', reason: 'connection-refused', trials: 2 });
    for (const t of [1, 2]) {
      const { raw, sidecar, side } = readTrial(c, 'iperf3-tcp', t);
      expect(side.exitCode).toBe(0);
      expect(JSON.parse(raw).error).toMatch(/Connection refused/);
      const recs = parseIperf3(raw, meta(t, sidecar));
      expect(recs).toHaveLength(1);
      expect(recs[0]).toMatchObject({
        ok: false,
        value: null,
        metric: 'throughput_bps',
        error: 'connection-refused',
        trial: t,
      });
      expect(recs[0].t_start).toBe(side.startedAtMs);
    }
  });

  it('busy server: bounded retries with back-off, then server-busy', async () => {
    const port = await iperf3Server();
    const hog = spawn('iperf3', ['-c', '127.0.0.1', '-p', String(port), '-t', '8', '-b', '10M'], { stdio: 'ignore' });
    procs.push(hog);
    await sleep(700);
    const c = ctx(port);
    const t0 = Date.now();
    const out = await runIperf3With(probe(), c, { ...IPERF3_DEFAULTS, busyAttempts: 3, backoffBaseMs: 200 });
    const took = Date.now() - t0;
    expect(out).toMatchObject({ status: 'failed', reason: 'server-busy' });
    const { raw, sidecar, side } = readTrial(c, 'iperf3-tcp', 1);
    expect(side.busyAttempts).toHaveLength(2);
    expect(took).toBeGreaterThanOrEqual(300); // 200·(0.5..1.5) + 400·(0.5..1.5)
    expect(c.lines.filter((l) => l.includes('busy'))).toHaveLength(2);
    expect(parseIperf3(raw, meta(1, sidecar))).toMatchObject([{ ok: false, value: null, error: 'server-busy' }]);
  });

  it('a server that accepts and stalls: hard timeout, process group killed, reason timeout', async () => {
    const held: net.Socket[] = [];
    const stall = net.createServer((s) => held.push(s));
    servers.push(stall);
    await new Promise<void>((r) => stall.listen(0, '127.0.0.1', () => r()));
    const port = (stall.address() as net.AddressInfo).port;
    const c = ctx(port);
    const t0 = Date.now();
    const out = await runIperf3With(probe({ durationSeconds: 1 }), c, { ...IPERF3_DEFAULTS, timeoutMarginMs: 1500 });
    const took = Date.now() - t0;
    for (const s of held) s.destroy();
    expect(out).toMatchObject({ status: 'failed', reason: 'timeout' });
    expect(took).toBeGreaterThanOrEqual(2600);
    expect(took).toBeLessThan(10_000);
    const { raw, sidecar, side } = readTrial(c, 'iperf3-tcp', 1);
    expect(side.timedOut).toBe(true);
    const recs = parseIperf3(raw, meta(1, sidecar));
    expect(recs).toMatchObject([{ ok: false, value: null, error: 'timeout' }]);
    // Even without the sidecar, iperf3's own "interrupt" output reads as the agent's timeout.
    expect(parseIperf3(raw, meta(1))).toMatchObject([{ ok: false, value: null, error: 'timeout' }]);
  });

  it('iperf3 not installed: failed, reason iperf3-not-installed, stand-in raw file, later repeats not run', async () => {
    const c = ctx(5201);
    const out = await runIperf3With(probe({ repeats: 3 }), c, { ...IPERF3_DEFAULTS, command: 'pb-no-such-iperf3' });
    expect(out).toMatchObject({ status: 'failed', reason: 'iperf3-not-installed' });
    expect(out.files).toEqual(['iperf3-tcp/1.json', 'iperf3-tcp/1.meta.json']);
    const { raw } = readTrial(c, 'iperf3-tcp', 1);
    expect(JSON.parse(raw).pathbench).toMatchObject({ synthesized: true, reason: 'iperf3-not-installed' });
    expect(parseIperf3(raw, meta(1))).toMatchObject([{ ok: false, value: null, error: 'iperf3-not-installed' }]);
  });
});
