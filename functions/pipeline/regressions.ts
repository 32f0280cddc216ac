/**
 * Trends and regression detection across the runs of one plan. After each run the summary step
 * stores the run's judged figures as a trend point (`trends/plan=<name>/run=<id>.json`, keys.ts),
 * reads the plan's earlier points and judges each path's p50 / p99 (throughput: p50) against its
 * own past, on a log scale so that one share is one share on every path:
 *
 * - The run's common shift is taken out first: when every path moved together, the client or
 *   its host moved, not a path. It is the plan's reference path's deviation from its usual
 *   (`regression.reference`), else the median deviation of at least three paths. A run whose
 *   shift lies outside the shifts of the plan's earlier runs is said once (`summary.runShifts`).
 * - A path's band is learned from its history: the between-run spread of what is left after each
 *   past run's own shift (K · 1.4826 · MAD), at least the past runs' typical 95 % half-width, the
 *   plan's `minRelative` share and, for time metrics, its `minAbsoluteMs` (its hosts' noise floor).
 *   Fewer than MIN_RUNS clean past runs: not judged.
 * - A figure is flagged only when this run's own 95 % interval lies wholly outside the band, so
 *   neither one noisy run nor one noisy baseline raises an alarm; with `persistence` n, a
 *   regression stands only when the n − 1 runs before were flagged the same way. Improvements
 *   are reported, never alarmed (the publisher counts regressions only).
 * - With `regression.paired`, a path whose http probe also measured the reference's target
 *   (HTTP_PAIR_METRIC, the same moments on the same client) is judged by its difference from it
 *   instead (judgePaired): no run shift is looked for, the common part is out already.
 * - Only runs that measured a path the same way are its history (the trend point's fingerprint
 *   of the path's client, target, routes and probes): an inline plan that shares a scheduled
 *   plan's name does not poison its baseline. A path that failed, a credit-flagged result and a
 *   thin-tailed percentile neither enter a baseline nor are judged.
 *
 * Hand-written median / MAD (a dozen lines): the robust statistics are the measurement here, and
 * no statistics library is installed.
 */
import { createHash } from 'node:crypto';
import { comparable, higherIsBetter } from '../../core/confidence.js';
import { AT_BASELINE_FLAG, CREDIT_FLAG } from '../../core/credit.js';
import { keys } from '../../core/keys.js';
import {
  type RegressionSettings,
  type ResolvedPath,
  type ResolvedPlan,
  readResolvedPlan,
} from '../../core/resolved-plan.js';
import type { Regression, Summary, TrendSeries } from '../../core/run-summary.js';
import { readTrendPoints, type TrendPoint, type TrendResult } from '../../core/trend-point.js';
import { HTTP_PAIR_METRIC } from '../../probes/http/http.schema.js';
import type { Deps } from '../ports.js';

export const REGRESSION_RULE = {
  /** The baseline: the last this many clean runs of the plan. */
  runs: 20,
  /** Fewer clean runs than this: not judged. */
  minRuns: 5,
  /** Band half-width in robust standard deviations (1.4826 · MAD). */
  k: 4,
  /** Runs in a row a regression must be seen before it is reported (the plan's `persistence`). */
  persistence: 1,
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
    ...(settings?.persistence !== undefined ? { persistence: settings.persistence } : {}),
  };
}

/** The percentiles judged for a metric: p50 and p99 of latencies, p50 of throughput; none for the rest. */
export function judgedPercentiles(metric: string, unit: string): Percentile[] {
  if (!comparable(unit)) return [];
  return higherIsBetter(metric) ? ['p50'] : ['p50', 'p99'];
}

/**
 * What a path measures, as a short hash: its client, target, routes and probes. Two runs of a
 * plan name with different fingerprints for a path measured different things there.
 */
export function pathFingerprint(p: ResolvedPath): string {
  const { client, target, routes, probes } = p;
  return createHash('sha256').update(JSON.stringify({ client, target, routes, probes })).digest('hex').slice(0, 16);
}

