/**
 * Confidence for the summary: each result's 95 % intervals, tail counts, thin-tail flags and
 * trial-to-trial spread, and the comparisons between paths (path − baseline per percentile,
 * with an interval and a verdict). Two queries per run, for every group at once:
 * queries/percentile_ranks.sql (the exact values at the intervals' ranks) and
 * queries/trial_spread.sql. The statistics are functions/core/confidence.ts.
 */
import {
  comparable,
  differenceInterval,
  type Estimate,
  higherIsBetter,
  INTERVAL_PERCENTILES,
  type IntervalColumn,
  interpolateAt,
  microsecondsIn,
  neighbourRanks,
  percentileRanks,
  type RankInterval,
  spreadRanks,
  tailCounts,
  thinTailFlags,
  verdictOf,
} from '../core/confidence.js';
import type {
  Comparison,
  DiffCell,
  PathPair,
  ProbeKind,
  ProbeOverhead,
  ResultRow,
  RunManifest,
  SummaryPath,
} from '../core/model.js';
import type { Deps, QueryParam } from '../ports.js';
import { loadQuery } from '../sql.js';

type Row = Record<string, unknown>;

/** The one-pair VALUES row of queries/percentile_ranks.sql, repeated once per wanted (n, rank). */
const RANK_ROW = 'VALUES (?, ?)';

/** queries/percentile_ranks.sql asking for `pairs` (n, rank) pairs (at least one). */
export function rankQuery(pairs: number): string {
  const sql = loadQuery('percentile_ranks');
  if (!Number.isInteger(pairs) || pairs < 1) throw new RangeError(`expected at least one (n, rank) pair, got ${pairs}`);
  if (sql.split(RANK_ROW).length !== 2) throw new Error(`queries/percentile_ranks.sql must contain "${RANK_ROW}" once`);
  return sql.replace(RANK_ROW, `VALUES ${Array.from({ length: pairs }, () => '(?, ?)').join(', ')}`);
}

/** One group of samples: (path, probe, metric, unit). */
const groupKey = (path: unknown, probe: unknown, metric: unknown, unit: unknown) =>
  JSON.stringify([String(path), String(probe), String(metric), String(unit)]);

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

/** Every integer rank a group of n samples needs read (sorted, distinct). */
export function wantedRanks(n: number): number[] {
  const r = ranksFor(n);
  if (!r) return [];
  const set = new Set<number>();
  for (const { column } of INTERVAL_PERCENTILES) {
    set.add(r.ci[column].lo).add(r.ci[column].hi).add(r.ci[column].rank);
    for (const x of [r.spread[column].lo, r.spread[column].hi]) for (const k of neighbourRanks(x)) set.add(k);
  }
  return [...set].sort((a, b) => a - b);
}

/** Values at ranks per group, from one run of queries/percentile_ranks.sql. */
export async function valuesAtRanks(
  deps: Pick<Deps, 'query'>,
  runId: string,
  sizes: Iterable<number>,
): Promise<Map<string, Map<number, number>>> {
  const params: QueryParam[] = [runId];
  let pairs = 0;
  for (const n of new Set(sizes)) {
    for (const rank of wantedRanks(n)) {
      params.push(n, rank);
      pairs += 1;
    }
  }
  const out = new Map<string, Map<number, number>>();
  if (pairs === 0) return out;
  const rows = await deps.query.query(rankQuery(pairs), params, `percentile-ranks-${runId}`);
  for (const r of rows) {
    const key = groupKey(r.path, r.probe, r.metric, r.unit);
    if (!out.has(key)) out.set(key, new Map());
    out.get(key)?.set(Number(r.at_rank), Number(r.value));
  }
  return out;
}

/** Per group with several trials: the row of queries/trial_spread.sql. */
export async function trialSpreads(deps: Pick<Deps, 'query'>, runId: string): Promise<Map<string, Row>> {
  const rows = await deps.query.query(loadQuery('trial_spread'), [runId], `trial-spread-${runId}`);
  return new Map(rows.map((r) => [groupKey(r.path, r.probe, r.metric, r.unit), r]));
}

/** A result's percentile with its sampling-spread bounds, for a difference. */
interface Spreads {
  kind: string | null;
  n: number;
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
    const o = (p.probe_overhead_us as Partial<Record<ProbeKind, ProbeOverhead>> | undefined)?.[kind as ProbeKind];
    if (o) us = Math.max(us, column === 'p50' ? o.p50_us : o.p99_us);
  }
  return microsecondsIn(us, unit) ?? 0;
}

/**
 * Fill ci95, tail, thin-tail flags and trials on every result with samples (in place), and
 * return the comparisons. `rows` are queries/percentiles.sql's rows for the run.
 */
export async function addConfidence(
  deps: Pick<Deps, 'query'>,
  runId: string,
  rows: readonly Row[],
  paths: SummaryPath[],
  manifest?: RunManifest,
): Promise<Comparison[]> {
  const groups = rows.filter((r) => r.subset === 'all' && Number(r.n) > 0);
  if (groups.length === 0) return [];
  const values = await valuesAtRanks(
    deps,
    runId,
    groups.map((r) => Number(r.n)),
  );
  const spreads = await trialSpreads(deps, runId);

  const kinds = new Map(groups.map((r) => [groupKey(r.path, r.probe, r.metric, r.unit), r.kind as string | null]));
  const estimates = new Map<string, Spreads>();
  for (const p of paths) {
    for (const result of p.results) {
      const key = groupKey(p.id, result.probe, result.metric, result.unit);
      const at = values.get(key);
      const ranks = ranksFor(result.n);
      if (!at || !ranks) continue;
      const valueAt = (rank: number) => {
        const v = at.get(rank);
        if (v === undefined)
          throw new Error(`queries/percentile_ranks.sql returned no value at rank ${rank} for ${key}`);
        return v;
      };
      const ci95 = {} as NonNullable<ResultRow['ci95']>;
      const est = {} as Spreads['estimates'];
      for (const { column } of INTERVAL_PERCENTILES) {
        const value = result[column];
        if (value === null) continue;
        ci95[column] = [valueAt(ranks.ci[column].lo), valueAt(ranks.ci[column].hi)];
        est[column] = {
          value,
          lo: interpolateAt(valueAt, ranks.spread[column].lo),
          hi: interpolateAt(valueAt, ranks.spread[column].hi),
        };
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
      estimates.set(key, { kind: kinds.get(key) ?? null, n: result.n, estimates: est });
    }
  }

  const comparisons: Comparison[] = [];
  const byId = new Map(paths.map((p) => [p.id, p]));
  for (const pair of comparePairs(
    paths.map((p) => p.id),
    manifest,
  )) {
    const path = byId.get(pair.path);
    const base = byId.get(pair.baseline);
    if (!path || !base) continue;
    for (const result of path.results) {
      if (!comparable(result.unit)) continue;
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
          verdict: verdictOf(diff, ci95, noise, higherIsBetter(result.metric)),
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
