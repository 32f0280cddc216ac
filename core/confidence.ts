/**
 * How sure a percentile is: the distribution-free 95 % order-statistic interval for a
 * nearest-rank percentile, the samples beyond each percentile (thin-tail flags), the interval
 * of a difference of two independent percentiles with its verdict, and the trial-to-trial
 * spread. Pure arithmetic; the values at the interval's ranks come from SQL
 * (queries/percentile_windows.sql, the values within rankWindow of each percentile) or from a
 * sorted array (valueAtRank).
 *
 * Hand-written binomial: no statistics library is installed, and the rank choice must be exact
 * (a library's floating CDF or normal approximation can move a rank by one).
 */
import type { DiffCell } from './run-summary.js';
import { nearestRankIndex } from './stats.js';

/** The confidence level of every interval here. */
export const CONFIDENCE = 0.95;

/** The percentiles that carry an interval (per-mille, as in stats.ts). */
export const INTERVAL_PERCENTILES = [
  { column: 'p50', perMille: 500 },
  { column: 'p95', perMille: 950 },
  { column: 'p99', perMille: 990 },
] as const;
export type IntervalColumn = (typeof INTERVAL_PERCENTILES)[number]['column'];

/** A thin tail: fewer samples than this beyond the percentile (p99 below 1,000 samples, p99.9 below 10,000). */
export const THIN_TAIL_SAMPLES = 10;

/** A p50 from fewer samples than this is flagged (`few-samples:p50`) and never judged. */
export const FEW_SAMPLES_P50 = 6;

/**
 * The probabilities of Binomial(n, p) over the window [start, start + pmf.length − 1] that holds
 * all its mass but less than ~1e-15. Computed by the pmf ratio recurrence from the mode outward,
 * stopping where a term falls below 1e-18 of the mode's, then normalised: exact to rounding for
 * every n, with no factorials or log-gamma, in O(√n) terms (about 18 standard deviations).
 */
export function binomialWindow(n: number, p: number): { start: number; pmf: Float64Array } {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`n must be a non-negative integer, got ${n}`);
  if (!(p > 0 && p < 1)) throw new RangeError(`p must lie strictly between 0 and 1, got ${p}`);
  const mode = Math.min(n, Math.floor((n + 1) * p));
  const odds = p / (1 - p);
  const up: number[] = [];
  for (let k = mode, w = 1; k < n; k++) {
    w *= ((n - k) / (k + 1)) * odds;
    if (w < 1e-18) break;
    up.push(w);
  }
  const down: number[] = [];
  for (let k = mode, w = 1; k > 0; k--) {
    w *= k / (n - k + 1) / odds;
    if (w < 1e-18) break;
    down.push(w);
  }
  const pmf = new Float64Array(down.length + 1 + up.length);
  for (let i = 0; i < down.length; i++) pmf[down.length - 1 - i] = down[i];
  pmf[down.length] = 1;
  for (let i = 0; i < up.length; i++) pmf[down.length + 1 + i] = up[i];
  let total = 0;
  for (const w of pmf) total += w;
  for (let i = 0; i < pmf.length; i++) pmf[i] /= total;
  return { start: mode - down.length, pmf };
}

/** 1-based ranks of a percentile's interval: [value at lo, value at hi] covers it with `coverage`. */
export interface RankInterval {
  /** The nearest rank of the percentile itself. */
  rank: number;
  lo: number;
  hi: number;
  /**
   * P(X(lo) ≤ true percentile ≤ X(hi)) for any continuous distribution. At least CONFIDENCE
   * unless the sample is too small for a 95 % interval; then [lo, hi] is the widest the data
   * allow (down to the minimum or up to the maximum) and the coverage says how far it falls short.
   */
  coverage: number;
}

/**
 * The distribution-free 95 % interval for the nearest-rank percentile at `perMille` of n
 * samples: order statistics X(lo) ≤ X(hi) such that the number B of samples at or below the true
 * percentile, B ~ Binomial(n, p), satisfies lo ≤ B ≤ hi − 1 with probability ≥ 0.95. Among the
 * rank pairs that reach 0.95 the one closest to 0.95 is taken (so the interval is not wider than
 * it must be), preferring pairs whose tails are each at most 3 %, then the most balanced pair.
 * Null when n is 0.
 */