/**
 * What a whole plan measures, as a short hash: each path as resolved (client, target, routes,
 * probes, reboot, credit wait, mesh round, zones), without labels, the plan's name or its
 * regression settings. Runs of a plan name with another fingerprint are another plan's (an inline
 * plan named like a scheduled one): they neither enter its baseline nor are judged against it.
 */
export function planFingerprint(plan: ResolvedPlan): string {
  const paths = [...plan.paths]
    .map(({ label: _label, ...p }) => p)
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return createHash('sha256').update(JSON.stringify(paths)).digest('hex').slice(0, 16);
}

/** The projection of a summary a trend point stores (with each path's fingerprint when the plan is known). */
export function trendPoint(s: Summary, plan?: ResolvedPlan): TrendPoint | undefined {
  if (!s.planName) return undefined;
  return {
    runId: s.runId,
    planName: s.planName,
    ...(plan ? { planFingerprint: planFingerprint(plan) } : {}),
    ...(s.startedAt ? { startedAt: s.startedAt } : {}),
    ...(s.regressionSettings ? { settings: { ...s.regressionSettings } } : {}),
    ...(s.order ? { order: s.order.mode } : {}),
    paths: s.paths.map((p) => {
      const resolved = plan?.paths.find((x) => x.id === p.id);
      const position = s.order?.paths.indexOf(p.id) ?? -1;
      return {
        id: p.id,
        status: p.status,
        ...(position >= 0 ? { position } : {}),
        ...(resolved ? { fingerprint: pathFingerprint(resolved) } : {}),
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
      };
    }),
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

const findResult = (p: TrendPoint['paths'][number] | undefined, probe: string, metric: string, unit: string) =>
  p?.results.find((r) => r.probe === probe && r.metric === metric && r.unit === unit);

/** Newest first: by start time, then run id (sortable by time when generated). */
function newestFirst(points: readonly TrendPoint[]): TrendPoint[] {
  return [...points].sort(
    (a, b) => (b.startedAt ?? '').localeCompare(a.startedAt ?? '') || b.runId.localeCompare(a.runId),
  );
}

/** One path's figure in one run: value and its own 95 % interval, or why it is left out. */
interface Figure {
  value: number;
  ci95?: [number, number];
}

/** A path's clean figures in the plan's past runs, newest first, each with the past run's index. */
interface PathHistory {
  id: string;
  figures: { run: number; f: Figure }[];
}

/**
 * How a run's common shift acts on its paths. `relative`: on a log scale, one share of every path
 * (a rate, a clock); `additive`: the same milliseconds on every path, as a busy host adds its
 * scheduling delay to every round trip whatever the path's length. The judgement takes the one
 * that leaves the plan's past runs the smaller spread (below).
 */
export type ShiftModel = 'relative' | 'additive';

interface Scale {
  model: ShiftModel;
  to: (v: number) => number;
  from: (x: number) => number;
}
const LOG: Scale = { model: 'relative', to: Math.log, from: Math.exp };
const LINEAR: Scale = { model: 'additive', to: (v) => v, from: (x) => x };

/** What one percentile of one group (probe, metric, unit) of a run comes to, path by path. */
interface GroupJudgement {
  /** The shift model taken, with its judged scale. */
  scale: Scale;
  /** The run's shift in the judged scale (0 when not separable) and whether it was taken out. */
  shift: number;
  separated: boolean;
  /** The spread of the past runs' shifts: [lo, hi] in the judged scale. */
  usual?: [number, number];
  /** The shift and the usual ones as shares (%): of every path, or (additive) of the median path. */
  shiftPct: number;
  usualPct?: [number, number];
  paths: Map<
    string,
    {
      flagged?: 'above' | 'below';
      center: number;
      half: number;
      runs: number;
      value: number;
      ci95: [number, number];
      /** The run's shift as a share of this path's baseline. */
      shiftPct: number;
    }
  >;
}

/** One model's fit of the plan's past runs: each path's center and each run's shift. */
interface Fit {
  center: Map<string, number>;
  pastShift: (number | undefined)[];
  /** The summed robust spread of what is left after them, as shares of each path's figure (comparable across models). */
  spread: number;
}

/**
 * Judge one percentile of one group: each path's figure against its own past, after the run's
 * common shift is taken out. The common shift of a run is the reference path's deviation from
 * its usual (the plan's `regression.reference`), else the median deviation of the paths when
 * there are at least three (with two, which one moved cannot be told); smaller than the plan's
 * floor, it is noise and none is taken out. The shift is a share of every path or the same
 * milliseconds on every path, whichever leaves the past runs' residuals the smaller spread: a
 * busy host adds its delay to every round trip, and read as a share it would move a 0.2 ms path
 * by 30 % and a 3 ms one by 3 %, so the median of three would always be the middle path's own
 * deviation and a change of that path could never be seen. A path's band is its own between-run
 * spread of what is left after the shift (robust: 1.4826 · MAD of its past residuals), at least
 * its runs' own 95 % half-width and the plan's noise floor; a figure is flagged only when its own
 * 95 % interval lies wholly outside the band.
 */
function judgeGroup(
  current: Map<string, Figure>,
  histories: PathHistory[],
  runs: number,
  rule: RegressionRule,
  unit: string,
  reference: string | undefined,
  opts: { scale?: Scale; floorAt?: Map<string, number>; paired?: boolean } = {},
): GroupJudgement {
  const all = [
    ...[...current.values()].flatMap((f) => [f.value, ...(f.ci95 ?? [])]),
    ...histories.flatMap((h) => h.figures.flatMap((x) => [x.f.value, ...(x.f.ci95 ?? [])])),
  ];
  const usable = histories.filter((h) => h.figures.length >= rule.minRuns);
  // A forced scale (paired differences): the common shift is already out, none is looked for.
  const separable = (ids: string[]) => !opts.scale && (reference ? ids.includes(reference) : ids.length >= 3);
  const positive = all.every((v) => v > 0);
  // A shift smaller than the smallest change ever judged is the paths' own noise, not the run
  // moving: taken out, it would move every other path's judgement by a quiet path's jitter (the
  // median of three, one path shifted, is the larger of the other two's noise). Relative: the
  // plan's share; additive: its milliseconds (`minAbsoluteMs`).
  const shiftFloor = (scale: Scale) =>
    scale.model === 'relative' ? Math.log1p(rule.minRelative) : rule.minAbsoluteMs / (MS_PER_UNIT[unit] ?? 1);
  const shiftOf = (scale: Scale, dev: Map<string, number>, floored = true): number | undefined => {
    if (!separable([...dev.keys()])) return undefined;
    const s = reference ? dev.get(reference) : median([...dev.values()]);
    return floored && s !== undefined && Math.abs(s) < shiftFloor(scale) ? 0 : s;
  };
  // `floored` false: every shift taken out, so the two models are compared on how well their
  // shifts explain the past, not on where their floors lie.
  const fitModel = (scale: Scale, floored = true): Fit => {
    const center = new Map(usable.map((h) => [h.id, median(h.figures.map((x) => scale.to(x.f.value)))]));
    // The past runs' own shifts.
    const pastShift: (number | undefined)[] = [];
    for (let run = 0; run < runs; run++) {
      const dev = new Map<string, number>();
      for (const h of usable) {
        const x = h.figures.find((y) => y.run === run);
        if (x) dev.set(h.id, scale.to(x.f.value) - (center.get(h.id) as number));
      }
      pastShift.push(shiftOf(scale, dev, floored));
    }
    let spread = 0;
    for (const h of usable) {
      const m = center.get(h.id) as number;
      const r = h.figures.map((x) => scale.to(x.f.value) - m - (pastShift[x.run] ?? 0));
      const c = scale.from(m);
      spread += scale.model === 'relative' ? mad(r) : c === 0 ? 0 : mad(r) / Math.abs(c);
    }
    return { center, pastShift, spread };
  };
  // Additive only when it explains the past clearly better: with little history both fit alike.
  const additiveFits =
    opts.scale === LINEAR ||
    !positive ||
    (separable(usable.map((h) => h.id)) && fitModel(LINEAR, false).spread < 0.8 * fitModel(LOG, false).spread);
  const scale = opts.scale ?? (additiveFits ? LINEAR : LOG);
  const { center, pastShift } = fitModel(scale);
  const nowDev = new Map<string, number>();
  for (const [id, f] of current) if (center.has(id)) nowDev.set(id, scale.to(f.value) - (center.get(id) as number));
  const nowShift = shiftOf(scale, nowDev);
  const separated = nowShift !== undefined;
  const shift = nowShift ?? 0;
  const shifts = pastShift.filter((x): x is number => x !== undefined);
  // As a share: of every path (relative), or of the median path's figure (additive).
  const typical = median([...center.values()].map(scale.from));
  const pctOf = (x: number, at = typical) =>
    scale.model === 'relative' ? 100 * (Math.exp(x) - 1) : at === 0 ? 0 : (100 * x) / Math.abs(at);
  const out: GroupJudgement = { scale, shift, separated, shiftPct: pctOf(shift), paths: new Map() };
  if (separated && shifts.length >= rule.minRuns) {
    const c = median(shifts);
    const w = Math.max(rule.k * 1.4826 * mad(shifts), floorOf(rule, unit, typical, scale));
    out.usual = [c - w, c + w];
    out.usualPct = [pctOf(c - w), pctOf(c + w)];
  }
  for (const h of usable) {
    const f = current.get(h.id);
    if (!f || (reference !== undefined && h.id === reference && separated)) continue;
    const m = center.get(h.id) as number;
    // What is left of each past run after its shift, when this run's shift is taken out too.
    const res = h.figures.map((x) => scale.to(x.f.value) - m - (separated ? (pastShift[x.run] ?? 0) : 0));
    const rc = median(res);
    const halfWidths = h.figures
      .filter((x) => x.f.ci95)
      .map((x) => (scale.to(x.f.ci95![1]) - scale.to(x.f.ci95![0])) / 2);
    const baseValue = scale.from(m);
    // Paired: the band is the past differences' own spread, which holds each run's sampling
    // noise already, so the figure itself is judged, not its interval; with persistence n, n runs
    // in a row must lie beyond it, so it is k / n robust sds wide (at least the floor).
    const half = opts.paired
      ? Math.max(
          (rule.k / rule.persistence) * 1.4826 * mad(res),
          floorOf(rule, unit, opts.floorAt?.get(h.id) ?? baseValue, scale),
        )
      : Math.max(
          rule.k * 1.4826 * mad(res),
          halfWidths.length ? median(halfWidths) : 0,
          floorOf(rule, unit, opts.floorAt?.get(h.id) ?? baseValue, scale),
        );
    const c = m + shift + rc;
    const ci = f.ci95 ?? [f.value, f.value];
    const [lo, hi] = opts.paired ? [scale.to(f.value), scale.to(f.value)] : [scale.to(ci[0]), scale.to(ci[1])];
    const flagged = lo > c + half ? 'above' : hi < c - half ? 'below' : undefined;
    out.paths.set(h.id, {
      ...(flagged ? { flagged } : {}),
      center: c,
      half,
      runs: h.figures.length,
      value: f.value,
      ci95: ci,
      shiftPct: pctOf(shift, baseValue),
    });
  }
  return out;
}

/**
 * The smallest change ever judged, in the judged scale: the plan's share (`minRelative`) and,
 * for time metrics, its milliseconds (`minAbsoluteMs`), at a figure of `at`.
 */
function floorOf(rule: RegressionRule, unit: string, at: number, scale: Scale): number {
  const perUnit = MS_PER_UNIT[unit];
  const absolute = perUnit ? rule.minAbsoluteMs / perUnit : 0;
  if (scale.model === 'additive') return Math.max(rule.minRelative * Math.abs(at), absolute);
  return Math.max(Math.log1p(rule.minRelative), at > 0 ? Math.log1p(absolute / at) : 0);
}

/**
 * Judge every path's percentiles of `current` against `history` (the plan's other runs, any
 * order). Returns the regressions (and improvements), the trend series of every judged
 * percentile over the last `rule.runs` runs and this one, and the run's shifts where every path
 * moved together. The current run's own settings (its plan's `regression`) apply over `rule`.
 */
export function judge(
  current: TrendPoint,
  history: readonly TrendPoint[],
  baseRule: RegressionRule = REGRESSION_RULE,
  /** Judge this run alone: no look at the runs before for persistence (persistent() itself). */
  alone = false,
): { regressions: Regression[]; trend: TrendSeries[]; runShifts: RunShift[] } {
  const rule = ruleFor(current.settings, baseRule);
  // Only runs before this one (a summary computed again later must not judge against its
  // future), of the same plan, and for each path only runs that measured it the same way.
  const before = (h: TrendPoint) => !current.startedAt || !h.startedAt || h.startedAt < current.startedAt;
  // The same plan: its name, and its fingerprint where both points have one (older points have none).
  const samePlan = (h: TrendPoint) =>
    h.planName === current.planName &&
    (!current.planFingerprint || !h.planFingerprint || h.planFingerprint === current.planFingerprint);
  const past = newestFirst(history.filter((h) => h.runId !== current.runId && samePlan(h) && before(h))).slice(
    0,
    MAX_HISTORY_RUNS,
  );
  const sameMeasurement = (path: TrendPoint['paths'][number], h: TrendPoint) => {
    const hp = h.paths.find((p) => p.id === path.id);
    return hp && (!path.fingerprint || !hp.fingerprint || hp.fingerprint === path.fingerprint) ? hp : undefined;
  };
  const regressions: Regression[] = [];
  const trend: TrendSeries[] = [];
  const runShifts: RunShift[] = [];
  const reference = current.settings?.reference;
  const pairedWith = current.settings?.paired ? reference : undefined;
  for (const group of groupsOf(current)) {
    // A paired probe's reference series is judged only as the other side of its path's difference.
    if (group.metric === HTTP_PAIR_METRIC) continue;
    for (const percentile of judgedPercentiles(group.metric, group.unit)) {
      const figures = new Map<string, Figure>();
      const histories: PathHistory[] = [];
      for (const path of current.paths) {
        const r = findResult(path, group.probe, group.metric, group.unit);
        if (!r) continue;
        if (!exclusion(path, r, percentile)) {
          const value = r[percentile] as number;
          figures.set(path.id, { value, ...(r.ci95?.[percentile] ? { ci95: r.ci95[percentile] } : {}) });
        }
        const h: PathHistory = { id: path.id, figures: [] };
        past.forEach((point, run) => {
          if (h.figures.length >= rule.runs) return;
          const hp = sameMeasurement(path, point);
          const hr = findResult(hp, group.probe, group.metric, group.unit);
          if (!hp || !hr || exclusion(hp, hr, percentile)) return;
          const ci = hr.ci95?.[percentile];
          h.figures.push({ run, f: { value: hr[percentile] as number, ...(ci ? { ci95: ci } : {}) } });
        });
        histories.push(h);
        trend.push(seriesOf(path, group, percentile, past.slice(0, rule.runs), current));
      }
      const g = judgeGroup(figures, histories, past.length, rule, group.unit, reference);
      const paired = pairedWith
        ? judgePaired(current, past, rule, group, percentile, histories, sameMeasurement)
        : undefined;
      const { from } = g.scale;
      if (g.separated && g.usual && g.usualPct && (g.shift < g.usual[0] || g.shift > g.usual[1]))
        runShifts.push({
          ...group,
          percentile,
          shift_pct: g.shiftPct,
          usual_pct: g.usualPct,
          ...(g.scale.model === 'additive' ? { model: 'additive' as const, shift: g.shift } : {}),
          paths: figures.size,
          ...(reference ? { reference } : {}),
        });
      for (const [id, j] of g.paths) {
        if (paired?.paths.has(id)) continue;
        const series = trend.find(
          (t) => t.path === id && t.probe === group.probe && t.metric === group.metric && t.percentile === percentile,
        );
        const band: [number, number] = [from(j.center - j.half), from(j.center + j.half)];
        if (series) series.band = band;
        if (!j.flagged) continue;
        const baseline = from(j.center);
        regressions.push({
          path: id,
          probe: group.probe,
          metric: group.metric,
          unit: group.unit,
          percentile,
          value: j.value,
          ci95: j.ci95,
          baseline,
          band,
          runsInBaseline: j.runs,
          change_pct: baseline === 0 ? 0 : (100 * (j.value - baseline)) / Math.abs(baseline),
          direction: (j.flagged === 'above') === higherIsBetter(group.metric) ? 'improvement' : 'regression',
          ...(g.separated && g.shift !== 0 ? { runShift_pct: j.shiftPct } : {}),
        });
      }
      // Paired paths: judged by their difference from the reference measured in the same probe.
      for (const [id, j] of paired?.paths ?? []) {
        const own = figures.get(id);
        const at = paired?.ownCenter.get(id);
        if (!own || at === undefined) continue;
        // Where the figure would lie had it moved only as the reference did this run.
        const baseline = own.value - (j.value - j.center);
        const band: [number, number] = [baseline - j.half, baseline + j.half];
        const series = trend.find(
          (t) => t.path === id && t.probe === group.probe && t.metric === group.metric && t.percentile === percentile,
        );
        if (series) series.band = band;
        if (!j.flagged) continue;
        regressions.push({
          path: id,
          probe: group.probe,
          metric: group.metric,
          unit: group.unit,
          percentile,
          value: own.value,
          ci95: own.ci95 ?? [own.value, own.value],
          baseline,
          band,
          runsInBaseline: j.runs,
          change_pct: at === 0 ? 0 : (100 * (j.value - j.center)) / Math.abs(at),
          direction: (j.flagged === 'above') === higherIsBetter(group.metric) ? 'improvement' : 'regression',
          pairedWith: pairedWith as string,
        });
      }
    }
  }
  return {
    regressions: alone ? regressions : persistent(regressions, current, past, rule, baseRule),
    trend,
    runShifts,
  };
}

/**
 * The paired judgement of one percentile (the plan's `regression.paired`): for each path whose
 * probe also measured the reference (HTTP_PAIR_METRIC in the same probe), the figure judged is
 * its own minus the reference's, in milliseconds, this run's and each past run's (with a 95 %
 * interval of the two half-widths in quadrature, not used to flag). Both were measured in the same moments on
 * the same client, so what the host did to both is out already: no run shift is looked for.
 * The floors apply at the path's own figure (its median over the past), not at the difference.
 * The band is the past differences' spread: max((k / persistence) · 1.4826 · MAD, the floors),
 * and the figure itself must lie beyond it (not its interval: the between-run spread of the
 * differences is each run's sampling noise and more). Measured on the regressions bench
 * (docs/benchmarks.md): the paired difference's robust sd was 0.6–2.6 % of the path's p50, with
 * heavy-tailed single runs of 8–20 % that did not come two in a row.
 */
function judgePaired(
  current: TrendPoint,
  past: readonly TrendPoint[],
  rule: RegressionRule,
  group: { probe: string; metric: string; unit: string },
  percentile: Percentile,
  ownHistories: PathHistory[],
  sameMeasurement: (path: TrendPoint['paths'][number], h: TrendPoint) => TrendPoint['paths'][number] | undefined,
): (GroupJudgement & { ownCenter: Map<string, number> }) | undefined {
  const diff = (p: TrendPoint['paths'][number] | undefined): Figure | undefined => {
    const both = pairedResults(p, group.probe, group.metric, group.unit, percentile);
    if (!both) return undefined;
    const { value } = both;
    const a = both.r.ci95?.[percentile];
    const b = both.ref.ci95?.[percentile];
    if (!a || !b) return { value };
    const half = Math.hypot((a[1] - a[0]) / 2, (b[1] - b[0]) / 2);
    return { value, ci95: [value - half, value + half] };
  };
  const figures = new Map<string, Figure>();
  const histories: PathHistory[] = [];
  const ownCenter = new Map<string, number>();
  for (const path of current.paths) {
    const now = diff(path);
    if (now) figures.set(path.id, now);
    const h: PathHistory = { id: path.id, figures: [] };
    past.forEach((point, run) => {
      if (h.figures.length >= rule.runs) return;
      const hp = sameMeasurement(path, point);
      const f = hp && diff(hp);
      if (f) h.figures.push({ run, f });
    });
    if (!h.figures.length) continue;
    histories.push(h);
    const own = ownHistories.find((x) => x.id === path.id)?.figures.map((x) => x.f.value) ?? [];
    if (own.length) ownCenter.set(path.id, median(own));
  }
  if (!figures.size) return undefined;
  const g = judgeGroup(figures, histories, past.length, rule, group.unit, undefined, {
    scale: LINEAR,
    floorAt: ownCenter,
    paired: true,
  });
  return { ...g, ownCenter };
}

/** The most past runs read for a judgement (the baseline takes the last `rule.runs` clean ones of each path). */
const MAX_HISTORY_RUNS = 60;

export type RunShift = NonNullable<Summary['runShifts']>[number];

/** The (probe, metric, unit) groups of a run, in the order its first path lists them. */
function groupsOf(p: TrendPoint): { probe: string; metric: string; unit: string }[] {
  const seen = new Map<string, { probe: string; metric: string; unit: string }>();
  for (const path of p.paths)
    for (const r of path.results) {
      const key = `${r.probe}\u0000${r.metric}\u0000${r.unit}`;
      if (!seen.has(key)) seen.set(key, { probe: r.probe, metric: r.metric, unit: r.unit });
    }
  return [...seen.values()];
}

function seriesOf(
  path: TrendPoint['paths'][number],
  group: { probe: string; metric: string; unit: string },
  percentile: Percentile,
  past: readonly TrendPoint[],
  current: TrendPoint,
): TrendSeries {
  return {
    path: path.id,
    ...group,
    percentile,
    points: [...[...past].reverse(), current].map((h) => {
      const hp = h.paths.find((p) => p.id === path.id);
      const hr = findResult(hp, group.probe, group.metric, group.unit);
      const why = hp ? exclusion(hp, hr, percentile) : 'path not in the run';
      return {
        runId: h.runId,
        ...(h.startedAt ? { startedAt: h.startedAt } : {}),
        value: hr?.[percentile] ?? null,
        ...(why ? { excluded: why } : {}),
      };
    }),
  };
}

/**
 * With `persistence` n above 1, a regression stands only when the n − 1 runs before it were
 * flagged the same way too (each judged against its own past); improvements are reported at once.
 */
function persistent(
  found: Regression[],
  current: TrendPoint,
  past: readonly TrendPoint[],
  rule: RegressionRule,
  baseRule: RegressionRule,
): Regression[] {
  const n = rule.persistence;
  if (n <= 1 || !found.some((r) => r.direction === 'regression')) return found;
  const earlier: Regression[][] = [];
  for (let i = 0; i < n - 1 && i < past.length; i++) {
    // The same rule as this run's (its band depends on the persistence), each run judged alone.
    const prev = { ...past[i], settings: { ...current.settings } };
    earlier.push(judge(prev, past.slice(i + 1), baseRule, true).regressions);
  }
  const same = (a: Regression, b: Regression) =>
    a.path === b.path &&
    a.probe === b.probe &&
    a.metric === b.metric &&
    a.percentile === b.percentile &&
    a.direction === b.direction;
  return found.filter(
    (r) =>
      r.direction !== 'regression' || (earlier.length === n - 1 && earlier.every((e) => e.some((x) => same(x, r)))),
  );
}

/** Judge a summary against the stored points of its plan without storing anything (a recomputed report). */
export async function judgeStored(deps: Pick<Deps, 'store'>, summary: Summary): Promise<void> {
  const point = trendPoint(summary, await readResolvedPlan(deps.store, summary.runId));
  if (!point) return;
  applyJudgement(summary, judge(point, await readTrendPoints(deps.store, point.planName)));
}

function applyJudgement(summary: Summary, j: ReturnType<typeof judge>): void {
  summary.regressions = j.regressions;
  if (j.runShifts.length) summary.runShifts = j.runShifts;
  if (j.trend.some((t) => t.points.length > 1)) summary.trend = j.trend;
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
  const point = trendPoint(summary, await readResolvedPlan(deps.store, summary.runId));
  if (!point) return;
  const history = await readTrendPoints(deps.store, point.planName);
  await deps.store.put(keys.trendPoint(point.planName, point.runId), `${JSON.stringify(point)}\n`, 'application/json');
  applyJudgement(summary, judge(point, history, rule));
}

/** One line per regression, for logs, reports and alarms: "C tcp-connect connect_rtt_ms p50 9.91 ms vs 8.90 [8.46, 9.35] over 5 runs (+11.3 %, regression)". */
export function describeRegression(r: Regression): string {
  const f = (v: number) => (r.metric === 'throughput_bps' ? `${(v / 1e9).toFixed(3)}G` : v.toFixed(3));
  const unit = r.metric === 'throughput_bps' ? 'bit/s' : r.unit;
  return `${r.path} ${r.probe} ${r.metric} ${r.percentile} ${f(r.value)} ${unit} vs ${f(r.baseline)} [${f(r.band[0])}, ${f(r.band[1])}] over ${r.runsInBaseline} runs (${r.change_pct > 0 ? '+' : ''}${r.change_pct.toFixed(1)} %, ${r.direction}${r.pairedWith ? `, paired with ${r.pairedWith}` : ''})`;
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

/** How much a figure moves from run to run, from a plan's clean runs (`pathbench trend`, `compare`). */
export interface BetweenRuns {
  /** Clean runs it was read from. */
  runs: number;
  median: number;
  /** Robust standard deviation (1.4826 · MAD) as a share of the median, in %. */
  sd_pct: number;
  /** Where one more clean run's figure falls, 95 %: median ± 1.96 sd. */
  ci95: [number, number];
}

/** The between-run spread of clean figures; undefined below the judgement's minimum of runs. */
export function betweenRuns(
  values: readonly number[],
  rule: RegressionRule = REGRESSION_RULE,
): BetweenRuns | undefined {
  if (values.length < rule.minRuns) return undefined;
  const m = median(values);
  const sd = 1.4826 * mad(values);
  return {
    runs: values.length,
    median: m,
    sd_pct: m === 0 ? 0 : (100 * sd) / Math.abs(m),
    ci95: [m - 1.96 * sd, m + 1.96 * sd],
  };
}

/**
 * Scheduled runs whose mean is within ±`pct` % of the figure's long-run value, 95 % of the time:
 * ⌈(1.96 · sd% / pct)²⌉ (at least 1).
 */
export function runsNeeded(b: BetweenRuns, pct: number): number {
  return Math.max(1, Math.ceil(((1.96 * b.sd_pct) / pct) ** 2));
}

/**
 * A path's result and the reference's measured in the same probe (HTTP_PAIR_METRIC), when both
 * are clean at `percentile`: the two sides of the paired figure (regression.paired).
 */
function pairedResults(
  p: TrendPoint['paths'][number] | undefined,
  probe: string,
  metric: string,
  unit: string,
  percentile: Percentile,
) {
  const r = findResult(p, probe, metric, unit);
  const ref = findResult(p, probe, HTTP_PAIR_METRIC, unit);
  if (!p || !r || !ref || exclusion(p, r, percentile) || exclusion(p, ref, percentile)) return undefined;
  return { r, ref, value: (r[percentile] as number) - (ref[percentile] as number) };
}

/**
 * The clean figures of one path's percentile across trend points (the same rules as a
 * baseline's); with `paired`, the figure less the reference's in the same probe, where both are
 * clean: what judgePaired judges.
 */
export function cleanFigures(
  points: readonly TrendPoint[],
  path: string,
  probe: string,
  metric: string,
  unit: string,
  percentile: Percentile,
  paired = false,
): number[] {
  const out: number[] = [];
  for (const t of points) {
    const p = t.paths.find((x) => x.id === path);
    if (paired) {
      const both = pairedResults(p, probe, metric, unit, percentile);
      if (both) out.push(both.value);
      continue;
    }
    const r = findResult(p, probe, metric, unit);
    if (p && r && !exclusion(p, r, percentile)) out.push(r[percentile] as number);
  }
  return out;
}
