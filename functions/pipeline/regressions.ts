/**
 * Trends and regression detection across the runs of one plan. After each run the summary step
 * stores the run's judged figures as a trend point (`trends/plan=<name>/run=<id>.json`, keys.ts),
 * reads the plan's earlier points and compares each path's p50 / p99 (throughput: p50) with a
 * baseline band from the last clean runs: median ± max(K · 1.4826 · MAD, the baseline runs'
 * typical 95 % half-width, MIN_RELATIVE of the median, for time metrics MIN_ABSOLUTE_MS). A plan
 * may set the last two (`regression` in the plan: its hosts' noise floor); a run keeps the
 * settings in its trend point, so a later `pathbench trend` judges it the same way. A figure is flagged only when this run's
 * own 95 % interval lies wholly outside the band, so neither one noisy run nor one noisy baseline
 * raises an alarm. A path that failed, a credit-flagged result and a thin-tailed percentile
 * neither enter a baseline nor are judged.
 *
 * Hand-written median / MAD (a dozen lines): the robust statistics are the measurement here, and
 * no statistics library is installed.
 */
import { comparable, higherIsBetter } from '../../core/confidence.js';
import { AT_BASELINE_FLAG, CREDIT_FLAG } from '../../core/credit.js';
import { keys } from '../../core/keys.js';
import type { RegressionSettings } from '../../core/resolved-plan.js';
import type { Regression, Summary, TrendSeries } from '../../core/run-summary.js';
import { readTrendPoints, type TrendPoint, type TrendResult } from '../../core/trend-point.js';
import type { Deps } from '../ports.js';

export const REGRESSION_RULE = {
  /** The baseline: the last this many clean runs of the plan. */
  runs: 10,
  /** Fewer clean runs than this: not judged. */
  minRuns: 3,
  /** Band half-width in robust standard deviations (1.4826 · MAD). */
  k: 3,
  /** A change smaller than this share of the baseline is never called a regression. */
  minRelative: 0.05,
  /** For time metrics: a change smaller than this many milliseconds is never called a regression. */
  minAbsoluteMs: 0,
};
export type RegressionRule = typeof REGRESSION_RULE;

export type Percentile = Regression['percentile'];

/** Milliseconds per unit of the time metrics (the units `minAbsoluteMs` applies to). */
const MS_PER_UNIT: Record<string, number> = { s: 1000, ms: 1, us: 0.001 };

/** The rule with a run's own settings over it. */
export function ruleFor(
  settings: RegressionSettings | undefined,
  rule: RegressionRule = REGRESSION_RULE,
): RegressionRule {
  return {
    ...rule,
    ...(settings?.minRelative !== undefined ? { minRelative: settings.minRelative } : {}),
    ...(settings?.minAbsoluteMs !== undefined ? { minAbsoluteMs: settings.minAbsoluteMs } : {}),
  };
}

/** The percentiles judged for a metric: p50 and p99 of latencies, p50 of throughput; none for the rest. */
export function judgedPercentiles(metric: string, unit: string): Percentile[] {
  if (!comparable(unit)) return [];
  return higherIsBetter(metric) ? ['p50'] : ['p50', 'p99'];
}

/** The projection of a summary a trend point stores. */
export function trendPoint(s: Summary): TrendPoint | undefined {
  if (!s.planName) return undefined;
  return {
    runId: s.runId,
    planName: s.planName,
    ...(s.startedAt ? { startedAt: s.startedAt } : {}),
    ...(s.regressionSettings ? { settings: { ...s.regressionSettings } } : {}),
    paths: s.paths.map((p) => ({
      id: p.id,
      status: p.status,
      results: p.results.map((r) => ({
        probe: r.probe,
        metric: r.metric,
        unit: r.unit,
        n: r.n,
        p50: r.p50,
        p99: r.p99,
        ...(r.ci95 ? { ci95: { p50: r.ci95.p50, p99: r.ci95.p99 } } : {}),
        flags: r.flags,
      })),
    })),
  };
}

