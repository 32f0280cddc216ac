/**
 * The precise tcp-connect helper, run (built by probes/native/tcping-build.ts). Owns the precise raw line format
 * (a superset of the Node probe's):
 *   {seq, t_start, t_end, ok, rtt_ms, error?, clock, kernel_rtt_us?, app_rtt_ms}
 * rtt_ms is the kernel's handshake RTT (TCP_INFO tcpi_rtt, clock "kernel-tcpi_rtt") when the
 * kernel has a clean sample, else the helper's busy-polled CLOCK_MONOTONIC connect time (clock
 * "tcping-monotonic"); app_rtt_ms always carries the application-observed connect time.
 * Why the kernel figure is primary: on loopback it is 2–3 µs at p50 against 6–8 µs for the
 * busy-polled app time, and it cannot be inflated by this process being descheduled.
 * The same binary is the http probe's client up to 64 connections (`--http`, runHttping): its lines
 * are the http probe's raw format with clock "httping-monotonic". It is also the pingpong probe's
 * client (`--pingpong`, runPingpong: a per-exchange CSV log) and that probe's TCP/UDP echo server
 * on the targets (`--echo`, startEchoServer); pingpong.c documents both.
 * Nothing here ever goes through a shell: the binary gets validated argv only.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { z } from 'zod';
import { PathbenchError } from '../../core/errors.js';
import { setLongTimeout } from '../../core/long-timer.js';
import { parseDocument } from '../../core/stored-document.js';
import { ensureTcping } from './tcping-build.js';

/** A bad argument to runTcping (the message names the field). */
export class TcpingArgumentError extends PathbenchError {}

/** Which clock a precise sample's rtt_ms came from. */
export const TCPING_CLOCK = { kernel: 'kernel-tcpi_rtt', app: 'tcping-monotonic' } as const;

/** One raw line written by the helper (probes/native/tcp-connect.c). */
export const tcpingLineSchema = z.object({
  seq: z.number(),
  /** Epoch ms (CLOCK_REALTIME just before connect()). */
  t_start: z.number(),
  t_end: z.number(),
  ok: z.boolean(),
  rtt_ms: z.number().nullable(),
  error: z.string().optional(),
  clock: z.enum([TCPING_CLOCK.kernel, TCPING_CLOCK.app]),
  /** The kernel's SYN→SYN-ACK RTT; absent when failed or the SYN was retransmitted. */
  kernel_rtt_us: z.number().optional(),
  /** Busy-polled CLOCK_MONOTONIC time from connect() to writable (or to the failure). */
  app_rtt_ms: z.number(),
  /** Time spent inside the nonblocking connect() call (µs): what a clock started after it misses. */
  connect_call_us: z.number().optional(),
});
export type TcpingLine = z.output<typeof tcpingLineSchema>;

const HOST_RE = /^[A-Za-z0-9_.:-]{1,253}$/;

export interface TcpingRunOptions {
  host: string;
  port: number;
  count: number;
  intervalMs: number;
  timeoutMs: number;
  /** JSONL file the lines go to (created or truncated). */
  out: string;
  /** Which value becomes rtt_ms; default "kernel" (falls back to app time per sample). */
  primary?: 'kernel' | 'app';
  /** Use this binary instead of ensureTcping()'s. */
  binary?: string;
  /** argv run in front of the helper, e.g. ["ip", "netns", "exec", "pb-client"] in the lab. */
  prefix?: string[];
}

export interface TcpingRunResult {
  ok: boolean;
  reason?: string;
  /** Non-fatal remarks the helper printed (e.g. loopback warm-up unavailable). */
  notes?: string[];
}

function numIn(name: string, v: number, min: number, max: number, integer: boolean): void {
  if (typeof v !== 'number' || !Number.isFinite(v) || (integer && !Number.isInteger(v)) || v < min || v > max) {
    throw new TcpingArgumentError(
      `tcping: ${name} must be ${integer ? 'an integer' : 'a number'} in ${min}..${max}, got ${v}`,
    );
  }
}

/** Milliseconds as argv: plain decimal, never exponent notation. */
const ms = (v: number): string => String(Math.round(v * 1e6) / 1e6);

