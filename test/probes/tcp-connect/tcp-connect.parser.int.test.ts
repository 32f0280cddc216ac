/**
 * parseTcpConnect on raw output produced by the real tcp-connect runner against loopback
 * listeners (open, closed, and an overloaded slow-accept one for timeouts). Hand-broken input
 * for the error cases is in tcp-connect.test.ts.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServers, startServers } from '../../../agent/server.js';
import { parseTcpConnect } from '../../../probes/tcp-connect/tcp-connect.parser.js';
import { connectSeries, runTcpConnect, runTcpConnectNode } from '../../../probes/tcp-connect/tcp-connect.runner.js';
import type { TcpConnectProbe } from '../../../probes/tcp-connect/tcp-connect.schema.js';
import { freePort } from '../../helpers/ports.js';

const META = { runId: 'r1', pathId: 'p1', probe: 'tcp-connect', trial: 1 };
let dir: string;
let servers: RunningServers;
let closedPort: number;

async function runRaw(
  name: string,
  port: number,
  count: number,
  intervalMs: number,
  timeoutMs: number,
  runner = runTcpConnectNode,
) {
  const probe: TcpConnectProbe = { kind: 'tcp-connect', name, count, intervalMs, timeoutMs, port };
  const outcome = await runner(probe, { target: { host: '127.0.0.1', port: 1 }, outDir: dir, log: () => {} });
  const raw = await readFile(path.join(dir, `${name}/1.jsonl`), 'utf8');
  return { outcome, raw };
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'pb-tcp-parse-'));
  servers = await startServers({ host: '127.0.0.1', tcp: 0, slowAccept: { port: 0, ms: 400 } });
  closedPort = await freePort();
});
afterAll(async () => {
  await servers.close();
  await rm(dir, { recursive: true, force: true });
});

describe('parseTcpConnect on real agent output (Node path)', () => {
  it('turns successful connects into connect_rtt_ms records', async () => {
    // Prepare
    const { outcome, raw } = await runRaw('open', servers.ports.tcp!, 20, 5, 1000);
    // Act
    const recs = parseTcpConnect(raw, { ...META, probe: 'open' });
    // Assess
    expect(outcome.status).toBe('ok');
    expect(recs).toHaveLength(20);
    expect(recs.map((r) => r.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    for (const r of recs) {
      expect(r).toMatchObject({ run_id: 'r1', path_id: 'p1', probe: 'open', kind: 'tcp-connect', trial: 1 });
      expect(r).toMatchObject({ metric: 'connect_rtt_ms', unit: 'ms', ok: true, clock: 'app-hrtime' });
      expect(r.error).toBeUndefined();
      expect(r.value).toBeGreaterThan(0);
      expect(r.value).toBeLessThan(1000);
      // The value is the wall time between the stamps (stamps are rounded to 1 µs).
      expect(Math.abs((r.value as number) - (r.t_end - r.t_start))).toBeLessThan(0.005);
    }
  });

  it('keeps an open-loop schedule: attempt i never starts before its due time origin + i × interval', async () => {
    // The schedule's origin comes from the series itself: the first attempt's own stamp can be
    // late by its set-up (JIT, a busy host), so starts relative to it prove nothing.
    const series = await connectSeries('127.0.0.1', servers.ports.tcp!, 20, 5, 1000);
    expect(series.error.every((e) => e === undefined)).toBe(true);
    for (let i = 0; i < 20; i++) {
      expect(series.tStart[i] - series.origin, `start ${i}`).toBeGreaterThanOrEqual(i * 5 - 0.01);
    }
  });

  it('keeps refused connects as failed samples with reason "refused"', async () => {
    const { outcome, raw } = await runRaw('closed', closedPort, 5, 5, 1000);
    const recs = parseTcpConnect(raw, META);
    expect(outcome.status).toBe('failed');
    expect(outcome.reason).toMatch(/refused/);
    expect(recs).toHaveLength(5);
    for (const r of recs) expect(r).toMatchObject({ ok: false, value: null, error: 'refused' });
  });

  it('records timeouts against an overloaded listener as failed, never as slow samples', async () => {
    // The slow-accept listener keeps its backlog full: later SYNs are dropped and retried
    // after ≥1 s, which a 300 ms timeout turns into "timeout" samples.
    const { raw } = await runRaw('overloaded', servers.ports.slowAccept!, 12, 20, 300);
    const recs = parseTcpConnect(raw, META);
    const timeouts = recs.filter((r) => r.error === 'timeout');
    expect(timeouts.length).toBeGreaterThan(0);
    for (const r of timeouts) {
      expect(r.ok).toBe(false);
      expect(r.value).toBeNull();
      expect(r.t_end - r.t_start).toBeGreaterThanOrEqual(299);
    }
    for (const r of recs.filter((x) => x.ok)) expect(r.value).toBeLessThan(300);
  });
});

describe('parseTcpConnect on real agent output (precise helper, gcc is installed here)', () => {
  it('keeps the kernel figure as the value and the app-observed one as app_rtt_ms', async () => {
    const { outcome, raw } = await runRaw('precise', servers.ports.tcp!, 10, 5, 1000, runTcpConnect);
    const recs = parseTcpConnect(raw, META);
    expect(outcome.status).toBe('ok');
    expect(outcome.tools?.tcping).toMatch(/^tcping-/);
    expect(recs).toHaveLength(10);
    for (const r of recs) {
      expect(r.ok).toBe(true);
      expect(['kernel-tcpi_rtt', 'tcping-monotonic']).toContain(r.clock);
      expect(r.app_rtt_ms).toBeGreaterThan(0);
      if (r.clock === 'kernel-tcpi_rtt') expect(r.value).toBeCloseTo((r.kernel_rtt_us as number) / 1000, 6);
    }
    expect(recs.some((r) => r.clock === 'kernel-tcpi_rtt')).toBe(true);
  });

  it('keeps refused attempts as failed samples in the same shape', async () => {
    const { raw } = await runRaw('precise-closed', closedPort, 3, 5, 1000, runTcpConnect);
    const recs = parseTcpConnect(raw, META);
    for (const r of recs) expect(r).toMatchObject({ ok: false, value: null, error: 'refused' });
  });
});
