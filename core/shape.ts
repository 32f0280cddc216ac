/**
 * Distribution shape: log-spaced histogram bins, the modes found on them,
 * and whether a distribution's mean lies in a valley between two modes. Pure.
 *
 * Bins are fixed fractions of a decade, the same ones queries/histogram.sql computes: bin i
 * holds the values v > 0 with floor(BINS_PER_DECADE · log10 v) = i, i.e. [10^(i/40), 10^((i+1)/40)),
 * each about 5.9 % wide. Fixed decades (rather than the group's min/max) keep the resolution
 * the same for every path, so one slow outlier cannot squash the body of a distribution into a
 * couple of bins, and the bins of two paths line up.
 *
 * Mode detection (detectModes), stated once:
 *  1. Smooth the counts with a triangular kernel over ±2 bins (weights 1 2 3 2 1, ≈ ±12 %);
 *     bins outside the data count 0.
 *  2. Candidates are the local maxima of the smoothed counts (the first bin of a plateau).
 *  3. Two neighbouring candidates are two modes only if the lowest smoothed count between them
 *     (the valley) is (a) at most VALLEY_RATIO (½) of the lower peak, and (b) below it by at
 *     least Z (3) standard deviations of Poisson counting noise on the smoothed scale
 *     (√(Σw² · (peak + valley))). The weakest failing pair is merged first (its lower peak
 *     dropped), and this repeats until every neighbouring pair passes.
 *  4. The data are split at the valleys; a mode whose part holds less than MIN_SHARE (5 %) of
 *     the samples is dropped the same way, weakest first.
 *  5. Below MIN_SAMPLES (30) binned samples no modes are reported at all (too few to tell).
 * A mode's `at` is the count-weighted geometric mean of the bin centres within ±2 bins of its
 * peak (inside its part); its `share` is its part's fraction of the binned samples.
 */

/** Histogram resolution: bins per decade (queries/histogram.sql uses the same constant). */
export const BINS_PER_DECADE = 40;
/** A valley must be at most this fraction of the lower neighbouring peak (smoothed counts). */
export const VALLEY_RATIO = 0.5;
/** A valley must lie this many noise standard deviations below the lower peak. */
export const NOISE_Z = 3;
/** A mode must hold at least this fraction of the samples. */
export const MIN_SHARE = 0.05;
/** Fewer binned samples than this: no modes reported. */
export const MIN_SAMPLES = 30;

const KERNEL = [1, 2, 3, 2, 1].map((w) => w / 9);
const HALF = (KERNEL.length - 1) / 2;
const KERNEL_SQ = KERNEL.reduce((s, w) => s + w * w, 0);

/** One histogram bin: [lo, hi) and how many samples fall in it. */
export interface Bin {
  lo: number;
  hi: number;
  count: number;
}

/** One mode: where it is (in the metric's unit) and its share of the samples (0–1). */
export interface Mode {
  at: number;
  share: number;
}

/** The bin index of a value (> 0): floor(BINS_PER_DECADE · log10 v). */
export function binIndex(value: number): number {
  return Math.floor(BINS_PER_DECADE * Math.log10(value));
}

/** The edges of bin i. */
export function binEdges(index: number): { lo: number; hi: number } {
  return { lo: 10 ** (index / BINS_PER_DECADE), hi: 10 ** ((index + 1) / BINS_PER_DECADE) };
}

/**
 * Contiguous bins from the lowest to the highest occupied index (empty bins in between
 * included) from sparse (index, count) pairs; [] when there are none.
 */
export function contiguousBins(sparse: readonly { index: number; count: number }[]): Bin[] {
  if (sparse.length === 0) return [];
  const counts = new Map<number, number>();
  for (const s of sparse) counts.set(s.index, (counts.get(s.index) ?? 0) + s.count);
  const idx = [...counts.keys()];
  const first = Math.min(...idx);
  const last = Math.max(...idx);
  const out: Bin[] = [];
  for (let i = first; i <= last; i++) out.push({ ...binEdges(i), count: counts.get(i) ?? 0 });
  return out;
}

/** The histogram of values (those ≤ 0 or not finite left out): contiguous log-spaced bins. */
export function histogram(values: readonly number[]): Bin[] {
  const counts = new Map<number, number>();
  for (const v of values) {
    if (!(v > 0) || !Number.isFinite(v)) continue;
    const i = binIndex(v);
    counts.set(i, (counts.get(i) ?? 0) + 1);
  }
  return contiguousBins([...counts].map(([index, count]) => ({ index, count })));
}

/** What detectModes found: the modes, and the smoothed counts and peak positions behind them. */
export interface ModeAnalysis {
  modes: Mode[];
  /** Index into the bins of each mode's peak. */
  peaks: number[];
  /** Smoothed counts, one per bin. */
  smoothed: number[];
}

function smooth(counts: readonly number[]): number[] {
  return counts.map((_, i) => {
    let s = 0;
    for (let k = -HALF; k <= HALF; k++) s += KERNEL[k + HALF] * (counts[i + k] ?? 0);
    return s;
  });
}

