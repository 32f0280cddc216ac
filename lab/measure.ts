/**
 * Small measurements the lab needs for itself: TCP-connect round trips from inside a namespace
 * (to calibrate and verify the delays) and nearest-rank percentiles. The probe agent does the
 * real measuring for runs; this only keeps the lab honest about its own accuracy.
 *
 * The lab measures with the pipeline's own precise helper (probes/native/tcping.ts):
 * its primary value is the kernel's handshake RTT (TCP_INFO tcpi_rtt), exactly what a run
 * reports as connect_rtt_ms, and it cannot be inflated by the measuring process waking up late
 * on a busy machine. Only when the helper cannot be built does the lab fall back to its own
 * C timer (lab/native/tcp-rtt.c, application clock), and it says so.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { median, nearestRank } from '../core/stats.js';
import { parseDocument } from '../core/stored-document.js';
import { parseTcpingLines, runTcping } from '../probes/native/tcping.js';
import { ensureTcping } from '../probes/native/tcping-build.js';
import { LabCommandError } from './lab-errors.js';
import { run } from './sys.js';

/** The C fallback meter's answer: one round trip per connect, in ms, null when it failed. */
const rttListSchema = z.array(z.number().nullable());

export interface ConnectStats {
  n: number;
  failed: number;
  p50: number;
  p95: number;
  min: number;
  max: number;
}

/** Summarize connect samples (null = failed). */
export function connectStats(samples: (number | null)[]): ConnectStats {
  const ok = samples.filter((s): s is number => typeof s === 'number').sort((a, b) => a - b);
  return {
    n: ok.length,
    failed: samples.length - ok.length,
    p50: nearestRank(ok, 500) ?? Number.NaN,
    p95: nearestRank(ok, 950) ?? Number.NaN,
    min: ok[0] ?? Number.NaN,
    max: ok[ok.length - 1] ?? Number.NaN,
  };
}

export interface ConnectOptions {
  count?: number;
  intervalMs?: number;
  timeoutMs?: number;
  /** Pin the measuring process to this CPU (the lab's delay helpers' CPU). */
  cpu?: number;
}

/** Which clock a meter's figures come from. */
export type MeterClock = 'kernel-tcpi_rtt' | 'tcp-rtt-c';

/** Measures TCP-connect round trips (ms, null = failed) from inside a lab namespace. */
export interface ConnectMeter {
  clock: MeterClock;
  /** Why the precise helper is not in use (only for the fallback). */
  note?: string;
  measure(ns: string, host: string, port: number, opts?: ConnectOptions): Promise<(number | null)[]>;
}

/**
 * TCP-connect round trips from inside namespace `ns`, timed by the precise helper: rtt_ms is
 * the kernel's tcpi_rtt when it has a clean sample (otherwise the helper's busy-polled time,
 * as in a run). `binary` comes from ensureTcping().
 */
export async function measureConnectTcping(
  binary: string,
  ns: string,
  host: string,
  port: number,
  opts: ConnectOptions = {},
): Promise<(number | null)[]> {
  const pin = opts.cpu === undefined ? [] : ['taskset', '-c', String(opts.cpu)];
  const dir = mkdtempSync(join(tmpdir(), 'pathbench-lab-rtt-'));
  const out = join(dir, 'tcping.jsonl');
  try {
    const r = await runTcping({
      host,
      port,
      count: opts.count ?? 50,
      intervalMs: opts.intervalMs ?? 20,
      timeoutMs: opts.timeoutMs ?? 1000,
      out,
      binary,
      prefix: ['ip', 'netns', 'exec', ns, ...pin],
    });
    if (!r.ok) throw new LabCommandError(`tcping in ${ns} to ${host}:${port}: ${r.reason}`);
    return parseTcpingLines(readFileSync(out, 'utf8')).map((l) => (l.ok ? l.rtt_ms : null));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * TCP-connect round trips (ms, null = failed) from inside network namespace `ns` to host:port,
 * timed by the lab's fallback C tool (lab/native/tcp-rtt.c). Application clock: on a busy machine it
 * over-reads by the tool's wake-up time, so it is used only when the precise helper is missing.
 */
export async function measureConnectC(
  tool: string,
  ns: string,
  host: string,
  port: number,
  opts: ConnectOptions = {},
): Promise<(number | null)[]> {
  const count = opts.count ?? 50;
  const intervalMs = opts.intervalMs ?? 20;
  const timeoutMs = opts.timeoutMs ?? 1000;
  const pin = opts.cpu === undefined ? [] : ['taskset', '-c', String(opts.cpu)];
  const stdout = await run(
    ['ip', 'netns', 'exec', ns, ...pin, tool, host, String(port), String(count), String(intervalMs), String(timeoutMs)],
    { timeoutMs: count * (intervalMs + timeoutMs) + 10_000 },
  );
  return parseDocument(`${tool} output`, stdout, rttListSchema, 'list of round trips (ms, null when lost)');
}

/**
 * The lab's meter: the precise helper when ensureTcping() builds it, else the C fallback
 * built by `fallbackTool` (called only then), with the reason in `note`. `pin.cpu` pins every
 * measurement to the lab's CPU, as labClientWrap pins a run's agent.
 */
export async function connectMeter(
  fallbackTool: () => Promise<string>,
  pin: { cpu?: number } = {},
): Promise<ConnectMeter> {
  const built = await ensureTcping();
  if (built.ok) {
    const bin = built.path;
    return {
      clock: 'kernel-tcpi_rtt',
      measure: (ns, host, port, o) => measureConnectTcping(bin, ns, host, port, { ...o, ...pin }),
    };
  }
  const tool = await fallbackTool();
  return {
    clock: 'tcp-rtt-c',
    note: `precise tcping helper unavailable (${built.reason}); delays measured with lab/native/tcp-rtt.c (application clock, load-sensitive)`,
    measure: (ns, host, port, o) => measureConnectC(tool, ns, host, port, { ...o, ...pin }),
  };
}

export interface RobustOptions {
  /** Short rounds per measurement; the result is the median of their p50s. */
  rounds?: number;
  /** Connects per round. */
  count?: number;
  intervalMs?: number;
}

/**
 * Connect p50 that a burst of load cannot move: several short rounds, the median of their
 * p50s. A busy neighbour that spoils one round (a preempted softirq, a late helper) only
 * shifts that round. Throws when any connect failed, since the lab's paths must not lose SYNs.
 */
export async function robustP50(
  meter: ConnectMeter,
  ns: string,
  host: string,
  port: number,
  opts: RobustOptions = {},
): Promise<{ p50: number; rounds: number[] }> {
  const rounds = opts.rounds ?? 3;
  const count = opts.count ?? 40;
  const p50s: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const s = connectStats(await meter.measure(ns, host, port, { count, intervalMs: opts.intervalMs ?? 10 }));
    if (s.failed > 0) throw new LabCommandError(`${s.failed} of ${count} connects to ${host}:${port} failed`);
    p50s.push(s.p50);
  }
  return { p50: median(p50s), rounds: p50s };
}
