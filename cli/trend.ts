/**
 * `pathbench trend`: each judged percentile of a plan's runs as a time series, read from the
 * trend points the summary step stores (trends/plan=<name>/run=<id>.json), with each run judged
 * again against the runs before it exactly as the summary step did (functions/pipeline/regressions.ts),
 * so the listing shows where a regression began and which runs were left out of the baseline.
 */

import type { Regression } from '../core/run-summary.js';
import { readTrendPoints, type TrendPoint } from '../core/trend-point.js';
import {
  betweenRuns,
  exclusion,
  judge,
  judgedPercentiles,
  REGRESSION_RULE,
  runsNeeded,
} from '../functions/pipeline/regressions.js';
import type { ObjectStore } from '../functions/ports.js';
import { HTTP_PAIR_METRIC } from '../probes/http/http.schema.js';
import { fmt } from '../report/report-rows.js';

export interface TrendFilters {
  plan?: string;
  path?: string;
  probe?: string;
  metric?: string;
  /** At most this many of the latest runs per plan. */
  runs?: number;
}

export interface TrendRow {
  plan: string;
  runId: string;
  startedAt?: string;
  path: string;
  probe: string;
  metric: string;
  unit: string;
  percentile: 'p50' | 'p99';
  value: number | null;
  /** Why the figure is not in any baseline (path failed, credit-flagged, thin tail, no samples). */
  excluded?: string;
  /** Where the path ran in its run (0: first), when the plan set an order (`order`). */
  position?: number;
  /**
   * A paired http figure (the plan's regression.paired): the same percentile of the reference's
   * target measured in the same probe, whose difference from `value` is what is judged.
   */
  pairRef?: number | null;
  /** The figure's judgement against the runs before it, when it was flagged. */
  flagged?: Pick<Regression, 'baseline' | 'band' | 'runsInBaseline' | 'change_pct' | 'direction'>;
}

/** The plans that have trend points in the store. */
export async function trendPlans(store: ObjectStore): Promise<string[]> {
  const names = new Set<string>();
  for (const key of await store.list('trends/')) {
    const m = /^trends\/plan=([^/]+)\//.exec(key);
    if (m) names.add(decodeURIComponent(m[1]));
  }
  return [...names].sort();
}

const oldestFirst = (a: TrendPoint, b: TrendPoint) =>
  (a.startedAt ?? '').localeCompare(b.startedAt ?? '') || a.runId.localeCompare(b.runId);

/** The rows of the trend, oldest run first, filtered. */
export async function trendRows(store: ObjectStore, f: TrendFilters = {}): Promise<TrendRow[]> {
  const plans = f.plan ? [f.plan] : await trendPlans(store);
  const out: TrendRow[] = [];
  for (const plan of plans) {
    const points = (await readTrendPoints(store, plan)).sort(oldestFirst);
    const shown = f.runs ? points.slice(-f.runs) : points;
    for (const point of shown) {
      const before = points.slice(0, points.indexOf(point));
      const flags = judge(point, before).regressions;
      for (const p of point.paths) {
        if (f.path && p.id !== f.path) continue;
        for (const r of p.results) {
          if ((f.probe && r.probe !== f.probe) || (f.metric && r.metric !== f.metric)) continue;
          for (const percentile of judgedPercentiles(r.metric, r.unit)) {
            const why = exclusion(p, r, percentile);
            const ref = p.results.find(
              (x) => x.probe === r.probe && x.metric === HTTP_PAIR_METRIC && x.unit === r.unit,
            );
            const pairRef =
              ref && r.metric !== HTTP_PAIR_METRIC && !exclusion(p, ref, percentile) ? ref[percentile] : undefined;
            const g = flags.find(
              (x) => x.path === p.id && x.probe === r.probe && x.metric === r.metric && x.percentile === percentile,
            );
            out.push({
              plan,
              runId: point.runId,
              ...(point.startedAt ? { startedAt: point.startedAt } : {}),
              path: p.id,
              probe: r.probe,
              metric: r.metric,
              unit: r.unit,
              percentile,
              value: r[percentile],
              ...(p.position !== undefined ? { position: p.position } : {}),
              ...(why ? { excluded: why } : {}),
              ...(pairRef !== undefined ? { pairRef } : {}),
              ...(g
                ? {
                    flagged: {
                      baseline: g.baseline,
                      band: g.band,
                      runsInBaseline: g.runsInBaseline,
                      change_pct: g.change_pct,
                      direction: g.direction,
                    },
                  }
                : {}),
            });
          }
        }
      }
    }
  }
  return out;
}

/**
 * How much the series moves between clean runs, and how many scheduled runs make its figure
 * trustworthy: the mean of that many runs is within ±5 % (±1 %) of its long-run value, 95 %.
 */