/** argv for the helper after validation (exported for tests). */
export function tcpingArgs(o: Omit<TcpingRunOptions, 'out' | 'binary' | 'prefix'>): string[] {
  if (!HOST_RE.test(o.host) || o.host.startsWith('-')) {
    throw new TcpingArgumentError(`tcping: host must be a hostname or IP literal, got ${JSON.stringify(o.host)}`);
  }
  numIn('port', o.port, 1, 65535, true);
  numIn('count', o.count, 1, 10_000_000, true);
  numIn('intervalMs', o.intervalMs, 0, 3_600_000, false);
  numIn('timeoutMs', o.timeoutMs, 0.001, 600_000, false);
  if (o.primary !== undefined && o.primary !== 'kernel' && o.primary !== 'app') {
    throw new TcpingArgumentError(`tcping: primary must be "kernel" or "app", got ${JSON.stringify(o.primary)}`);
  }
  return [o.host, String(o.port), String(o.count), ms(o.intervalMs), ms(o.timeoutMs), o.primary ?? 'kernel'];
}

/**
 * Run one series with the helper, one JSON line per attempt into `opts.out`. Failed attempts
 * (refused, timeout …) are data in the file, not a failed run; `ok: false` means the helper
 * itself could not run (no binary, bad target, killed by the watchdog) and `reason` says why.
 * Throws TcpingArgumentError for invalid options.
 */
export async function runTcping(opts: TcpingRunOptions): Promise<TcpingRunResult> {
  const args = tcpingArgs(opts);
  // Bounded: every attempt ends by its timeout, so the series cannot outlast this.
  const budgetMs = opts.count * (opts.intervalMs + opts.timeoutMs) + 10_000;
  return runHelper(args, opts, budgetMs);
}

/** Options of one http series with the helper (`tcping --http`, up to 64 connections). */
export interface HttpingRunOptions {
  /** Numeric address to connect to (resolved by the caller). */
  address: string;
  port: number;
  /** Host header: the name the front end routes on. */
  hostHeader: string;
  path: string;
  count: number;
  timeoutMs: number;
  keepAlive: boolean;
  /** Unrecorded requests before the series (stop at the first failure). */
  warmup: number;
  /** Connections, each one request at a time (closed loop); 1..HTTPING_MAX_CONCURRENCY. */
  concurrency: number;
  /** The reference target of a paired probe: each worker alternates its requests between both. */
  pair?: { address: string; port: number; hostHeader: string };
  out: string;
  binary?: string;
  prefix?: string[];
}

/** The C client's limit (http-client.c HTTP_MAX_CONCURRENCY); beyond it the Node client runs. */
export const HTTPING_MAX_CONCURRENCY = 64;

const ADDRESS_RE = /^[0-9A-Fa-f.:]{2,45}$/;
const HOST_HEADER_RE = /^[A-Za-z0-9._:[\]-]{1,300}$/;
const PATH_RE = /^\/[\x21-\x7e]{0,2047}$/;

/** argv for `tcping --http` after validation (exported for tests). */
export function httpingArgs(o: Omit<HttpingRunOptions, 'out' | 'binary' | 'prefix'>): string[] {
  if (!ADDRESS_RE.test(o.address)) {
    throw new TcpingArgumentError(`tcping: address must be a numeric IP, got ${JSON.stringify(o.address)}`);
  }
  if (!HOST_HEADER_RE.test(o.hostHeader)) {
    throw new TcpingArgumentError(`tcping: bad Host header ${JSON.stringify(o.hostHeader)}`);
  }
  if (!PATH_RE.test(o.path)) throw new TcpingArgumentError(`tcping: bad request path ${JSON.stringify(o.path)}`);
  numIn('port', o.port, 1, 65535, true);
  numIn('count', o.count, 1, 10_000_000, true);
  numIn('timeoutMs', o.timeoutMs, 0.001, 600_000, false);
  numIn('warmup', o.warmup, 0, 10_000_000, true);
  numIn('concurrency', o.concurrency, 1, HTTPING_MAX_CONCURRENCY, true);
  if (o.pair) {
    if (!ADDRESS_RE.test(o.pair.address))
      throw new TcpingArgumentError(`tcping: pair address must be a numeric IP, got ${JSON.stringify(o.pair.address)}`);
    if (!HOST_HEADER_RE.test(o.pair.hostHeader))
      throw new TcpingArgumentError(`tcping: bad pair Host header ${JSON.stringify(o.pair.hostHeader)}`);
    numIn('pair port', o.pair.port, 1, 65535, true);
  }
  return [
    '--http',
    o.address,
    String(o.port),
    o.hostHeader,
    o.path,
    String(o.count),
    ms(o.timeoutMs),
    o.keepAlive ? 'keepalive' : 'close',
    String(o.warmup),
    String(o.concurrency),
    ...(o.pair ? [o.pair.address, String(o.pair.port), o.pair.hostHeader] : []),
  ];
}

