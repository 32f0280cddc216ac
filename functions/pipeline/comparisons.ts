/**
 * Confidence for the summary: each result's 95 % intervals, tail counts, thin-tail flags and
 * trial-to-trial spread, and the comparisons between paths (path − baseline per percentile,
 * with an interval and a verdict). Two queries per run, for every group at once:
 * queries/percentile_windows.sql (the exact values around each percentile, where its interval's
 * ranks lie) and queries/trial_spread.sql. The statistics are core/confidence.ts.
 */

import {
  comparable,
  differenceInterval,
  type Estimate,
  higherIsBetter,
  INTERVAL_PERCENTILES,
  type IntervalColumn,
  judgeDifference,
  judgeRatio,
  microsecondsIn,
  percentileRanks,
  type RankInterval,
  ratioInterval,
  spreadEstimate,
  spreadRanks,
  tailCounts,
  thinTailFlags,
} from '../../core/confidence.js';
import type { PathPair } from '../../core/resolved-plan.js';
import type { RunManifest } from '../../core/run-manifest.js';
import type { Comparison, DiffCell, Ratio, RatioCell, ResultRow, SummaryPath } from '../../core/run-summary.js';
import { HTTP_PAIR_METRIC } from '../../probes/http/http.schema.js';
import { isProbeKind } from '../../probes/index.js';
import { loadQuery } from '../../queries/sql.js';
import type { Deps } from '../ports.js';
import { groupKey, type Row, rowKey } from './query-rows.js';

/** The ranks a group of n successful samples needs: the intervals' and the spreads' neighbours. */
interface GroupRanks {
  ci: Record<IntervalColumn, RankInterval>;
  spread: Record<IntervalColumn, { lo: number; hi: number }>;
}

export function ranksFor(n: number): GroupRanks | undefined {
  if (n <= 0) return undefined;
  const ci = {} as GroupRanks['ci'];
  const spread = {} as GroupRanks['spread'];
  for (const { column, perMille } of INTERVAL_PERCENTILES) {
    ci[column] = percentileRanks(n, perMille)!;
    spread[column] = spreadRanks(n, perMille)!;
  }
  return { ci, spread };
}

/** Runs of equal values by rank: [first_rank, last_rank, value], ascending. */
type RankRuns = [number, number, number][];

/** The value at a rank from its runs (binary search); undefined outside them. */
export function valueInRuns(runs: RankRuns, rank: number): number | undefined {
  let lo = 0;
  let hi = runs.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [first, last, value] = runs[mid];
    if (rank < first) hi = mid - 1;
    else if (rank > last) lo = mid + 1;
    else return value;
  }
  return undefined;
}

/** The values around every group's percentiles, from one run of queries/percentile_windows.sql. */
export async function valuesAroundPercentiles(
  deps: Pick<Deps, 'query'>,
  runId: string,
): Promise<Map<string, RankRuns>> {
  const rows = await deps.query.query(loadQuery('percentile_windows'), [runId], `percentile-windows-${runId}`);
  const out = new Map<string, RankRuns>();
  for (const r of rows) {
    const key = rowKey(r);
    if (!out.has(key)) out.set(key, []);
    out.get(key)?.push([Number(r.first_rank), Number(r.last_rank), Number(r.value)]);
  }
  // The three percentiles' windows overlap for small n: one run per value, in rank order.
  for (const [key, runs] of out) {
    runs.sort((x, y) => x[0] - y[0]);
    out.set(
      key,
      runs.filter((run, i) => i === 0 || run[0] !== runs[i - 1][0]),
    );
  }
  return out;
}

/** Per group with several trials: the row of queries/trial_spread.sql. */
export async function trialSpreads(deps: Pick<Deps, 'query'>, runId: string): Promise<Map<string, Row>> {
  const rows = await deps.query.query(loadQuery('trial_spread'), [runId], `trial-spread-${runId}`);
  return new Map(rows.map((r) => [rowKey(r), r]));
}

