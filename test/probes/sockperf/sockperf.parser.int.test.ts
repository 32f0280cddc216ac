/** sockperf runner + parser against the real sockperf on loopback (captured logs: sockperf.test.ts). */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { ProbeContext } from '../../../probes/run-kit/runner-types.js';
import { parseSockperf, SOCKPERF_NOTE } from '../../../probes/sockperf/sockperf.parser.js';
import { runSockperfWith } from '../../../probes/sockperf/sockperf.runner.js';
import type { SockperfProbe } from '../../../probes/sockperf/sockperf.schema.js';
import { freePort } from '../../helpers/ports.js';

const meta = (sidecar?: string) => ({ runId: 'r1', pathId: 'p1', probe: 'sockperf', trial: 1, sidecar });

const procs: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) if (p.exitCode === null) p.kill('SIGKILL');
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function bound(port: number, proto: 'tcp' | 'udp'): boolean {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return readFileSync(`/proc/net/${proto}`, 'utf8')
    .split('\n')
    .some((l) => l.trim().split(/\s+/)[1]?.endsWith(hex));
}

async function sockperfServer(mode: 'tcp' | 'udp'): Promise<number> {
  const port = await freePort();
  const args = ['server', '-i', '127.0.0.1', '-p', String(port), ...(mode === 'tcp' ? ['--tcp'] : [])];
  procs.push(spawn('sockperf', args, { stdio: 'ignore' }));
  for (let i = 0; i < 100 && !bound(port, mode); i++) await sleep(30);
  return port;
}

function ctx(port: number): ProbeContext {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pb-sockperf-'));
  dirs.push(dir);
  return { target: { host: '127.0.0.1', port }, outDir: dir, log: () => {} };
}

const probe = (mode: 'tcp' | 'udp'): SockperfProbe => ({
  kind: 'sockperf',
  name: 'sockperf',
  mode,
  durationSeconds: 2,
});
const read = (c: ProbeContext, f: string) => readFileSync(path.join(c.outDir, 'sockperf', f), 'utf8');
/** The full log, stored gzip-compressed by the runner. */
const readLog = (c: ProbeContext) =>
  gunzipSync(readFileSync(path.join(c.outDir, 'sockperf', '1.csv.gz'))).toString('utf8');

describe('runSockperf + parseSockperf on loopback (real sockperf)', () => {
  for (const mode of ['udp', 'tcp'] as const) {
    it(`${mode}: one rtt_us record per exchange, round trip = 2 × sockperf's one-way, epoch times`, async () => {
      const port = await sockperfServer(mode);
      const c = ctx(port);
      const out = await runSockperfWith(probe(mode), c, { command: 'sockperf' });
      expect(out).toMatchObject({ status: 'ok', trials: 1, files: ['sockperf/1.csv.gz', 'sockperf/1.meta.json'] });
      expect(existsSync(path.join(c.outDir, 'sockperf/1.csv'))).toBe(false);
      const csv = readLog(c);
      const sidecar = read(c, '1.meta.json');
      const side = JSON.parse(sidecar);
      const rows = csv.split('\n').filter((l) => /^\d+, /.test(l));
      const recs = parseSockperf(csv, meta(sidecar));
      expect(rows.length).toBeGreaterThan(100);
      expect(recs).toHaveLength(rows.length);
      const first = rows[0].split(',').map(Number);
      expect(recs[0]).toMatchObject({
        seq: first[0],
        metric: 'rtt_us',
        unit: 'us',
        ok: true,
        note: SOCKPERF_NOTE,
        mode,
      });
      expect(recs[0].value).toBeCloseTo(first[3] * 2, 3);
      // The round trip is also rx − tx on sockperf's own clock.
      expect(recs[0].value).toBeCloseTo((first[2] - first[1]) * 1e6, 1);
      const outOfRun = recs.filter(
        (r) => !((r.value as number) > 0 && r.t_start >= side.startedAtMs - 50 && r.t_end <= side.endedAtMs + 50),
      );
      expect(outOfRun).toEqual([]);
    });
  }

  it('trials: one sockperf run after another, each its own log and sidecar, parsed per trial', async () => {
    const port = await sockperfServer('tcp');
    const c = ctx(port);
    const out = await runSockperfWith({ ...probe('tcp'), trials: 2 }, c, { command: 'sockperf' });
    expect(out).toMatchObject({
      status: 'ok',
      trials: 2,
      files: ['sockperf/1.csv.gz', 'sockperf/1.meta.json', 'sockperf/2.csv.gz', 'sockperf/2.meta.json'],
    });
    const ends: number[] = [];
    for (const trial of [1, 2]) {
      const csv = gunzipSync(readFileSync(path.join(c.outDir, 'sockperf', `${trial}.csv.gz`))).toString('utf8');
      const side = read(c, `${trial}.meta.json`);
      expect(JSON.parse(side)).toMatchObject({ trial, argv: expect.arrayContaining([`${trial}.csv`]) });
      const recs = parseSockperf(csv, { ...meta(side), trial });
      expect(recs.length).toBeGreaterThan(50);
      expect(recs.every((r) => r.ok && r.trial === trial)).toBe(true);
      ends.push(JSON.parse(side).endedAtMs);
    }
    expect(ends[1]).toBeGreaterThan(ends[0]);
  });

  it('no server (UDP): failed, reason no-replies; the header-only log parses to one failed record', async () => {
    const c = ctx(await freePort());
    const out = await runSockperfWith(probe('udp'), c, { command: 'sockperf' });
    expect(out).toMatchObject({ status: 'failed', reason: 'no-replies' });
    const recs = parseSockperf(readLog(c), meta(read(c, '1.meta.json')));
    expect(recs).toMatchObject([{ ok: false, value: null, metric: 'rtt_us', error: 'no-replies' }]);
  });

  it('no server (TCP): failed, reason connection-refused', async () => {
    const c = ctx(await freePort());
    const out = await runSockperfWith(probe('tcp'), c, { command: 'sockperf' });
    expect(out).toMatchObject({ status: 'failed', reason: 'connection-refused' });
    const csv = existsSync(path.join(c.outDir, 'sockperf/1.csv.gz')) ? readLog(c) : '';
    expect(parseSockperf(csv, meta(read(c, '1.meta.json')))).toMatchObject([
      { ok: false, error: 'connection-refused' },
    ]);
  });

  it('sockperf not installed: failed, reason sockperf-not-installed, only the sidecar', async () => {
    const c = ctx(11111);
    const out = await runSockperfWith(probe('udp'), c, { command: 'pb-no-such-sockperf' });
    expect(out).toEqual({
      status: 'failed',
      files: ['sockperf/1.meta.json'],
      trials: 1,
      reason: 'sockperf-not-installed',
    });
  });
});
