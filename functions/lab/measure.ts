/**
 * Small measurements the lab needs for itself: TCP-connect round trips from inside a namespace
 * (to calibrate and verify the delays) and nearest-rank percentiles. The probe agent does the
 * real measuring for runs; this only keeps the lab honest about its own accuracy.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

export interface ConnectStats {
  n: number;
  failed: number;
  p50: number;
  p95: number;
  min: number;
  max: number;
}

/** Nearest-rank percentile of sorted values (integer rank, as the SQL does). */
export function nearestRank(sorted: number[], pct: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.floor((pct * sorted.length + 99) / 100));
  return sorted[Math.min(rank, sorted.length) - 1];
}

/** Summarize connect samples (null = failed). */
export function connectStats(samples: (number | null)[]): ConnectStats {
  const ok = samples.filter((s): s is number => typeof s === 'number').sort((a, b) => a - b);
  return {
    n: ok.length,
    failed: samples.length - ok.length,
    p50: nearestRank(ok, 50),
    p95: nearestRank(ok, 95),
    min: ok[0] ?? Number.NaN,
    max: ok[ok.length - 1] ?? Number.NaN,
  };
}

/**
 * TCP-connect round trips (ms, null = failed) from inside network namespace `ns` to host:port,
 * timed by the lab's C tool (lab/tcp-rtt.c) so the figure is the network's, not a runtime's.
 */
export async function measureConnectC(
  tool: string,
  ns: string,
  host: string,
  port: number,
  opts: { count?: number; intervalMs?: number; timeoutMs?: number } = {},
): Promise<(number | null)[]> {
  const count = opts.count ?? 50;
  const intervalMs = opts.intervalMs ?? 20;
  const timeoutMs = opts.timeoutMs ?? 1000;
  const { stdout } = await execFileP(
    'ip',
    ['netns', 'exec', ns, tool, host, String(port), String(count), String(intervalMs), String(timeoutMs)],
    { timeout: count * (intervalMs + timeoutMs) + 10_000 },
  );
  return JSON.parse(stdout) as (number | null)[];
}
