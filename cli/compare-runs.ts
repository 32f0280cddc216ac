/**
 * The same paths across two runs (before / after a change): per path, probe and metric, run B −
 * run A at p50, p95 and p99 with the 95 % interval of the difference and a verdict — the
 * comparisons of one run's summary (comparisons.ts), with the two runs in place of two paths.
 * Two queries per run (percentiles.sql and percentile_windows.sql); the statistics are
 * core/confidence.ts.
 */
import {
  comparable,
  differenceInterval,
  type Estimate,
  higherIsBetter,
  INTERVAL_PERCENTILES,
  type IntervalColumn,
  judgeDifference,
  spreadEstimate,
} from '../core/confidence.js';
import { checkRunId } from '../core/keys.js';
import { readManifest } from '../core/run-manifest.js';
import type { DiffCell, SummaryPath } from '../core/run-summary.js';
import { readTrendPoints } from '../core/trend-point.js';
import { overheadNoise, ranksFor, valueInRuns, valuesAroundPercentiles } from '../functions/pipeline/comparisons.js';
import { groupKey, type Row } from '../functions/pipeline/query-rows.js';
import { betweenRuns, cleanFigures, judgedPercentiles } from '../functions/pipeline/regressions.js';
import type { Deps } from '../functions/ports.js';
import { HTTP_PAIR_METRIC } from '../probes/http/http.schema.js';
import { loadQuery } from '../queries/sql.js';
import { InputError } from './exit.js';

/** Run B − run A for one path, probe and metric (units as in the results). */
export interface RunDiff {
  path: string;
  probe: string;
  metric: string;
  unit: string;
  a: { n: number; p50: number; p95: number; p99: number };
  b: { n: number; p50: number; p95: number; p99: number };
  p50: DiffCell;
  p95: DiffCell;
  p99: DiffCell;
  /**
   * When both runs are of one plan with enough other clean runs: how far B − A moves between
   * runs of that plan by itself, 95 % (± 1.96 · √2 · the between-run sd), per judged percentile.
   */
  betweenRuns?: { runs: number; p50?: [number, number]; p99?: [number, number] };
  /**
   * For a paired probe (regression.paired: both runs measured the reference in the same probe,
   * HTTP_PAIR_METRIC): run B − run A of the figure less the reference's, per percentile — what
   * `trend` judges, with the host's moments that both series saw taken out. `pct` is a share of
   * run A's own figure. The interval takes the four estimates as independent; the two series of
   * one probe move together, so it is wider than the truth, never narrower.
   */
  paired?: Record<IntervalColumn, DiffCell>;
  /** As betweenRuns, for the paired figure (`paired`): how far it moves between runs of the plan by itself. */
  pairedBetweenRuns?: { runs: number; p50?: [number, number]; p99?: [number, number] };
}

export interface RunComparison {
  runA: string;
  runB: string;
  planA?: string;
  planB?: string;
  diffs: RunDiff[];
  /** Groups measured in only one of the runs ("path probe metric"). */
  onlyInA: string[];
  onlyInB: string[];
}

interface RunFigures {
  rows: Map<string, Row>;
  estimates: Map<string, Record<IntervalColumn, Estimate>>;
  /** The manifest's paths (their probe cost is the noise floor of a difference), when there is a manifest. */
  paths: SummaryPath[];
  plan?: string;
}

async function figures(deps: Pick<Deps, 'query' | 'store'>, runId: string): Promise<RunFigures> {
  const [all, values, manifest] = await Promise.all([
    deps.query.query(loadQuery('percentiles'), [runId], `percentiles-${runId}`),
    valuesAroundPercentiles(deps, runId),
    readManifest(deps.store, runId),
  ]);
  const rows = new Map<string, Row>();
  const estimates = new Map<string, Record<IntervalColumn, Estimate>>();
  for (const r of all.filter((x) => x.subset === 'all' && Number(x.n) > 0)) {
    const key = groupKey(String(r.path), String(r.probe), String(r.metric), String(r.unit));
    rows.set(key, r);
    const at = values.get(key);
    const ranks = ranksFor(Number(r.n));
    if (!at || !ranks) continue;
    const valueAt = (rank: number) => {
      const v = valueInRuns(at, rank);
      if (v === undefined)
        throw new Error(`queries/percentile_windows.sql returned no value at rank ${rank} for ${key}`);
      return v;
    };
    const est = {} as Record<IntervalColumn, Estimate>;
    for (const { column } of INTERVAL_PERCENTILES) {
      est[column] = spreadEstimate(Number(r[column]), valueAt, ranks.spread[column], String(r.unit));
    }
    estimates.set(key, est);
  }
  const paths = (manifest?.paths ?? []).map(
    (p) =>
      ({
        id: p.id,
        label: p.label,
        status: p.status,
        steps: [],
        results: [],
        ...(p.probe_overhead_us ? { probe_overhead_us: p.probe_overhead_us } : {}),
      }) as SummaryPath,
  );
  return { rows, estimates, paths, ...(manifest ? { plan: manifest.planName } : {}) };
}

/**
 * Run B − run A of a paired figure less the reference measured in the same probe (RunDiff.paired),
 * or undefined when the figure is the reference's own series or either run lacks it.
 */
