/**
 * The selection table (summary.selection, seed 000 §8): per path its method, latency p50/p99
 * with their intervals, throughput, loss and MTU side by side with what the method costs — fixed
 * $/month and $/GB from the cost model (core/cost.ts methodCost over core/prices.ts). Pure: the
 * resolved plan (the paths' routes and targets) is read by the caller.
 */
import { methodCost } from '../../core/cost.js';
import type { PriceTable } from '../../core/prices.js';
import type { ResolvedPlan } from '../../core/resolved-plan.js';
import type { ResultRow, SelectionRow, SummaryPath } from '../../core/run-summary.js';

/** The latency metrics the table takes, most direct first: ICMP, UDP/TCP round trips, TCP connect, HTTP. */
export const LATENCY_PREFERENCE = ['icmp_rtt_ms', 'rtt_us', 'connect_rtt_ms', 'http_latency_ms'] as const;

/** A path's latency for the table: its first result (with samples) of the most direct metric. */
export function latencyResult(results: readonly ResultRow[]): ResultRow | undefined {
  for (const metric of LATENCY_PREFERENCE) {
    const hit = results.find((r) => r.metric === metric && r.n > 0);
    if (hit) return hit;
  }
  return undefined;
}

/** The largest of a metric's p50 over the path's results; null when none has one. */
function largestP50(results: readonly ResultRow[], metric: string): number | null {
  const values = results.filter((r) => r.metric === metric && r.p50 !== null).map((r) => r.p50 as number);
  return values.length ? Math.max(...values) : null;
}

/** One row per path of the summary (in its order); the cost columns need the path in the resolved plan. */
export function selectionTable(
  paths: readonly SummaryPath[],
  plan?: ResolvedPlan,
  prices?: PriceTable,
): SelectionRow[] {
  return paths.map((p) => {
    const resolved = plan?.paths.find((x) => x.id === p.id);
    const cost = resolved ? methodCost(resolved, prices) : undefined;
    const lat = latencyResult(p.results);
    return {
      path: p.id,
      method: cost?.method ?? 'unknown',
      label: p.label,
      latency: lat
        ? {
            probe: lat.probe,
            metric: lat.metric,
            unit: lat.unit,
            p50: lat.p50,
            p99: lat.p99,
            ...(lat.ci95 ? { p50_ci95: lat.ci95.p50, p99_ci95: lat.ci95.p99 } : {}),
            loss: lat.loss,
          }
        : null,
      throughputBps: largestP50(p.results, 'throughput_bps'),
      mtuBytes: largestP50(p.results, 'mtu_bytes'),
      fixedUsdPerMonth: cost?.fixedUsdPerMonth ?? null,
      usdPerGb: cost?.usdPerGb ?? null,
      ...(cost ? { link: cost.link } : {}),
    };
  });
}
