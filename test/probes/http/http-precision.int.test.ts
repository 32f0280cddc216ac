// The http probe next to wrk (C) on loopback, keep-alive on, concurrency 1, against the agent's
// own HTTP target; and http self-calibration, alone and through runSpec. Loose bounds only
// (this machine is noisy); the hard numbers are in the bench (scripts/bench/http.bench.ts).
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calibrate } from '../../../agent/calibrate.js';
import { runSpec } from '../../../agent/run.js';
import { type RunningServers, startServers } from '../../../agent/server.js';
import type { ProbeOverhead } from '../../../core/agent-report.js';
import { percentileOf } from '../../../core/stats.js';
import { parseHttp } from '../../../probes/http/http.parser.js';
import { runHttp } from '../../../probes/http/http.runner.js';
import type { HttpProbe } from '../../../probes/http/http.schema.js';
import { parseWrk, wrkTimeUs } from '../../../scripts/bench/http.bench.js';

const execFileP = promisify(execFile);

let dir: string;
let servers: RunningServers;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'pb-http-precision-it-'));
  servers = await startServers({ host: '127.0.0.1', http: 0 });
});

afterAll(async () => {
  await servers?.close();
  await rm(dir, { recursive: true, force: true });
});

const probe = (count: number): HttpProbe => ({
  kind: 'http',
  name: 'http',
  count,
  concurrency: 1,
  keepAlive: true,
  payloadBytes: 1024,
  trials: 1,
  timeoutMs: 2000,
});

describe('wrk output', () => {
  it('reads time units', () => {
    expect(wrkTimeUs('12.00us')).toBe(12);
    expect(wrkTimeUs('1.89ms')).toBeCloseTo(1890, 6);
    expect(wrkTimeUs('2.01s')).toBeCloseTo(2.01e6, 3);
    expect(wrkTimeUs('fast')).toBeNaN();
  });
});

describe('http probe vs wrk on loopback (keep-alive, c=1)', () => {
  it("our p50 is within a sane factor of wrk's, on the same target", async () => {
    const port = servers.ports.http as number;
    const url = `http://127.0.0.1:${port}/bytes/1024`;
    const ours: number[] = [];
    const wrkP50: number[] = [];
    for (let round = 0; round < 2; round++) {
      const outDir = path.join(dir, `probe-${round}`);
      const out = await runHttp(probe(1500), { target: { host: '127.0.0.1', port }, outDir, log: () => {} });
      expect(out.status).toBe('ok');
      const recs = parseHttp(await readFile(path.join(outDir, out.files[0]), 'utf8'), {
        runId: 'it',
        pathId: 'lo',
        probe: 'http',
        trial: 1,
      });
      expect(recs.every((r) => r.ok && r.bytes === 1024)).toBe(true);
      // Keep-alive really reused one connection.
      expect(new Set(recs.map((r) => r.local_port)).size).toBe(1);
      ours.push(...recs.map((r) => (r.value as number) * 1000));
      const { stdout } = await execFileP('wrk', ['-t1', '-c1', '-d1s', '--latency', url], { timeout: 30_000 });
      const w = parseWrk(stdout);
      expect(w.requests).toBeGreaterThan(100);
      expect(w.errors).toEqual([]);
      expect(Number.isFinite(w.p50) && Number.isFinite(w.p99)).toBe(true);
      expect(w.p99).toBeGreaterThanOrEqual(w.p50);
      wrkP50.push(w.p50);
    }
    const oursP50 = percentileOf(ours, 500) as number;
    const wrkMin = Math.min(...wrkP50);
    expect(oursP50).toBeGreaterThan(0);
    expect(oursP50).toBeLessThan(5 * wrkMin + 100);
  }, 60_000);
});

describe("calibrate('http')", () => {
  it('returns finite figures from the real probe, in about a second', async () => {
    const t0 = Date.now();
    const c = await calibrate('http', { count: 300 });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(c.n).toBe(300);
    expect(Number.isFinite(c.p50_us) && c.p50_us > 0).toBe(true);
    expect(Number.isFinite(c.p99_us) && c.p99_us >= c.p50_us).toBe(true);
    // A loopback keep-alive request is tens of µs; a millisecond p50 means something is off.
    expect(c.p50_us).toBeLessThan(1000);
    expect(c.method).toMatch(/keep-alive on/);
    expect(c.method).toMatch(/GET \/bytes\/1024/);
  }, 20_000);

  it('follows keep-alive off: each request pays a handshake, so p50 is higher', async () => {
    const on = await calibrate('http', { count: 200 });
    const off = await calibrate('http', { count: 200, keepAlive: false });
    expect(off.method).toMatch(/keep-alive off/);
    expect(off.p50_us).toBeGreaterThan(on.p50_us);
  }, 20_000);

  it('runSpec stores it under calibration.http when the spec has an http probe', async () => {
    const port = servers.ports.http as number;
    const report = await runSpec(
      { runId: 'it', pathId: 'lo', target: { host: '127.0.0.1', port }, probes: [probe(50)], skipped: [] },
      path.join(dir, 'spec-run'),
      () => {},
    );
    const cal = report.calibration?.http as ProbeOverhead;
    expect(cal).toBeDefined();
    expect(Number.isFinite(cal.p50_us) && Number.isFinite(cal.p99_us)).toBe(true);
    expect(cal.n).toBeGreaterThan(0);
    expect(report.calibration?.['tcp-connect']).toBeUndefined();
    expect(report.probes[0].status).toBe('ok');
  }, 20_000);
});