function pairedCells(
  a: RunFigures,
  b: RunFigures,
  key: string,
  noiseOf: (column: IntervalColumn) => number,
): Record<IntervalColumn, DiffCell> | undefined {
  const rb = b.rows.get(key) as Row;
  const [path, probe, metric, unit] = [String(rb.path), String(rb.probe), String(rb.metric), String(rb.unit)];
  if (metric === HTTP_PAIR_METRIC) return undefined;
  const refKey = groupKey(path, probe, HTTP_PAIR_METRIC, unit);
  const [ea, eb, refA, refB] = [
    a.estimates.get(key),
    b.estimates.get(key),
    a.estimates.get(refKey),
    b.estimates.get(refKey),
  ];
  if (!ea || !eb || !refA || !refB) return undefined;
  // the fewer samples of each run's two series: the count its verdict's rules go by
  const n = (f: RunFigures) => Math.min(Number(f.rows.get(key)?.n ?? 0), Number(f.rows.get(refKey)?.n ?? 0));
  // one run's figure less its reference, as an estimate with its interval
  const less = (e: Estimate, ref: Estimate): Estimate => {
    const [lo, hi] = differenceInterval(e, ref);
    return { value: e.value - ref.value, lo, hi };
  };
  const cells = {} as Record<IntervalColumn, DiffCell>;
  for (const { column } of INTERVAL_PERCENTILES) {
    const da = less(ea[column], refA[column]);
    const db = less(eb[column], refB[column]);
    const diff = db.value - da.value;
    const ci95 = differenceInterval(db, da);
    const own = ea[column].value;
    cells[column] = {
      diff,
      pct: own === 0 ? 0 : (100 * diff) / own,
      ci95,
      ...judgeDifference(column, n(a), n(b), diff, ci95, noiseOf(column), higherIsBetter(metric)),
    };
  }
  return cells;
}

const label = (r: Row) => `${r.path} ${r.probe} ${r.metric}`;

/** Compare two runs path by path (same path id, probe, metric and unit). */
export async function compareRuns(
  deps: Pick<Deps, 'query' | 'store'>,
  runA: string,
  runB: string,
): Promise<RunComparison> {
  checkRunId(runA);
  checkRunId(runB);
  const [a, b] = await Promise.all([figures(deps, runA), figures(deps, runB)]);
  if (a.rows.size === 0) throw new InputError(`run ${runA} has no samples here`);
  if (b.rows.size === 0) throw new InputError(`run ${runB} has no samples here`);
  const diffs: RunDiff[] = [];
  for (const [key, rb] of b.rows) {
    const ra = a.rows.get(key);
    const ea = a.estimates.get(key);
    const eb = b.estimates.get(key);
    const unit = String(rb.unit);
    if (!ra || !ea || !eb || !comparable(unit)) continue;
    const path = String(rb.path);
    const noiseOf = (column: IntervalColumn) =>
      overheadNoise(
        [...a.paths, ...b.paths].filter((p) => p.id === path),
        (rb.kind as string | null) ?? null,
        column,
        unit,
      );
    const cells = {} as Record<IntervalColumn, DiffCell>;
    for (const { column } of INTERVAL_PERCENTILES) {
      const diff = eb[column].value - ea[column].value;
      // The same difference as between two paths of one run: B's estimate minus A's.
      const ci95 = differenceInterval(eb[column], ea[column]);
      const noise = noiseOf(column);
      cells[column] = {
        diff,
        pct: ea[column].value === 0 ? 0 : (100 * diff) / ea[column].value,
        ci95,
        ...judgeDifference(column, Number(ra.n), Number(rb.n), diff, ci95, noise, higherIsBetter(String(rb.metric))),
      };
    }
    const fig = (r: Row) => ({ n: Number(r.n), p50: Number(r.p50), p95: Number(r.p95), p99: Number(r.p99) });
    const paired = pairedCells(a, b, key, noiseOf);
    diffs.push({
      path,
      probe: String(rb.probe),
      metric: String(rb.metric),
      unit,
      a: fig(ra),
      b: fig(rb),
      ...cells,
      ...(paired ? { paired } : {}),
    });
  }
  if (a.plan && a.plan === b.plan) {
    const others = (await readTrendPoints(deps.store, a.plan)).filter((t) => t.runId !== runA && t.runId !== runB);
    // ± 1.96 · √2 · the between-run sd around the difference of two runs, per judged percentile
    const spreadOf = (d: RunDiff, paired: boolean, cell: (pct: 'p50' | 'p99') => DiffCell): RunDiff['betweenRuns'] => {
      const spread: NonNullable<RunDiff['betweenRuns']> = { runs: 0 };
      for (const percentile of judgedPercentiles(d.metric, d.unit)) {
        const b = betweenRuns(cleanFigures(others, d.path, d.probe, d.metric, d.unit, percentile, paired));
        if (!b) continue;
        const half = 1.96 * Math.SQRT2 * ((b.sd_pct / 100) * Math.abs(b.median));
        const diff = cell(percentile).diff;
        spread[percentile] = [diff - half, diff + half];
        spread.runs = b.runs;
      }
      return spread.runs > 0 ? spread : undefined;
    };
    for (const d of diffs) {
      const own = spreadOf(d, false, (pct) => d[pct]);
      if (own) d.betweenRuns = own;
      const paired = d.paired;
      const pairedSpread = paired && spreadOf(d, true, (pct) => paired[pct]);
      if (pairedSpread) d.pairedBetweenRuns = pairedSpread;
    }
  }
  return {
    runA,
    runB,
    ...(a.plan ? { planA: a.plan } : {}),
    ...(b.plan ? { planB: b.plan } : {}),
    diffs,
    onlyInA: [...a.rows.entries()].filter(([k]) => !b.rows.has(k)).map(([, r]) => label(r)),
    onlyInB: [...b.rows.entries()].filter(([k]) => !a.rows.has(k)).map(([, r]) => label(r)),
  };
}