/**
 * Why a path's percentile may neither enter a baseline nor be judged; undefined when it may.
 * A credit-flagged result is out as a whole (its path ran on a drained bucket); a thin tail
 * only at that percentile.
 */
export function exclusion(
  path: { status: string },
  r: Pick<TrendResult, 'n' | 'flags' | Percentile> | undefined,
  percentile: Percentile,
): string | undefined {
  if (path.status !== 'succeeded') return `path ${path.status}`;
  if (!r || r.n <= 0 || r[percentile] === null) return 'no samples';
  if (r.flags.some((f) => f.startsWith(CREDIT_FLAG) || f === AT_BASELINE_FLAG)) return 'credit-flagged';
  if (r.flags.includes(`thin-tail:${percentile}`)) return 'thin tail';
  return undefined;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Median absolute deviation from the median. */
export function mad(xs: readonly number[]): number {
  const m = median(xs);
  return median(xs.map((x) => Math.abs(x - m)));
}

/** The baseline band of clean figures, each with its run's 95 % interval when known; `unit` for the absolute floor. */
export function baselineBand(
  clean: readonly { value: number; ci95?: [number, number] }[],
  rule: RegressionRule = REGRESSION_RULE,
  unit?: string,
): { baseline: number; band: [number, number] } {
  const values = clean.map((c) => c.value);
  const center = median(values);
  const halfWidths = clean.filter((c) => c.ci95).map((c) => (c.ci95![1] - c.ci95![0]) / 2);
  const half = Math.max(
    rule.k * 1.4826 * mad(values),
    halfWidths.length ? median(halfWidths) : 0,
    rule.minRelative * Math.abs(center),
    unit !== undefined && MS_PER_UNIT[unit] ? rule.minAbsoluteMs / MS_PER_UNIT[unit] : 0,
  );
  return { baseline: center, band: [center - half, center + half] };
}

const findResult = (p: TrendPoint['paths'][number] | undefined, probe: string, metric: string, unit: string) =>
  p?.results.find((r) => r.probe === probe && r.metric === metric && r.unit === unit);

/** Newest first: by start time, then run id (sortable by time when generated). */
function newestFirst(points: readonly TrendPoint[]): TrendPoint[] {
  return [...points].sort(
    (a, b) => (b.startedAt ?? '').localeCompare(a.startedAt ?? '') || b.runId.localeCompare(a.runId),
  );
}

/**
 * Judge every path's percentiles of `current` against `history` (the plan's other runs, any
 * order). Returns the regressions (and improvements) and the trend series of every judged
 * percentile over the last `rule.runs` runs and this one. The current run's own settings (its
 * plan's `regression`) apply over `rule`.
 */
export function judge(
  current: TrendPoint,
  history: readonly TrendPoint[],
  baseRule: RegressionRule = REGRESSION_RULE,
): { regressions: Regression[]; trend: TrendSeries[] } {
  const rule = ruleFor(current.settings, baseRule);
  // Only runs before this one: a summary computed again later must not judge against its future.
  const before = (h: TrendPoint) => !current.startedAt || !h.startedAt || h.startedAt < current.startedAt;
  const past = newestFirst(
    history.filter((h) => h.runId !== current.runId && h.planName === current.planName && before(h)),
  );
  const regressions: Regression[] = [];
  const trend: TrendSeries[] = [];
  for (const path of current.paths) {
    for (const r of path.results) {
      for (const percentile of judgedPercentiles(r.metric, r.unit)) {
        const clean: { value: number; ci95?: [number, number] }[] = [];
        for (const h of past) {
          if (clean.length >= rule.runs) break;
          const hp = h.paths.find((p) => p.id === path.id);
          const hr = findResult(hp, r.probe, r.metric, r.unit);
          if (!hp || !hr || exclusion(hp, hr, percentile)) continue;
          clean.push({
            value: hr[percentile] as number,
            ...(hr.ci95?.[percentile] ? { ci95: hr.ci95[percentile] } : {}),
          });
        }
        const series: TrendSeries = {
          path: path.id,
          probe: r.probe,
          metric: r.metric,
          unit: r.unit,
          percentile,
          points: [...past.slice(0, rule.runs).reverse(), current].map((h) => {
            const hp = h.paths.find((p) => p.id === path.id);
            const hr = findResult(hp, r.probe, r.metric, r.unit);
            const why = hp ? exclusion(hp, hr, percentile) : 'path not in the run';
            return {
              runId: h.runId,
              ...(h.startedAt ? { startedAt: h.startedAt } : {}),
              value: hr?.[percentile] ?? null,
              ...(why ? { excluded: why } : {}),
            };
          }),
        };
        trend.push(series);
        if (exclusion(path, r, percentile) || clean.length < rule.minRuns) continue;
        const value = r[percentile] as number;
        const ci95 = r.ci95?.[percentile] ?? [value, value];
        const { baseline, band } = baselineBand(clean, rule, r.unit);
        series.band = band;
        const above = ci95[0] > band[1];
        const below = ci95[1] < band[0];
        if (!above && !below) continue;
        regressions.push({
          path: path.id,
          probe: r.probe,
          metric: r.metric,
          unit: r.unit,
          percentile,
          value,
          ci95,
          baseline,
          band,
          runsInBaseline: clean.length,
          change_pct: baseline === 0 ? 0 : (100 * (value - baseline)) / Math.abs(baseline),
          direction: above === higherIsBetter(r.metric) ? 'improvement' : 'regression',
        });
      }
    }
  }
  return { regressions, trend };
}

/** Judge a summary against the stored points of its plan without storing anything (a recomputed report). */
export async function judgeStored(deps: Pick<Deps, 'store'>, summary: Summary): Promise<void> {
  const point = trendPoint(summary);
  if (!point) return;
  const { regressions, trend } = judge(point, await readTrendPoints(deps.store, point.planName));
  summary.regressions = regressions;
  if (trend.some((t) => t.points.length > 1)) summary.trend = trend;
}

/**
 * Store this run's trend point and add `regressions` and `trend` to its summary (in place).
 * A summary without a plan name (samples that arrived by other means) has no trend.
 */
export async function addRegressions(
  deps: Pick<Deps, 'store'>,
  summary: Summary,
  rule: RegressionRule = REGRESSION_RULE,
): Promise<void> {
  const point = trendPoint(summary);
  if (!point) return;
  const history = await readTrendPoints(deps.store, point.planName);
  await deps.store.put(keys.trendPoint(point.planName, point.runId), `${JSON.stringify(point)}\n`, 'application/json');
  const { regressions, trend } = judge(point, history, rule);
  summary.regressions = regressions;
  if (trend.some((t) => t.points.length > 1)) summary.trend = trend;
}

/** One line per regression, for logs, reports and alarms: "C tcp-connect connect_rtt_ms p50 9.91 ms vs 8.90 [8.46, 9.35] over 5 runs (+11.3 %, regression)". */
export function describeRegression(r: Regression): string {
  const f = (v: number) => (r.metric === 'throughput_bps' ? `${(v / 1e9).toFixed(3)}G` : v.toFixed(3));
  const unit = r.metric === 'throughput_bps' ? 'bit/s' : r.unit;
  return `${r.path} ${r.probe} ${r.metric} ${r.percentile} ${f(r.value)} ${unit} vs ${f(r.baseline)} [${f(r.band[0])}, ${f(r.band[1])}] over ${r.runsInBaseline} runs (${r.change_pct > 0 ? '+' : ''}${r.change_pct.toFixed(1)} %, ${r.direction})`;
}

/**
 * Hand the summary to the publisher (AWS: metrics and regression events). A failure is logged,
 * not raised: the reports are written and the run's result must not hang on a notification.
 */
export async function publishSummary(deps: Partial<Pick<Deps, 'publisher' | 'log'>>, summary: Summary): Promise<void> {
  if (!deps.publisher) return;
  try {
    await deps.publisher.publish(summary);
  } catch (e) {
    deps.log?.warn("could not publish the run's metrics or regression events", {
      runId: summary.runId,
      error: e instanceof Error ? e.message : String(e),
    });
  }
}