/** A result's percentile with its sampling-spread bounds, for a difference. */
export interface Spreads {
  kind: string | null;
  estimates: Record<IntervalColumn, Estimate>;
}

/** The comparisons a run reports: the manifest's (the plan's), else every other path vs the first. */
export function comparePairs(ids: readonly string[], manifest?: RunManifest): PathPair[] {
  if (manifest?.compare) return manifest.compare;
  const [first, ...rest] = ids;
  return first === undefined ? [] : rest.map((id) => ({ path: id, baseline: first }));
}

/**
 * The noise floor of a difference at one percentile: the larger of the two paths' own probe
 * cost for the probe kind (p50_us for p50, p99_us for p95 and p99), in the metric's unit; 0
 * when neither path calibrated that kind or the unit is not a time.
 */
export function overheadNoise(
  paths: readonly SummaryPath[],
  kind: string | null,
  column: IntervalColumn,
  unit: string,
): number {
  let us = 0;
  for (const p of paths) {
    const o = isProbeKind(kind) ? p.probe_overhead_us?.[kind] : undefined;
    if (o) us = Math.max(us, column === 'p50' ? o.p50_us : o.p99_us);
  }
  return microsecondsIn(us, unit) ?? 0;
}

/**
 * Fill ci95, tail, thin-tail flags and trials on every result with samples (in place), and
 * return the comparisons between paths and the manifest's within-path ratios. `rows` are
 * queries/percentiles.sql's rows for the run.
 */
export async function addConfidence(
  deps: Pick<Deps, 'query'>,
  runId: string,
  rows: readonly Row[],
  paths: SummaryPath[],
  manifest?: RunManifest,
): Promise<{ comparisons: Comparison[]; ratios: Ratio[] }> {
  const groups = rows.filter((r) => r.subset === 'all' && Number(r.n) > 0);
  if (groups.length === 0) return { comparisons: [], ratios: [] };
  // Independent of each other: on Athena they run side by side.
  const [values, spreads] = await Promise.all([valuesAroundPercentiles(deps, runId), trialSpreads(deps, runId)]);

  const kinds = new Map(groups.map((r) => [rowKey(r), r.kind as string | null]));
  const estimates = new Map<string, Spreads>();
  for (const p of paths) {
    for (const result of p.results) {
      const key = groupKey(p.id, result.probe, result.metric, result.unit);
      const at = values.get(key);
      const ranks = ranksFor(result.n);
      if (!at || !ranks) continue;
      const valueAt = (rank: number) => {
        const v = valueInRuns(at, rank);
        if (v === undefined)
          throw new Error(`queries/percentile_windows.sql returned no value at rank ${rank} of ${result.n} for ${key}`);
        return v;
      };
      const ci95 = {} as NonNullable<ResultRow['ci95']>;
      const est = {} as Spreads['estimates'];
      for (const { column } of INTERVAL_PERCENTILES) {
        const value = result[column];
        if (value === null) continue;
        ci95[column] = [valueAt(ranks.ci[column].lo), valueAt(ranks.ci[column].hi)];
        est[column] = spreadEstimate(value, valueAt, ranks.spread[column], result.unit);
      }
      result.ci95 = ci95;
      result.tail = tailCounts(result.n);
      result.flags.push(...thinTailFlags(result.n));
      const spread = spreads.get(key);
      if (spread && spread.p50_spread_pct !== null && spread.p99_spread_pct !== null) {
        result.trials = {
          count: Number(spread.trials),
          p50_spread_pct: Number(spread.p50_spread_pct),
          p99_spread_pct: Number(spread.p99_spread_pct),
        };
      }
      estimates.set(key, { kind: kinds.get(key) ?? null, estimates: est });
    }
  }
  return { comparisons: betweenPaths(paths, estimates, manifest), ratios: withinPaths(paths, estimates, manifest) };
}

