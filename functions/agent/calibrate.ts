/**
 * Self-calibration: before a path is measured, the agent times its own tcp-connect probe
 * against a listener on 127.0.0.1 (a zero-delay path: the handshake costs the kernel a few
 * µs and nothing else), with the same implementation and settings the path will use. The
 * p50/p99 of those loopback samples is the probe's own overhead; the lead stores it as
 * `probe_overhead_us` so a reader can see when a path's latency is within the probe's noise.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PathbenchError } from '../core/errors.js';
import { ensureTcping, parseTcpingLines, runTcping, startQuietListener } from './native/tcping.js';
import { connectSeries } from './probes/tcp-connect.js';

/** Calibration produced no usable sample (every loopback connect failed, or the helper broke). */
export class CalibrationError extends PathbenchError {}

export interface CalibrateOptions {
  /** Samples; default 200. */
  count?: number;
  /** Gap between samples; default 10 ms (idle gaps make connects colder, so keep it ≥ 2). */
  intervalMs?: number;
  timeoutMs?: number;
  /** "auto" (default): the precise helper when it builds, else the Node probe. */
  implementation?: 'auto' | 'native' | 'node';
  /** For the helper: which value is primary (default kernel, as in the probe). */
  primary?: 'kernel' | 'app';
}

export interface Calibration {
  p50_us: number;
  p99_us: number;
  /** Successful loopback samples the figures are taken from. */
  n: number;
  /** Implementation, clock, listener and settings, in words. */
  method: string;
  /** The app-observed connect time's p50/p99 when the primary clock is the kernel's. */
  app_p50_us?: number;
  app_p99_us?: number;
}

/** Nearest-rank percentile with an integer rank, as the SQL does: rank = ceil(q·n/100). */
export function nearestRank(sorted: number[], q: number): number {
  const rank = Math.floor((q * sorted.length + 99) / 100);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** p50/p99 in µs of millisecond values (rounded to 0.01 µs). */
export function percentilesUs(valuesMs: number[]): { p50_us: number; p99_us: number; n: number } {
  const s = valuesMs.map((v) => v * 1000).sort((a, b) => a - b);
  if (s.length === 0) return { p50_us: Number.NaN, p99_us: Number.NaN, n: 0 };
  return { p50_us: round2(nearestRank(s, 50)), p99_us: round2(nearestRank(s, 99)), n: s.length };
}

async function calibrateNative(
  binary: string,
  count: number,
  intervalMs: number,
  timeoutMs: number,
  primary: 'kernel' | 'app',
): Promise<Calibration> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pathbench-calibrate-'));
  const listener = await startQuietListener(binary);
  try {
    const out = path.join(dir, 'calibrate.jsonl');
    const r = await runTcping({
      host: '127.0.0.1',
      port: listener.port,
      count,
      intervalMs,
      timeoutMs,
      out,
      primary,
      binary,
    });
    if (!r.ok) throw new CalibrationError(`calibration run failed: ${r.reason}`);
    const lines = parseTcpingLines(await readFile(out, 'utf8')).filter((l) => l.ok && l.rtt_ms !== null);
    if (lines.length === 0) throw new CalibrationError(`calibration: all ${count} loopback connects failed`);
    const main = percentilesUs(lines.map((l) => l.rtt_ms as number));
    const app = percentilesUs(lines.map((l) => l.app_rtt_ms));
    const clocks = [...new Set(lines.map((l) => l.clock))].join('+');
    return {
      ...main,
      method: `tcping (C helper) ${clocks}, quiet loopback listener, ${count} × ${intervalMs} ms`,
      ...(primary === 'kernel' ? { app_p50_us: app.p50_us, app_p99_us: app.p99_us } : {}),
    };
  } finally {
    await listener.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function calibrateNode(count: number, intervalMs: number, timeoutMs: number, why: string): Promise<Calibration> {
  // pauseOnConnect + immediate destroy keeps the listener's per-connection work minimal; it
  // still runs on the probe's event loop, which is part of what the Node probe costs.
  const server = net.createServer({ pauseOnConnect: true }, (s) => s.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  try {
    const port = (server.address() as net.AddressInfo).port;
    const series = await connectSeries('127.0.0.1', port, count, intervalMs, timeoutMs);
    const ok: number[] = [];
    for (let i = 0; i < count; i++) if (series.error[i] === undefined) ok.push(series.rtt[i]);
    if (ok.length === 0) throw new CalibrationError(`calibration: all ${count} loopback connects failed`);
    return {
      ...percentilesUs(ok),
      method: `node net.Socket app-hrtime (${why}), in-process loopback listener, ${count} × ${intervalMs} ms`,
    };
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/**
 * Measure the tcp-connect probe's own overhead on loopback: `{ p50_us, p99_us, n, method }`.
 * Uses the precise helper when it is available (as the probe does), else the Node probe, and
 * says which in `method`. Throws CalibrationError when no sample succeeded, or when
 * implementation "native" was demanded and the helper is unavailable.
 */
export async function calibrate(kind: 'tcp-connect', opts: CalibrateOptions = {}): Promise<Calibration> {
  if (kind !== 'tcp-connect') throw new CalibrationError(`calibrate: unsupported probe kind ${String(kind)}`);
  const count = opts.count ?? 200;
  const intervalMs = opts.intervalMs ?? 10;
  const timeoutMs = opts.timeoutMs ?? 400;
  const impl = opts.implementation ?? 'auto';
  if (impl !== 'node') {
    const built = await ensureTcping();
    if (built.ok) return calibrateNative(built.path, count, intervalMs, timeoutMs, opts.primary ?? 'kernel');
    if (impl === 'native') throw new CalibrationError(`calibrate: precise helper unavailable: ${built.reason}`);
    return calibrateNode(count, intervalMs, timeoutMs, `precise helper unavailable: ${built.reason}`);
  }
  return calibrateNode(count, intervalMs, timeoutMs, 'requested');
}