/** Index of the lowest smoothed count strictly between two peaks (the first of equal ones). */
function valleyBetween(s: readonly number[], a: number, b: number): number {
  let v = a + 1;
  for (let i = a + 1; i < b; i++) if (s[i] < s[v]) v = i;
  return v;
}

/** How far a pair of neighbouring peaks is from being two modes (≥ 0: it is; lower: weaker). */
function separation(s: readonly number[], a: number, b: number): number {
  const low = Math.min(s[a], s[b]);
  const valley = s[valleyBetween(s, a, b)];
  const depth = VALLEY_RATIO * low - valley;
  const noise = low - valley - NOISE_Z * Math.sqrt(KERNEL_SQ * (low + valley));
  return Math.min(depth / Math.max(low, 1e-12), noise / Math.max(low, 1e-12));
}

/** Parts of the bins between the valleys of consecutive peaks: [start, end) per peak. */
function parts(s: readonly number[], peaks: readonly number[]): [number, number][] {
  const cuts = peaks.slice(1).map((p, i) => valleyBetween(s, peaks[i], p));
  return peaks.map((_, i) => [i === 0 ? 0 : cuts[i - 1], i === peaks.length - 1 ? s.length : cuts[i]]);
}

/** Modes of contiguous log-spaced bins (method in the module comment); null below MIN_SAMPLES. */
export function detectModes(bins: readonly Bin[]): ModeAnalysis | null {
  const counts = bins.map((b) => b.count);
  const total = counts.reduce((a, c) => a + c, 0);
  if (total < MIN_SAMPLES) return null;
  const s = smooth(counts);
  let peaks: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const left = i === 0 ? 0 : s[i - 1];
    const right = i === s.length - 1 ? 0 : s[i + 1];
    if (s[i] > left && s[i] >= right) peaks.push(i);
  }
  const dropLower = (a: number, b: number) => {
    const lower = s[a] < s[b] ? a : b;
    peaks = peaks.filter((p) => p !== lower);
  };
  // Step 3: merge the weakest failing neighbouring pair until every pair is two modes.
  for (;;) {
    let worst = -1;
    let worstScore = 0;
    for (let i = 0; i + 1 < peaks.length; i++) {
      const score = separation(s, peaks[i], peaks[i + 1]);
      if (score < worstScore) {
        worst = i;
        worstScore = score;
      }
    }
    if (worst < 0) break;
    dropLower(peaks[worst], peaks[worst + 1]);
  }
  // Step 4: drop modes with too small a share, smallest first.
  const shareOf = (range: [number, number]) => {
    let c = 0;
    for (let i = range[0]; i < range[1]; i++) c += counts[i];
    return c / total;
  };
  for (;;) {
    const shares = parts(s, peaks).map(shareOf);
    let smallest = -1;
    for (let i = 0; i < shares.length; i++)
      if (shares[i] < MIN_SHARE && (smallest < 0 || shares[i] < shares[smallest])) smallest = i;
    if (smallest < 0 || peaks.length <= 1) break;
    peaks = peaks.filter((_, i) => i !== smallest);
  }
  const ranges = parts(s, peaks);
  const modes = peaks.map((p, i) => {
    const [start, end] = ranges[i];
    let w = 0;
    let logSum = 0;
    for (let j = Math.max(start, p - HALF); j < Math.min(end, p + HALF + 1); j++) {
      const centre = (Math.log10(bins[j].lo) + Math.log10(bins[j].hi)) / 2;
      w += counts[j];
      logSum += counts[j] * centre;
    }
    const at = w > 0 ? 10 ** (logSum / w) : Math.sqrt(bins[p].lo * bins[p].hi);
    return { at, share: shareOf(ranges[i]) };
  });
  return { modes, peaks, smoothed: s };
}

/**
 * Whether `mean` lies in a valley: between two neighbouring modes, in a bin whose smoothed
 * count is at most VALLEY_RATIO of both modes' peaks (seed 004: the mean describes no sample).
 */
export function meanInValley(bins: readonly Bin[], analysis: ModeAnalysis, mean: number): boolean {
  if (analysis.peaks.length < 2 || !(mean > 0)) return false;
  const i = bins.findIndex((b) => mean >= b.lo && mean < b.hi);
  if (i < 0) return false;
  const right = analysis.peaks.findIndex((p) => p > i);
  if (right <= 0) return false;
  const a = analysis.peaks[right - 1];
  const b = analysis.peaks[right];
  if (a === i) return false;
  const s = analysis.smoothed;
  return s[i] <= VALLEY_RATIO * Math.min(s[a], s[b]);
}

/** Latency metrics: the ones whose distribution gets modes and a histogram in the summary. */
export const LATENCY_METRICS: ReadonlySet<string> = new Set(['connect_rtt_ms', 'http_latency_ms', 'rtt_us']);