/**
 * Run one http series with the helper: one JSON line per request into `opts.out`, in the http
 * probe's raw format (clock "httping-monotonic"). Same contract as runTcping.
 */
export async function runHttping(opts: HttpingRunOptions): Promise<TcpingRunResult> {
  const args = httpingArgs(opts);
  const budgetMs = (opts.count + opts.warmup) * opts.timeoutMs * (opts.pair ? 2 : 1) + 10_000;
  return runHelper(args, opts, budgetMs);
}

/** Options of one pingpong series with the helper (`tcping --pingpong`, pingpong.c). */
export interface PingpongRunOptions {
  /** Numeric address to connect to (resolved by the caller). */
  address: string;
  port: number;
  mode: 'tcp' | 'udp' | 'tcp-rr';
  requestBytes: number;
  responseBytes: number;
  /** 0 = no time limit (then count must be > 0). */
  durationSeconds: number;
  /** 0 = no count limit (then durationSeconds must be > 0). */
  count: number;
  timeoutMs: number;
  /** How the reply is awaited: "busy" (busy-poll; the helper's default when absent) or "block". */
  wait?: 'busy' | 'block';
  out: string;
  binary?: string;
  prefix?: string[];
}

/** argv for `tcping --pingpong` after validation (exported for tests). */
export function pingpongArgs(o: Omit<PingpongRunOptions, 'out' | 'binary' | 'prefix'>): string[] {
  if (!ADDRESS_RE.test(o.address)) {
    throw new TcpingArgumentError(`tcping: address must be a numeric IP, got ${JSON.stringify(o.address)}`);
  }
  if (o.mode !== 'tcp' && o.mode !== 'udp' && o.mode !== 'tcp-rr') {
    throw new TcpingArgumentError(`tcping: pingpong mode must be tcp, udp or tcp-rr, got ${JSON.stringify(o.mode)}`);
  }
  const min = o.mode === 'udp' ? 8 : 1;
  numIn('port', o.port, 1, 65535, true);
  numIn('requestBytes', o.requestBytes, min, 65_000, true);
  numIn('responseBytes', o.responseBytes, min, 65_000, true);
  numIn('durationSeconds', o.durationSeconds, 0, 86_400, true);
  numIn('count', o.count, 0, 100_000_000, true);
  numIn('timeoutMs', o.timeoutMs, 0.001, 600_000, false);
  if (o.count === 0 && o.durationSeconds === 0) {
    throw new TcpingArgumentError('tcping: pingpong needs a count or a durationSeconds above 0, got both 0');
  }
  if (o.mode === 'udp' && o.requestBytes !== o.responseBytes) {
    throw new TcpingArgumentError('tcping: udp echoes the datagram: requestBytes must equal responseBytes');
  }
  if (o.wait !== undefined && o.wait !== 'busy' && o.wait !== 'block') {
    throw new TcpingArgumentError(`tcping: pingpong wait must be "busy" or "block", got ${JSON.stringify(o.wait)}`);
  }
  return [
    '--pingpong',
    o.address,
    String(o.port),
    o.mode,
    String(o.requestBytes),
    String(o.responseBytes),
    String(o.durationSeconds),
    String(o.count),
    ms(o.timeoutMs),
    ...(o.wait ? [o.wait] : []),
  ];
}

/**
 * Run one pingpong series with the helper: its per-exchange CSV log into `opts.out`. Same
 * contract as runTcping (failed exchanges are data; `ok: false` when the helper could not run).
 */
export async function runPingpong(opts: PingpongRunOptions): Promise<TcpingRunResult> {
  const args = pingpongArgs(opts);
  const byCount = opts.count > 0 ? opts.count * opts.timeoutMs : Number.POSITIVE_INFINITY;
  const byDuration = opts.durationSeconds > 0 ? opts.durationSeconds * 1000 + opts.timeoutMs : Number.POSITIVE_INFINITY;
  return runHelper(args, opts, Math.min(byCount, byDuration) + 2 * opts.timeoutMs + 10_000);
}

/** A running pingpong echo server (`tcping --echo`, TCP and UDP on one port). */
export interface EchoServer {
  port: number;
  pid: number;
  close(): Promise<void>;
}

