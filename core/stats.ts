/**
 * Reference statistics in plain JavaScript: exact nearest-rank percentiles with integer rank
 * arithmetic, and the same rows queries/percentiles.sql produces, computed by sorting in JS.
 * It is the independent computation that tests and the benchmark hold the SQL against.
 */

/** The percentile columns and their per-mille p, shared with queries/percentiles.sql. */
export const PERCENTILES = [
  { column: 'p50', perMille: 500 },
  { column: 'p95', perMille: 950 },
  { column: 'p99', perMille: 990 },
  { column: 'p999', perMille: 999 },
] as const;

export type PercentileColumn = (typeof PERCENTILES)[number]['column'];

/**
 * 1-based nearest rank ceil(perMille * n / 1000), with integer arithmetic only (exact for
 * perMille * n below 2^53, i.e. n up to ~9 * 10^12).
 */
export function nearestRankIndex(n: number, perMille: number): number {
  if (!Number.isInteger(perMille) || perMille < 1 || perMille > 1000) {
    throw new RangeError(`percentile must be an integer per-mille from 1 to 1000, got ${perMille}`);
  }
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`sample count must be a non-negative integer, got ${n}`);
  const k = perMille * n + 999;
  return (k - (k % 1000)) / 1000;
}

/**
 * The nearest-rank percentile of ascending-sorted values: the value at position
 * ceil(p * n) (1-based) with p given as integer per-mille (500, 950, 990, 999).
 * Returns null for an empty input.
 */
export function nearestRank(sortedValues: ArrayLike<number>, p: number): number | null {
  const rank = nearestRankIndex(sortedValues.length, p);
  return rank === 0 ? null : sortedValues[rank - 1];
}

/** The nearest-rank percentile of values in any order (read from a sorted copy); null when there are none. */
export function percentileOf(values: readonly number[], perMille: number): number | null {
  return nearestRank(
    [...values].sort((a, b) => a - b),
    perMille,
  );
}

/**
 * The median of values in any order: the middle value, or the mean of the two middle values for
 * an even count (so, unlike the nearest-rank p50, it can fall between samples); NaN when empty.
 */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Percentiles and max of one series (null when it is empty). */
export interface PercentileFigures {
  n: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
  p999: number | null;
  max: number | null;
}

/**
 * Sort `values` in place (numeric ascending) and read the nearest-rank percentiles and max.
 * Takes a Float64Array so large series stay compact and sort numerically without a comparator.
 */
export function percentilesInPlace(values: Float64Array): PercentileFigures {
  values.sort();
  const n = values.length;
  return {
    n,
    p50: nearestRank(values, 500),
    p95: nearestRank(values, 950),
    p99: nearestRank(values, 990),
    p999: nearestRank(values, 999),
    max: n === 0 ? null : values[n - 1],
  };
}

/** The fields of a sample record that the summary reads (see SampleRecord in core/sample-record.ts). */
export interface SampleInput {
  run_id: string;
  path_id: string;
  probe: string;
  kind: string;
  metric: string;
  unit: string;
  value: number | null;
  ok: boolean;
  flag?: unknown;
}

export type Subset = 'all' | 'unflagged';

/** One row of queries/percentiles.sql. */
export interface PercentileRow extends PercentileFigures {
  path: string;
  probe: string;
  kind: string | null;
  metric: string;
  unit: string;
  subset: Subset;
  failed: number;
  total: number;
  /** failed / total as a fraction; null when total is 0. */
  loss: number | null;
}

interface Series {
  values: number[];
  total: number;
}

interface Group {
  path: string;
  probe: string;
  metric: string;
  unit: string;
  kind: string | null;
  flagged: boolean;
  all: Series;
  unflagged: Series;
}

/** Code-point order for the ASCII keys we use; matches both engines' default VARCHAR order. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Row order of percentiles.sql: path, probe, metric, subset, unit. */
export function compareRows(a: PercentileRow, b: PercentileRow): number {
  return (
    compareText(a.path, b.path) ||
    compareText(a.probe, b.probe) ||
    compareText(a.metric, b.metric) ||
    compareText(a.subset, b.subset) ||
    compareText(a.unit, b.unit)
  );
}

/** Build a row from a series' successful values (sorted in place) and its counts. */
export function percentileRow(
  key: { path: string; probe: string; kind: string | null; metric: string; unit: string; subset: Subset },
  successful: Float64Array,
  total: number,
): PercentileRow {
  const figures = percentilesInPlace(successful);
  const failed = total - figures.n;
  return { ...key, ...figures, failed, total, loss: total === 0 ? null : failed / total };
}

/**
 * The rows of queries/percentiles.sql computed in JavaScript: per (path, probe, metric, unit),
 * subset 'all' over every sample and, when any sample carries a flag, subset 'unflagged' over
 * the samples without one. `path` is the record's path_id (the collector writes each record
 * under path=<path_id>). With `runId`, only that run's records count.
 */
export function summarizeSamples(records: Iterable<SampleInput>, opts: { runId?: string } = {}): PercentileRow[] {
  const groups = new Map<string, Group>();
  for (const r of records) {
    if (opts.runId !== undefined && r.run_id !== opts.runId) continue;
    const key = JSON.stringify([r.path_id, r.probe, r.metric, r.unit]);
    let g = groups.get(key);
    if (!g) {
      g = {
        path: r.path_id,
        probe: r.probe,
        metric: r.metric,
        unit: r.unit,
        kind: null,
        flagged: false,
        all: { values: [], total: 0 },
        unflagged: { values: [], total: 0 },
      };
      groups.set(key, g);
    }
    // SQL MIN(kind) ignores nulls; so does this.
    if (typeof r.kind === 'string' && (g.kind === null || r.kind < g.kind)) g.kind = r.kind;
    const good = r.ok === true && typeof r.value === 'number';
    const flagged = r.flag !== undefined && r.flag !== null;
    g.all.total += 1;
    if (good) g.all.values.push(r.value as number);
    if (flagged) g.flagged = true;
    else {
      g.unflagged.total += 1;
      if (good) g.unflagged.values.push(r.value as number);
    }
  }
  const rows: PercentileRow[] = [];
  for (const g of groups.values()) {
    const key = { path: g.path, probe: g.probe, kind: g.kind, metric: g.metric, unit: g.unit };
    rows.push(percentileRow({ ...key, subset: 'all' }, Float64Array.from(g.all.values), g.all.total));
    if (g.flagged) {
      rows.push(
        percentileRow({ ...key, subset: 'unflagged' }, Float64Array.from(g.unflagged.values), g.unflagged.total),
      );
    }
  }
  return rows.sort(compareRows);
}