export function percentileRanks(n: number, perMille: number): RankInterval | null {
  const rank = nearestRankIndex(n, perMille);
  if (n === 0) return null;
  if (perMille >= 1000) return { rank, lo: n, hi: n, coverage: 0 };
  const { start, pmf } = binomialWindow(n, perMille / 1000);
  // cdf[k - start] = P(B ≤ k) for k in the window; below it 0, above it 1.
  const cdf = new Float64Array(pmf.length);
  let acc = 0;
  for (let i = 0; i < pmf.length; i++) {
    acc += pmf[i];
    cdf[i] = Math.min(1, acc);
  }
  const end = start + pmf.length - 1;
  const F = (k: number) => (k < start ? 0 : k >= end ? 1 : cdf[k - start]);
  const coverage = (lo: number, hi: number) => F(hi - 1) - F(lo - 1);

  let best: { lo: number; hi: number; cov: number; balanced: boolean; skew: number } | undefined;
  let hi = rank;
  // Every lo at or below the window's start has the same lower tail (0): start the scan there.
  for (let lo = Math.min(rank, Math.max(1, start)); lo <= rank; lo++) {
    const lowTail = F(lo - 1);
    if (lowTail > 1 - CONFIDENCE) break;
    while (hi <= n && coverage(lo, hi) < CONFIDENCE) hi++;
    if (hi > n) break; // a larger lo only needs a larger hi
    const cov = coverage(lo, hi);
    const highTail = 1 - F(hi - 1);
    const balanced = lowTail <= 0.03 && highTail <= 0.03;
    const skew = Math.abs(lowTail - highTail);
    const better =
      !best ||
      (balanced && !best.balanced) ||
      (balanced === best.balanced &&
        (cov < best.cov - 1e-12 || (Math.abs(cov - best.cov) <= 1e-12 && skew < best.skew)));
    if (better) best = { lo, hi, cov, balanced, skew };
  }
  if (best) return { rank, lo: best.lo, hi: best.hi, coverage: best.cov };

  // Too few samples for 95 %: each end as far as it may go with a tail of at most 2.5 %, clamped
  // to the minimum and maximum (and never past the percentile's own rank).
  let lo = 1;
  for (let k = Math.max(1, start); k <= rank; k++) if (F(k - 1) <= (1 - CONFIDENCE) / 2) lo = k;
  let up = n;
  for (let k = n; k >= rank; k--) if (1 - F(k - 1) <= (1 - CONFIDENCE) / 2) up = k;
  lo = Math.min(lo, rank);
  up = Math.max(up, rank);
  return { rank, lo, hi: up, coverage: coverage(lo, up) };
}

/**
 * Half-width of the window of ranks around a percentile's nearest rank that
 * queries/percentile_windows.sql returns: ceil(sqrt(9·n·k·(1000 − k) / 10^6)) + 3 (three binomial
 * standard deviations plus three), the same IEEE operations in the same order as the SQL.
 * percentileRanks and spreadRanks stay inside it (checked for every n up to 20,000 and a grid to
 * 2·10^8 by test/core/confidence.test.ts).
 */
export function rankWindow(n: number, perMille: number): number {
  return Math.ceil(Math.sqrt((9 * n * perMille * (1000 - perMille)) / 1_000_000)) + 3;
}

/** Every integer rank a percentile's interval and spread read (distinct, ascending); none for n = 0. */
export function neededRanks(n: number, perMille: number): number[] {
  const ci = percentileRanks(n, perMille);
  const spread = spreadRanks(n, perMille);
  if (!ci || !spread) return [];
  const set = new Set([ci.rank, ci.lo, ci.hi, ...neighbourRanks(spread.lo), ...neighbourRanks(spread.hi)]);
  return [...set].sort((a, b) => a - b);
}

/** The value at a 1-based rank of ascending-sorted values. */
export function valueAtRank(sorted: ArrayLike<number>, rank: number): number {
  if (!Number.isInteger(rank) || rank < 1 || rank > sorted.length)
    throw new RangeError(`rank ${rank} is outside 1..${sorted.length}`);
  return sorted[rank - 1];
}

/** How many samples lie beyond each percentile (after its nearest rank): n − rank. */
export function tailCounts(n: number): { p50: number; p95: number; p99: number; p999: number } {
  return {
    p50: n - nearestRankIndex(n, 500),
    p95: n - nearestRankIndex(n, 950),
    p99: n - nearestRankIndex(n, 990),
    p999: n - nearestRankIndex(n, 999),
  };
}

/**
 * `thin-tail:p99` / `thin-tail:p999` where fewer than THIN_TAIL_SAMPLES samples lie beyond, and
 * `few-samples:p50` under FEW_SAMPLES_P50 samples (none for n = 0).
 */
