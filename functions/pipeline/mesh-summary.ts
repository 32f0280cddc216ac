/**
 * Mesh results (a run whose paths carry mesh facts): per pair the latency p50 and throughput
 * p50, the least-squares line of latency against distance, the fit of throughput against 1/RTT,
 * Pearson r of each, and the window/RTT bound (throughput ≤ W / RTT). Pure, from the summary's
 * results and the manifest's mesh facts. Least squares and r are a few sums, written here so
 * they stay exact to the formulas the docs give (docs/data.md).
 */

import type { MeshFacts } from '../../core/resolved-plan.js';
import type { LineFit, MeshPair, MeshSummary, SummaryPath } from '../../core/run-summary.js';

/**
 * The window of the bound: Linux's default largest receive buffer under autotuning,
 * net.ipv4.tcp_rmem max = 6 MiB. One TCP stream cannot carry more than W per RTT.
 */
export const DEFAULT_WINDOW_BYTES = 6 * 1024 * 1024;

/** Latency metrics in order of preference, with the factor to milliseconds. */
const LATENCY_METRICS: [string, number][] = [
  ['rtt_ms', 1],
  ['connect_rtt_ms', 1],
  ['rtt_us', 1e-3],
];

/** Least squares and Pearson r; null with fewer than 2 points or no spread in x. */
export function fitLine(points: readonly [number, number][]): LineFit | null {
  const n = points.length;
  if (n < 2) return null;
  const mx = points.reduce((s, p) => s + p[0], 0) / n;
  const my = points.reduce((s, p) => s + p[1], 0) / n;
  let sxx = 0;
  let syy = 0;
  let sxy = 0;
  for (const [x, y] of points) {
    sxx += (x - mx) ** 2;
    syy += (y - my) ** 2;
    sxy += (x - mx) * (y - my);
  }
  if (sxx === 0) return null;
  const slope = sxy / sxx;
  return { slope, intercept: my - slope * mx, r: syy === 0 ? 0 : sxy / Math.sqrt(sxx * syy), n };
}

function latencyOf(p: SummaryPath): { ms: number; metric: string } | undefined {
  for (const [metric, factor] of LATENCY_METRICS) {
    const r = p.results.find((x) => x.metric === metric && x.p50 !== null && x.n > 0);
    if (r) return { ms: r.p50! * factor, metric };
  }
  return undefined;
}

/** The mesh section of a summary, or undefined when no path is a mesh pair. */
export function meshSummary(
  paths: readonly SummaryPath[],
  facts: ReadonlyMap<string, MeshFacts>,
  windowBytes = DEFAULT_WINDOW_BYTES,
): MeshSummary | undefined {
  if (facts.size === 0) return undefined;
  const pairs: MeshPair[] = [];
  for (const p of paths) {
    const f = facts.get(p.id);
    if (!f) continue;
    const lat = latencyOf(p);
    const thr = p.results.find((x) => x.metric === 'throughput_bps' && x.p50 !== null && x.n > 0);
    const pair: MeshPair = {
      path: p.id,
      from: f.from,
      to: f.to,
      distanceKm: f.distanceKm,
      round: f.round,
      latencyMs: lat?.ms ?? null,
      throughputBps: thr?.p50 ?? null,
      windowBoundBps: lat && lat.ms > 0 ? (windowBytes * 8) / (lat.ms / 1000) : null,
    };
    if (lat) pair.latencyMetric = lat.metric;
    pairs.push(pair);
  }
  const regions = [...new Set(pairs.flatMap((p) => [p.from, p.to]))].sort();
  const latPts = pairs.filter((p) => p.latencyMs !== null).map((p): [number, number] => [p.distanceKm, p.latencyMs!]);
  const thrPts = pairs
    .filter((p) => p.latencyMs !== null && p.latencyMs > 0 && p.throughputBps !== null)
    .map((p): [number, number] => [1000 / p.latencyMs!, p.throughputBps!]);
  return {
    pairs,
    regions,
    latencyVsDistance: fitLine(latPts),
    throughputVsInverseRtt: fitLine(thrPts),
    windowBytes,
  };
}