/**
 * Start the helper's pingpong echo server on `address:port` (0 = any free port; TCP and UDP
 * share it). Resolves once both listen; rejects with the helper's one-line reason otherwise.
 */
export async function startEchoServer(
  binary: string,
  address: string,
  port: number,
  prefix: string[] = [],
): Promise<EchoServer> {
  const [cmd, ...argv] = [...prefix, binary, '--echo', address, String(port)];
  const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const bound = await new Promise<number>((resolve, reject) => {
    let buf = '';
    let err = '';
    child.stderr.on('data', (b: Buffer) => {
      err += b.toString();
    });
    child.stdout.on('data', (b: Buffer) => {
      buf += b.toString();
      const m = /\{"port":(\d+)\}/.exec(buf);
      if (m) resolve(Number(m[1]));
    });
    child.once('error', reject);
    child.once('close', (code) =>
      reject(new Error(`pingpong echo server exited with ${code}: ${err.trim().replace(/^tcping: /, '')}`)),
    );
  });
  return {
    port: bound,
    pid: child.pid ?? -1,
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

async function runHelper(
  args: string[],
  opts: { out: string; binary?: string; prefix?: string[] },
  budgetMs: number,
): Promise<TcpingRunResult> {
  let bin = opts.binary;
  if (!bin) {
    const built = await ensureTcping();
    if (!built.ok) return { ok: false, reason: built.reason };
    bin = built.path;
  }
  const fd = openSync(opts.out, 'w');
  try {
    return await new Promise<TcpingRunResult>((resolve) => {
      const [cmd, ...argv] = [...(opts.prefix ?? []), bin, ...args];
      const child = spawn(cmd, argv, { stdio: ['ignore', fd, 'pipe'] });
      let stderr = '';
      child.stderr?.on('data', (b: Buffer) => {
        if (stderr.length < 8192) stderr += b.toString();
      });
      let killed = false;
      const watchdog = setLongTimeout(() => {
        killed = true;
        child.kill('SIGKILL');
      }, budgetMs);
      child.on('error', (e) => {
        watchdog.clear();
        resolve({ ok: false, reason: `cannot start ${bin}: ${e.message}` });
      });
      child.on('close', (code, signal) => {
        watchdog.clear();
        const lines = stderr.split('\n').filter((l) => l.trim());
        const notes = lines.filter((l) => l.includes('note:')).map((l) => l.replace(/^tcping: note: /, ''));
        if (code === 0) resolve(notes.length ? { ok: true, notes } : { ok: true });
        else if (killed) resolve({ ok: false, reason: `tcping did not finish within ${budgetMs} ms (killed)` });
        else {
          const why = lines.find((l) => !l.includes('note:')) ?? `signal ${signal ?? 'none'}`;
          resolve({ ok: false, reason: `tcping exited with ${code ?? signal}: ${why.replace(/^tcping: /, '')}` });
        }
      });
    });
  } finally {
    closeSync(fd);
  }
}

/** A running quiet listener (`tcping --listen`, listener.c). */
export interface QuietListener {
  port: number;
  pid: number;
  close(): Promise<void>;
}

/**
 * Start the helper's quiet loopback listener: it accepts in batches every 20 ms, so no process
 * wake-up lands inside the handshakes being timed. Used for calibration and benches.
 */
export async function startQuietListener(
  binary: string,
  address = '127.0.0.1',
  prefix: string[] = [],
): Promise<QuietListener> {
  const [cmd, ...argv] = [...prefix, binary, '--listen', address, '0'];
  const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let buf = '';
    let err = '';
    child.stderr.on('data', (b: Buffer) => {
      err += b.toString();
    });
    child.stdout.on('data', (b: Buffer) => {
      buf += b.toString();
      const m = /\{"port":(\d+)\}/.exec(buf);
      if (m) resolve(Number(m[1]));
    });
    child.once('error', reject);
    child.once('close', (code) => reject(new Error(`quiet listener exited with ${code}: ${err.trim()}`)));
  });
  return {
    port,
    pid: child.pid ?? -1,
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Parse the helper's JSONL output (one TcpingLine per non-empty line), each line checked. */
export function parseTcpingLines(text: string): TcpingLine[] {
  return text
    .split('\n')
    .flatMap((l, i) =>
      l.trim() ? [parseDocument(`tcping output line ${i + 1}`, l, tcpingLineSchema, 'tcping line')] : [],
    );
}
