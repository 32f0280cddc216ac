/**
 * Self-calibration: before a path is measured, the agent times its own tcp-connect probe
 * against a listener on 127.0.0.1 (a zero-delay path: the handshake costs the kernel a few
 * µs and nothing else), with the same implementation and settings the path will use. The
 * p50/p99 of those loopback samples is the probe's own overhead; the lead stores it as
 * `probe_overhead_us` so a reader can see when a path's latency is within the probe's noise.
 *
 * The http probe is calibrated the same way: the real runHttp (its warm-up included) against
 * a loopback HTTP target answering `GET /bytes/<n>` like server.ts does, with the path's
 * keep-alive, payload and concurrency. The target is a separate node process (`node -e`, so
 * it works from source and from the bundle alike), as `agent serve` is on a real target:
 * measured here, a server on the probe's own event loop reads ≈ 12 µs lower at p50 and one
 * in a worker thread ≈ 6 µs lower than a separate process, which is what the bench uses.
 */

import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { ProbeOverhead } from '../core/agent-report.js';
import { PathbenchError } from '../core/errors.js';
import { nearestRank } from '../core/stats.js';
import { parseHttp } from '../probes/http/http.parser.js';
import { HTTPING_TOOL, runHttp, WARMUP_REQUESTS } from '../probes/http/http.runner.js';
import { parseTcpingLines, runTcping, startQuietListener } from '../probes/native/tcping.js';
import { ensureTcping } from '../probes/native/tcping-build.js';
import { connectSeries } from '../probes/tcp-connect/tcp-connect.runner.js';

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
  /** http: response body size (default 1024, as the probe's payloadBytes). */
  payloadBytes?: number;
  /** http: keep-alive on (default) or a new connection per request. */
  keepAlive?: boolean;
  /** http: closed-loop workers (default 1). */
  concurrency?: number;
}

/** Probe kinds with a self-calibration. */
export type CalibratedKind = 'tcp-connect' | 'http';

/** What a calibration yields: the figures manifests and summaries carry as probe_overhead_us. */
export type Calibration = ProbeOverhead;