export function thinTailFlags(n: number): string[] {
  if (n === 0) return [];
  const tail = tailCounts(n);
  const flags: string[] = [];
  if (tail.p99 < THIN_TAIL_SAMPLES) flags.push('thin-tail:p99');
  if (tail.p999 < THIN_TAIL_SAMPLES) flags.push('thin-tail:p999');
  if (n < FEW_SAMPLES_P50) flags.push('few-samples:p50');
  return flags;
}

/** The two-sided 95 % standard normal quantile. */
export const Z95 = 1.959963984540054;

/**
 * Fractional ranks r ± Z95·√(n·p·(1 − p)) around the nearest rank r, clamped to 1..n: where a
 * percentile's own sampling spread reaches, for differenceInterval. Not the reported ci95 (that
 * is percentileRanks, exact): the exact intervals are conservative by up to a rank on each side,
 * and in a difference that slack compounds (97.7–98.5 % coverage for p99 at n = 300 in
 * simulation, test/core/confidence.test.ts); these fractional ranks, read by linear
 * interpolation between neighbouring order statistics, keep the difference near 95 %.
 */
export function spreadRanks(n: number, perMille: number): { lo: number; hi: number } | null {
  const rank = nearestRankIndex(n, perMille);
  if (n === 0) return null;
  const p = perMille / 1000;
  const half = Z95 * Math.sqrt(n * p * (1 - p));
  return { lo: Math.max(1, rank - half), hi: Math.min(n, rank + half) };
}

/** The integer ranks whose values a fractional rank is interpolated from (floor and ceiling). */
export function neighbourRanks(x: number): number[] {
  return Math.floor(x) === Math.ceil(x) ? [x] : [Math.floor(x), Math.ceil(x)];
}

/** The value at a fractional rank, interpolated linearly between the order statistics next to it. */
export function interpolateAt(valueAt: (rank: number) => number, x: number): number {
  const f = Math.floor(x);
  const c = Math.ceil(x);
  const low = valueAt(f);
  return f === c ? low : low + (x - f) * (valueAt(c) - low);
}

/** A percentile with the bounds of its sampling spread (spreadRanks' interpolated values). */
export interface Estimate {
  value: number;
  lo: number;
  hi: number;
}

/**
 * The resolution time figures are read to: kernel tcpi_rtt, ping and the helpers' logs print
 * whole microseconds, so no percentile of a time metric is known better than ± half of one.
 */
export const TIME_RESOLUTION_US = 1;

/**
 * A percentile's spread at least ± half the metric's resolution (time metrics: TIME_RESOLUTION_US;
 * others as they are). Without it, µs-quantized samples that all read the same value around a
 * percentile give its difference with another a zero-width interval and no verdict, however
 * far apart the two figures are.
 */
export function atResolution(e: Estimate, unit: string): Estimate {
  const r = microsecondsIn(TIME_RESOLUTION_US, unit);
  if (r === null) return e;
  return { value: e.value, lo: Math.min(e.lo, e.value - r / 2), hi: Math.max(e.hi, e.value + r / 2) };
}

/**
 * A percentile's estimate for comparisons: its value, and the spread around it read at the
 * fractional ranks `spread` (interpolateAt), at least ± half the metric's resolution (atResolution).
 */
export function spreadEstimate(
  value: number,
  valueAt: (rank: number) => number,
  spread: { lo: number; hi: number },
  unit: string,
): Estimate {
  return atResolution({ value, lo: interpolateAt(valueAt, spread.lo), hi: interpolateAt(valueAt, spread.hi) }, unit);
}

/**
 * The 95 % interval of a − b for two independent percentiles, by the method of variance
 * estimates recovery (MOVER, Zou & Donner 2008): each side's distance from its estimate to its
 * 95 % bound stands in for its standard error, so skewed (tail) percentiles stay skewed.
 */
export function differenceInterval(a: Estimate, b: Estimate): [number, number] {
  const d = a.value - b.value;
  const lo = d - Math.hypot(a.value - a.lo, b.hi - b.value);
  const hi = d + Math.hypot(a.hi - a.value, b.value - b.lo);
  return [lo, hi];
}

/**
 * The 95 % interval of a / b for two independent positive percentiles: the MOVER difference
 * interval of their logarithms, exponentiated (a ratio's interval is skewed the way its
 * figures are). Undefined when a figure or a bound is not positive (no logarithm).
 */