export function betweenRunsLine(g: readonly TrendRow[]): string {
  const clean = g.filter((r) => !r.excluded && r.value !== null).map((r) => r.value as number);
  const b = betweenRuns(clean);
  const first = g[0];
  if (!b) return `between runs: ${clean.length} clean run(s), fewer than ${REGRESSION_RULE.minRuns}: no spread yet`;
  const f = (v: number) => fmt(v, first.metric);
  return `between runs: median ${f(b.median)}, robust sd ${b.sd_pct.toFixed(1)} % over ${b.runs} clean runs; one run within [${f(b.ci95[0])}, ${f(b.ci95[1])}] (95 %); runs needed for ±5 %: ${runsNeeded(b, 5)}, for ±1 %: ${runsNeeded(b, 1)}`;
}

/**
 * For a paired series (regression.paired): the between-run spread of what is judged, the figure
 * less the reference's measured in the same probe, as a share of the figure's own median, and the
 * runs needed for the difference within ±5 % (±1 %) of it; undefined for an unpaired series.
 */
export function pairedLine(g: readonly TrendRow[]): string | undefined {
  const both = g.filter((r) => !r.excluded && r.value !== null && r.pairRef != null);
  if (!g.some((r) => r.pairRef !== undefined)) return undefined;
  const b = betweenRuns(both.map((r) => (r.value as number) - (r.pairRef as number)));
  if (!b)
    return `paired (less the reference in the same probe): ${both.length} clean run(s), fewer than ${REGRESSION_RULE.minRuns}: no spread yet`;
  const own = betweenRuns(both.map((r) => r.value as number));
  // The difference's sd as a share of the path's own figure: the share the judgement's floors and change_pct use.
  const sdPct = own && own.median !== 0 ? (b.sd_pct * Math.abs(b.median)) / Math.abs(own.median) : b.sd_pct;
  const scaled = { ...b, sd_pct: sdPct };
  return `paired (less the reference in the same probe): median ${fmt(b.median, g[0].metric)}, robust sd ${sdPct.toFixed(1)} % of the path's median over ${b.runs} clean runs; runs needed for ±5 %: ${runsNeeded(scaled, 5)}, for ±1 %: ${runsNeeded(scaled, 1)}`;
}

/**
 * Position effects: the same figure by where its path ran, over runs whose plan set an order
 * (rotated or shuffled: seed 000's credit trap shows as a path slower after a long iperf3).
 * "position 1: median 1.234 (3 runs) · position 2: …"; undefined without positions.
 */
export function positionLine(g: readonly TrendRow[]): string | undefined {
  const by = new Map<number, number[]>();
  for (const r of g)
    if (r.position !== undefined && r.value !== null && !r.excluded)
      by.set(r.position, [...(by.get(r.position) ?? []), r.value]);
  if (by.size === 0) return undefined;
  const median = (v: number[]) => {
    const s = [...v].sort((a, b) => a - b);
    const m = s.length >> 1;
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  };
  const parts = [...by.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([pos, v]) => `${pos + 1}: ${fmt(median(v), g[0].metric)} (${v.length} run${v.length === 1 ? '' : 's'})`);
  return `by position run (median of clean runs): ${parts.join(' · ')}`;
}

/** The rows as text: one block per plan and series, one line per run, then its between-run spread. */
export function trendText(rows: TrendRow[]): string {
  if (rows.length === 0) return 'no trend yet: no run of a named plan has been summarized in this data directory\n';
  const lines: string[] = [];
  const key = (r: TrendRow) => `${r.plan}\u0000${r.path}\u0000${r.probe}\u0000${r.metric}\u0000${r.percentile}`;
  const order: string[] = [];
  const groups = new Map<string, TrendRow[]>();
  for (const r of rows) {
    if (!groups.has(key(r))) order.push(key(r));
    groups.set(key(r), [...(groups.get(key(r)) ?? []), r]);
  }
  for (const k of order) {
    const g = groups.get(k) ?? [];
    const first = g[0];
    const unit = first.metric === 'throughput_bps' ? 'Gbit/s' : first.unit;
    lines.push(`${first.plan} · ${first.path} ${first.probe} ${first.metric} ${first.percentile} [${unit}]`);
    const width = Math.max(...g.map((r) => r.runId.length));
    for (const r of g) {
      const note = r.flagged
        ? `${r.flagged.direction.toUpperCase()} ${r.flagged.change_pct > 0 ? '+' : ''}${r.flagged.change_pct.toFixed(1)}% vs ${fmt(r.flagged.baseline, r.metric)} [${fmt(r.flagged.band[0], r.metric)}–${fmt(r.flagged.band[1], r.metric)}] over ${r.flagged.runsInBaseline} runs`
        : r.excluded
          ? `(not in baselines: ${r.excluded})`
          : '';
      lines.push(
        `  ${r.runId.padEnd(width)}  ${(r.startedAt ?? '').padEnd(24)}  ${fmt(r.value, r.metric).padStart(9)}  ${r.position !== undefined ? `#${r.position + 1} ` : ''}${note}`.trimEnd(),
      );
    }
    lines.push(`  ${betweenRunsLine(g)}`);
    const paired = pairedLine(g);
    if (paired) lines.push(`  ${paired}`);
    const positions = positionLine(g);
    if (positions) lines.push(`  ${positions}`);
  }
  return `${lines.join('\n')}\n`;
}