/** path − baseline per probe and metric, for the plan's comparisons (never a path with itself). */
function betweenPaths(paths: SummaryPath[], estimates: Map<string, Spreads>, manifest?: RunManifest): Comparison[] {
  const comparisons: Comparison[] = [];
  const byId = new Map(paths.map((p) => [p.id, p]));
  for (const pair of comparePairs(
    paths.map((p) => p.id),
    manifest,
  )) {
    const path = byId.get(pair.path);
    const base = byId.get(pair.baseline);
    // A path minus itself is 0 by construction (plans refuse it; a stored manifest may still name one).
    if (!path || !base || path === base) continue;
    for (const result of path.results) {
      // A paired probe's reference series is the reference path's target from both sides: no path difference.
      if (!comparable(result.unit) || result.metric === HTTP_PAIR_METRIC) continue;
      const baseN = base.results.find(
        (r) => r.probe === result.probe && r.metric === result.metric && r.unit === result.unit,
      )?.n;
      const a = estimates.get(groupKey(path.id, result.probe, result.metric, result.unit));
      const b = estimates.get(groupKey(base.id, result.probe, result.metric, result.unit));
      if (!a || !b) continue;
      const cells: Partial<Record<IntervalColumn, DiffCell>> = {};
      for (const { column } of INTERVAL_PERCENTILES) {
        const ea = a.estimates[column];
        const eb = b.estimates[column];
        if (!ea || !eb || eb.value === 0) break;
        const diff = ea.value - eb.value;
        const ci95 = differenceInterval(ea, eb);
        const noise = overheadNoise([path, base], a.kind, column, result.unit);
        cells[column] = {
          diff,
          pct: (100 * diff) / eb.value,
          ci95,
          ...judgeDifference(column, result.n, baseN ?? 0, diff, ci95, noise, higherIsBetter(result.metric)),
        };
      }
      if (!cells.p50 || !cells.p95 || !cells.p99) continue;
      comparisons.push({
        path: path.id,
        baseline: base.id,
        probe: result.probe,
        metric: result.metric,
        unit: result.unit,
        p50: cells.p50,
        p95: cells.p95,
        p99: cells.p99,
      });
    }
  }
  return comparisons;
}

/**
 * probe ÷ baseline probe of one path, per metric both measured in the same unit, for the
 * manifest's ratios: the ratio of the percentiles, its interval (ratioInterval) and verdict
 * (judged as the comparisons are: none where the samples are too few or the interval has no width).
 */
export function withinPaths(paths: SummaryPath[], estimates: Map<string, Spreads>, manifest?: RunManifest): Ratio[] {
  const out: Ratio[] = [];
  for (const pair of manifest?.ratios ?? []) {
    const path = paths.find((p) => p.id === pair.path);
    if (!path) continue;
    for (const result of path.results) {
      if (result.probe !== pair.probe || !comparable(result.unit) || result.metric === HTTP_PAIR_METRIC) continue;
      const base = path.results.find(
        (r) => r.probe === pair.baseline && r.metric === result.metric && r.unit === result.unit,
      );
      const a = estimates.get(groupKey(path.id, result.probe, result.metric, result.unit));
      const b = base && estimates.get(groupKey(path.id, base.probe, base.metric, base.unit));
      if (!base || !a || !b) continue;
      const cells: Partial<Record<IntervalColumn, RatioCell>> = {};
      for (const { column } of INTERVAL_PERCENTILES) {
        const ea = a.estimates[column];
        const eb = b.estimates[column];
        const ci95 = ea && eb ? ratioInterval(ea, eb) : undefined;
        if (!ea || !eb || !ci95) break;
        const noise = overheadNoise([path], a.kind, column, result.unit);
        cells[column] = {
          ratio: ea.value / eb.value,
          ci95,
          ...judgeRatio(column, result.n, base.n, ea.value, eb.value, ci95, noise, higherIsBetter(result.metric)),
        };
      }
      if (!cells.p50 || !cells.p95 || !cells.p99) continue;
      out.push({
        path: path.id,
        probe: result.probe,
        baselineProbe: base.probe,
        metric: result.metric,
        unit: result.unit,
        p50: cells.p50,
        p95: cells.p95,
        p99: cells.p99,
      });
    }
  }
  return out;
}