export function ratioInterval(a: Estimate, b: Estimate): [number, number] | undefined {
  if (!(a.lo > 0 && b.lo > 0 && a.value > 0 && b.value > 0)) return undefined;
  const log = (e: Estimate): Estimate => ({ value: Math.log(e.value), lo: Math.log(e.lo), hi: Math.log(e.hi) });
  const [lo, hi] = differenceInterval(log(a), log(b));
  return [Math.exp(lo), Math.exp(hi)];
}

/**
 * The verdict on a ratio a / b at `column` (a and b of one path, `na` and `nb` samples): as for
 * a difference, with the interval [lo, hi] around 1 instead of 0 and the noise (the probes' own
 * cost) taken on a − b.
 */
export function judgeRatio(
  column: IntervalColumn,
  na: number,
  nb: number,
  a: number,
  b: number,
  ci: readonly [number, number],
  noise: number,
  higherIsBetter: boolean,
): { verdict: Verdict; why?: string } {
  return judgeDifference(column, na, nb, a - b, [(ci[0] - 1) * b, (ci[1] - 1) * b], noise, higherIsBetter);
}

export type Verdict = DiffCell['verdict'];

/**
 * `no clear difference` when the interval contains 0 or |diff| is within `noise` (the probes'
 * own cost in the metric's unit); otherwise `slower` when the path's figure is worse than the
 * baseline's (larger, or smaller where higher is better) and `faster` when it is better.
 */
export function verdictOf(
  diff: number,
  ci: readonly [number, number],
  noise: number,
  higherIsBetter: boolean,
): Verdict {
  if ((ci[0] <= 0 && ci[1] >= 0) || Math.abs(diff) <= noise) return 'no clear difference';
  return diff > 0 === higherIsBetter ? 'faster' : 'slower';
}

/**
 * Why a difference at `column` between two results of `na` and `nb` samples gets no verdict, or
 * undefined when it can have one: a p50 from fewer than FEW_SAMPLES_P50 samples, a p95/p99 with
 * fewer than THIN_TAIL_SAMPLES samples beyond it, or an interval of zero width (no sample spread
 * around the percentile to measure the difference against).
 */
export function noVerdictReason(
  column: IntervalColumn,
  na: number,
  nb: number,
  ci: readonly [number, number],
): string | undefined {
  const n = Math.min(na, nb);
  if (column === 'p50' && n < FEW_SAMPLES_P50) return `p50 of ${n} samples, under ${FEW_SAMPLES_P50}`;
  const beyond = column === 'p50' ? Number.POSITIVE_INFINITY : tailCounts(n)[column];
  if (beyond < THIN_TAIL_SAMPLES) return `thin tail, ${beyond} sample${beyond === 1 ? '' : 's'} beyond ${column}`;
  if (!(ci[1] > ci[0])) return 'zero-width interval';
  return undefined;
}

/** The verdict and, for `no verdict`, why: noVerdictReason first, then verdictOf. */
export function judgeDifference(
  column: IntervalColumn,
  na: number,
  nb: number,
  diff: number,
  ci: readonly [number, number],
  noise: number,
  higherIsBetter: boolean,
): { verdict: Verdict; why?: string } {
  const why = noVerdictReason(column, na, nb, ci);
  return why ? { verdict: 'no verdict', why } : { verdict: verdictOf(diff, ci, noise, higherIsBetter) };
}

/** The metrics where a larger value is better (throughput); for the rest (latency) smaller is better. */
export function higherIsBetter(metric: string): boolean {
  return metric === 'throughput_bps';
}

/** Units of time and their size in microseconds: the metrics the probe overhead applies to. */
const MICROSECONDS_PER_UNIT: Record<string, number> = { us: 1, ms: 1_000, s: 1_000_000 };

/** A duration in microseconds in `unit` (ms, us, s); null for a unit that is not a time. */
export function microsecondsIn(us: number, unit: string): number | null {
  const per = MICROSECONDS_PER_UNIT[unit];
  return per === undefined ? null : us / per;
}

/** Whether a metric's unit makes "faster" and "slower" meaningful: a time or a bit rate. */
export function comparable(unit: string): boolean {
  return unit in MICROSECONDS_PER_UNIT || unit === 'bit/s';
}

/**
 * Trial-to-trial spread of one percentile: how far the highest trial's figure lies above the
 * lowest, in % of the lowest ((max − min) / min × 100, as queries/trial_spread.sql). Null for
 * fewer than two trials or a lowest figure that is not positive.
 */
export function spreadPct(perTrial: readonly number[]): number | null {
  if (perTrial.length < 2) return null;
  const min = Math.min(...perTrial);
  const max = Math.max(...perTrial);
  if (!(min > 0)) return null;
  return (100 * (max - min)) / min;
}