/** x rounded to two decimals. */
function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** p50/p99 in µs of millisecond values (rounded to 0.01 µs). */
export function percentilesUs(valuesMs: number[]): { p50_us: number; p99_us: number; n: number } {
  const s = valuesMs.map((v) => v * 1000).sort((a, b) => a - b);
  if (s.length === 0) return { p50_us: Number.NaN, p99_us: Number.NaN, n: 0 };
  return { p50_us: round2(nearestRank(s, 500) as number), p99_us: round2(nearestRank(s, 990) as number), n: s.length };
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

// Plain JS on purpose: run with `node -e`, identical under tsx and in the esbuild bundle. It
// answers /bytes/<n> with the same calls as server.ts (writeHead, 64 KiB writes, end) so the
// server's share of a loopback request matches the real target's.
const HTTP_TARGET_CHILD = `
const http = require('node:http');
const CHUNK = Buffer.alloc(64 * 1024);
const server = http.createServer((req, res) => {
  req.resume();
  const m = /^\\/bytes\\/(\\d{1,10})$/.exec(req.url || '');
  if (!m) { res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\\n'); return; }
  let left = Number(m[1]);
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(left) });
  const pump = () => {
    while (left > 0) {
      const size = Math.min(left, CHUNK.length);
      left -= size;
      if (!res.write(size === CHUNK.length ? CHUNK : CHUNK.subarray(0, size))) { res.once('drain', pump); return; }
    }
    res.end();
  };
  pump();
});
server.keepAliveTimeout = 30000;
server.on('error', (e) => { process.send({ error: e.code || String(e) }); process.exit(1); });
server.listen({ host: '127.0.0.1', port: 0 }, () => process.send({ port: server.address().port }));
// Parent asked, or parent gone (IPC closed): never outlive the agent.
const stop = () => { server.closeAllConnections(); server.close(() => process.exit(0)); };
process.on('message', stop);
process.on('disconnect', stop);
`;

/** Start the loopback HTTP target as a child node process; resolves with its port and a closer. */
async function startChildHttpTarget(): Promise<{ port: number; close(): Promise<void> }> {
  const child = spawn(process.execPath, ['-e', HTTP_TARGET_CHILD], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => {
    stderr += b.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const close = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    if (child.connected) child.disconnect();
    const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
    await exited;
    clearTimeout(timer);
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.once('message', (m: { port?: number; error?: string }) => {
        if (m.port !== undefined) resolve(m.port);
        else reject(new CalibrationError(`calibration: loopback HTTP target failed: ${m.error}`));
      });
      child.once('error', (e) => reject(new CalibrationError(`calibration: cannot start HTTP target: ${e.message}`)));
      void exited.then(() =>
        reject(new CalibrationError(`calibration: HTTP target exited early: ${stderr.trim() || child.exitCode}`)),
      );
    });
    return { port, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** Unrecorded requests that warm both ends before the measured http run, at most … */
const HTTP_WARMUP_REQUESTS = 3000;
/** … and for at most this long. */
const HTTP_WARMUP_MS = 700;
/** Warm-up runs in rounds of this many (each adds the probe's own warm-up). */
const HTTP_WARMUP_ROUND = 400;
/** Default count and warm-up rounds are cut so one run moves at most this many body bytes. */
const HTTP_BYTES_PER_RUN = 64 * 1024 * 1024;

/** Which http client measured, as the calibration's method says it. */
function httpClientLabel(tools: Record<string, string> | undefined): string {
  if (tools?.httping === HTTPING_TOOL) return 'http probe, C helper (tcping --http) httping-monotonic';
  return `http probe, Node net.Socket client app-hrtime${tools?.httping ? ` (C helper ${tools.httping})` : ''}`;
}

async function calibrateHttp(opts: CalibrateOptions): Promise<Calibration> {
  const payloadBytes = opts.payloadBytes ?? 1024;
  // A large payload makes every request dear: bound the bytes moved so calibration stays short.
  const perRun = Math.max(20, Math.floor(HTTP_BYTES_PER_RUN / Math.max(1, payloadBytes)));
  const count = opts.count ?? Math.min(500, perRun);
  const round = Math.min(HTTP_WARMUP_ROUND, perRun);
  const keepAlive = opts.keepAlive ?? true;
  const concurrency = opts.concurrency ?? 1;
  const timeoutMs = opts.timeoutMs ?? 2000;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pathbench-calibrate-http-'));
  const target = await startChildHttpTarget();
  try {
    const probe = {
      kind: 'http' as const,
      name: 'calibrate-http',
      count,
      concurrency,
      keepAlive,
      payloadBytes,
      timeoutMs,
      trials: 1,
    };
    const ctx = { target: { host: '127.0.0.1', port: target.port }, outDir: dir, log: () => {} };
    // Both ends start cold: measured here in a fresh agent, p50 after the probe's own warm-up
    // alone is ≈ 2.5× steady state and only settles after ≈ 2000 requests. So unrecorded
    // rounds warm both ends first, bounded by count and time (keep-alive off or a large
    // payload makes each request far dearer).
    let warmed = 0;
    const warmStart = Date.now();
    while (warmed < HTTP_WARMUP_REQUESTS && Date.now() - warmStart < HTTP_WARMUP_MS) {
      await runHttp({ ...probe, count: round }, ctx);
      warmed += round + Math.min(round, WARMUP_REQUESTS);
    }
    const out = await runHttp(probe, ctx);
    if (out.status !== 'ok' || out.files.length === 0) {
      throw new CalibrationError(`calibration: loopback http probe failed: ${out.reason ?? 'no output'}`);
    }
    const raw = await readFile(path.join(dir, out.files[0]), 'utf8');
    const recs = parseHttp(raw, { runId: 'calibrate', pathId: 'loopback', probe: probe.name, trial: 1 });
    const ok = recs.filter((r) => r.ok && r.value !== null).map((r) => r.value as number);
    if (ok.length === 0) throw new CalibrationError(`calibration: all ${count} loopback requests failed`);
    return {
      ...percentilesUs(ok),
      method:
        `${httpClientLabel(out.tools)}, request start → last body byte, child-process loopback target, ` +
        `GET /bytes/${payloadBytes}, keep-alive ${keepAlive ? 'on' : 'off'}, c=${concurrency}, ` +
        `${count} requests after ${warmed} + ${Math.min(count, WARMUP_REQUESTS)} unrecorded warm-up`,
    };
  } finally {
    await target.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Measure a probe's own overhead on loopback: `{ p50_us, p99_us, n, method }`.
 * tcp-connect: uses the precise helper when it is available (as the probe does), else the Node
 * probe, and says which in `method`; throws CalibrationError when no sample succeeded, or when
 * implementation "native" was demanded and the helper is unavailable.
 * http: the real http probe against a child-process loopback target with the given
 * keep-alive/payload/concurrency (count default 500, after warm-up; well under 2 s at
 * keep-alive on); throws CalibrationError when no request succeeded.
 */
export async function calibrate(kind: CalibratedKind, opts: CalibrateOptions = {}): Promise<Calibration> {
  if (kind === 'http') return calibrateHttp(opts);
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
