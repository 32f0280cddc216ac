/**
 * Burst-credit cliff detection on a per-interval throughput series (seed 000: ~10 Gbps held for
 * 16 s, then within one interval a drop to ~0.77 Gbps that stays: the instance's network burst
 * credits ran out, so everything measured after that point describes the instance, not the path).
 *
 * The rule (all thresholds are in CREDIT_RULE):
 *  - A candidate cliff is the first interval k whose value is below lowRatio (0.5) × `before`,
 *    where `before` is the MEDIAN of intervals 0..k-1 and k ≥ minBefore (3). The median makes a
 *    TCP slow-start dip in interval 0 (or any single odd second before the cliff) harmless.
 *  - Sustained: intervals k..k+minLow-1 (3 in a row) are all below lowRatio × before, and the
 *    MEDIAN of the whole remainder k..end (`after`) is below lowRatio × before too, and at most
 *    maxRecoverFraction (20 %) of the remainder climbs back to lowRatio × before or above. A single
 *    noisy second therefore never flags.
 *  - Sharp: one of the stepWindow (2) intervals right before k is still at highRatio (0.8) ×
 *    before or above, i.e. the level fell from "high" to "low" within at most two intervals.
 *    A gradual decline (10, 9, 8, … Gbps) never satisfies this and never flags.
 *  - Series shorter than minBefore + minLow (6) intervals are never flagged.
 * firstLowIndex is k, moved back over directly preceding low intervals (a cliff at index 1 or 2
 * is found at k = 3 and reported where it happened); before/after are the medians of the
 * intervals before and from firstLowIndex (same unit as the series).
 *
 * The plateau (`at-baseline`, thresholds in AT_BASELINE_RULE): the seed's later paths had no
 * cliff at all: their credits were already spent, so they read the client's BASELINE bandwidth
 * (0.77 Gbit/s on c6i.large, baseline 0.781) from their first interval. A trial is at baseline when
 *  - the client's baseline and peak are known and the peak is above baseline × (1 + tolerance)
 *    (without a burst above the baseline there is no plateau to fall onto: a trial at the
 *    instance's only rate says nothing about credits);
 *  - it has at least minIntervals (6) intervals, the same minimum as the cliff rule;
 *  - the MEDIAN of its first headIntervals (3) intervals is within ±tolerance (5 %) of the
 *    baseline — it sat there from the start (a median, so a slow-start interval 0 does not
 *    matter) — and so is the median of the whole trial, which is also below the peak;
 *  - it has no burst-credit cliff (a cliff down to the baseline is flagged `credit-exhausted`
 *    from the fall on; its first intervals are high, so the head test fails anyway).
 */
import type { ClientNetwork } from './client-network.js';
import type { SampleRecord } from './sample-record.js';
import { median } from './stats.js';

export const CREDIT_RULE = {
  minBefore: 3,
  minLow: 3,
  lowRatio: 0.5,
  highRatio: 0.8,
  stepWindow: 2,
  maxRecoverFraction: 0.2,
} as const;

export type CreditRule = { -readonly [K in keyof typeof CREDIT_RULE]: number };

export interface CreditCliff {
  firstLowIndex: number;
  before: number;
  after: number;
}

/** A detection tied to one iperf3 trial; firstLowIndex is the interval index (the record's seq). */
export interface TrialCreditCliff extends CreditCliff {
  probe: string;
  trial: number;
}

export const CREDIT_FLAG = 'credit-exhausted';

/**
 * Order statistics over a fixed series: values are inserted by index and the k-th smallest of
 * those inserted, or how many are below a threshold, is read in O(log n) (a Fenwick tree over
 * the series' sorted positions). It lets the detector take the median of every prefix and every
 * remainder in O(n log n) in all, not O(n² log n).
 */
class OrderStats {
  private readonly sorted: number[];
  /** pos[i] = 1-based position of series[i] in `sorted` (ties broken by index, so unique). */
  private readonly pos: Int32Array;
  private readonly tree: Int32Array;
  private readonly top: number;
  size = 0;

  constructor(series: readonly number[]) {
    const n = series.length;
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => series[a] - series[b] || a - b);
    this.sorted = order.map((i) => series[i]);
    this.pos = new Int32Array(n);
    order.forEach((i, p) => {
      this.pos[i] = p + 1;
    });
    this.tree = new Int32Array(n + 1);
    this.top = n === 0 ? 0 : 2 ** Math.floor(Math.log2(n));
  }

  /** Insert the series' value at `index`. */
  add(index: number): void {
    for (let p = this.pos[index]; p < this.tree.length; p += p & -p) this.tree[p]++;
    this.size++;
  }

  /** The k-th smallest inserted value (1-based k ≤ size). */
  kth(k: number): number {
    let at = 0;
    for (let step = this.top; step > 0; step >>= 1) {
      const next = at + step;
      if (next < this.tree.length && this.tree[next] < k) {
        at = next;
        k -= this.tree[next];
      }
    }
    return this.sorted[at];
  }

  /** The median of the inserted values, exactly as stats.ts median() computes it. */
  median(): number {
    const mid = this.size >> 1;
    return this.size % 2 === 1 ? this.kth(mid + 1) : (this.kth(mid) + this.kth(mid + 1)) / 2;
  }

  /** How many inserted values are below `x`. */
  countBelow(x: number): number {
    // Positions 1..p hold exactly the series' values below x (sorted ascending).
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.sorted[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    let count = 0;
    for (let p = lo; p > 0; p -= p & -p) count += this.tree[p];
    return count;
  }
}

/**
 * Find a burst-credit cliff in a per-interval throughput series (rule in the module header).
 * Returns undefined when there is none or the series is too short.
 *
 * The rule reads as a scan over k with the medians of series[0..k-1] and series[k..]; both are
 * taken here for every k in two passes (forwards, then backwards) over one order-statistics tree,
 * and the remainder's count of recovered intervals in the backward pass, so a 36,000-interval
 * trial costs O(n log n) instead of a sort per prefix. The first k passing every test wins, as
 * in the plain scan.
 */
export function detectCreditCliff(series: number[], rule: Partial<CreditRule> = {}): CreditCliff | undefined {
  const r: CreditRule = { ...CREDIT_RULE, ...rule };
  if (series.some((v) => !Number.isFinite(v))) throw new RangeError('credit series must be finite numbers');
  const n = series.length;
  if (n < r.minBefore + r.minLow) return undefined;
  // before[k] = median(series[0..k-1]) for k = 1 … n-1.
  const before = new Float64Array(n);
  const head = new OrderStats(series);
  for (let k = 1; k < n; k++) {
    head.add(k - 1);
    before[k] = head.median();
  }
  // Candidates: every test that needs only `before` and a few neighbouring intervals.
  const candidate = new Uint8Array(n);
  for (let k = r.minBefore; k + r.minLow <= n; k++) {
    const b = before[k];
    if (b <= 0) continue;
    const low = r.lowRatio * b;
    if (!(series[k] < low)) continue;
    let sharp = false;
    for (let i = Math.max(0, k - r.stepWindow); i < k && !sharp; i++) sharp = series[i] >= r.highRatio * b;
    if (!sharp) continue;
    let allLow = true;
    for (let i = k; i < k + r.minLow && allLow; i++) allLow = series[i] < low;
    if (allLow) candidate[k] = 1;
  }
  // after[k] = median(series[k..]) for k = 1 … n-1; the remainder tests for each candidate.
  const after = new Float64Array(n);
  const passes = new Uint8Array(n);
  const tail = new OrderStats(series);
  for (let k = n - 1; k >= 1; k--) {
    tail.add(k);
    after[k] = tail.median();
    if (!candidate[k]) continue;
    const low = r.lowRatio * before[k];
    if (!(after[k] < low)) continue;
    const recovered = tail.size - tail.countBelow(low);
    if (recovered > r.maxRecoverFraction * tail.size) continue;
    passes[k] = 1;
  }
  const k = passes.indexOf(1);
  if (k < 0) return undefined;
  // The first three before-intervals may already hold low values (a cliff at index 2): walk
  // back so firstLowIndex is where the level actually fell, with both medians taken there.
  const low = r.lowRatio * before[k];
  let first = k;
  while (first > 1 && series[first - 1] < low) first--;
  return { firstLowIndex: first, before: before[first], after: after[first] };
}

/** The ok throughput records of each (probe, trial), in seq order. */
function throughputSeries(records: SampleRecord[]): SampleRecord[][] {
  const series = new Map<string, SampleRecord[]>();
  for (const rec of records) {
    if (rec.metric !== 'throughput_bps' || !rec.ok || typeof rec.value !== 'number') continue;
    const key = JSON.stringify([rec.probe, rec.trial]);
    const list = series.get(key) ?? [];
    list.push(rec);
    series.set(key, list);
  }
  return [...series.values()].map((list) => list.sort((a, b) => a.seq - b.seq));
}

/**
 * Run the detector on every (probe, trial) throughput series in `records` (ok records, in seq
 * order), set `flag: "credit-exhausted"` IN PLACE on the throughput records from the first low
 * interval on, and return the detections (firstLowIndex = that interval's seq). Idempotent.
 */
export function flagCreditCliffs(records: SampleRecord[]): TrialCreditCliff[] {
  const cliffs: TrialCreditCliff[] = [];
  for (const list of throughputSeries(records)) {
    const found = detectCreditCliff(list.map((x) => x.value as number));
    if (!found) continue;
    const from = list[found.firstLowIndex].seq;
    for (const rec of list) if (rec.seq >= from) rec.flag = CREDIT_FLAG;
    cliffs.push({
      probe: list[0].probe,
      trial: list[0].trial,
      firstLowIndex: from,
      before: found.before,
      after: found.after,
    });
  }
  cliffs.sort((a, b) => a.probe.localeCompare(b.probe) || a.trial - b.trial);
  return cliffs;
}

function gbps(bps: number): string {
  const g = bps / 1e9;
  return `${g >= 1 ? g.toFixed(1) : g.toFixed(2)}G`;
}

/** Human label for the summary, e.g. "credit-exhausted(trial 1 @ interval 16: 9.8G→0.77G)". */
export function formatCreditFlag(
  cliff: Pick<TrialCreditCliff, 'trial' | 'firstLowIndex' | 'before' | 'after'>,
): string {
  return `${CREDIT_FLAG}(trial ${cliff.trial} @ interval ${cliff.firstLowIndex}: ${gbps(cliff.before)}→${gbps(cliff.after)})`;
}

export const AT_BASELINE_RULE = {
  minIntervals: 6,
  headIntervals: 3,
  tolerance: 0.05,
} as const;

export type AtBaselineRule = { -readonly [K in keyof typeof AT_BASELINE_RULE]: number };

export const AT_BASELINE_FLAG = 'at-baseline';

export interface AtBaseline {
  /** Median of the whole trial (the series' unit, bit/s for iperf3). */
  median: number;
  /** Median of the first headIntervals intervals. */
  head: number;
}

/** A plateau tied to one iperf3 trial. */
export interface TrialAtBaseline {
  probe: string;
  trial: number;
  median: number;
  baselineBps: number;
  intervals: number;
}

/**
 * Whether a per-interval throughput series (bit/s) sat at the client's baseline bandwidth from
 * its first intervals (rule in the module header). Returns the medians when it did, undefined
 * when it did not, the series is too short, or the baseline / a peak above it is not known.
 * A cliff is not checked here: flagAtBaseline skips trials that have one.
 */
export function detectAtBaseline(
  series: number[],
  network: Pick<ClientNetwork, 'baselineBps' | 'peakBps'> | undefined,
  rule: Partial<AtBaselineRule> = {},
): AtBaseline | undefined {
  const r: AtBaselineRule = { ...AT_BASELINE_RULE, ...rule };
  if (series.some((v) => !Number.isFinite(v))) throw new RangeError('throughput series must be finite numbers');
  const baseline = network?.baselineBps;
  const peak = network?.peakBps;
  if (!baseline || baseline <= 0 || !peak || !(peak > baseline * (1 + r.tolerance))) return undefined;
  if (series.length < Math.max(r.minIntervals, r.headIntervals)) return undefined;
  const near = (v: number) => Math.abs(v - baseline) <= r.tolerance * baseline;
  const head = median(series.slice(0, r.headIntervals));
  const all = median(series);
  if (!near(head) || !near(all) || !(all < peak)) return undefined;
  return { median: all, head };
}

/**
 * Flag every (probe, trial) throughput series in `records` that sits at the baseline: set
 * `flag: "at-baseline"` IN PLACE on all its ok throughput records and return the detections.
 * A trial that already carries a flag (a credit cliff: run flagCreditCliffs first) is left alone.
 * Idempotent.
 */
export function flagAtBaseline(
  records: SampleRecord[],
  network: Pick<ClientNetwork, 'baselineBps' | 'peakBps'> | undefined,
): TrialAtBaseline[] {
  const found: TrialAtBaseline[] = [];
  const baselineBps = network?.baselineBps;
  if (!baselineBps) return found;
  for (const list of throughputSeries(records)) {
    if (list.some((rec) => rec.flag !== undefined && rec.flag !== null && rec.flag !== AT_BASELINE_FLAG)) continue;
    const hit = detectAtBaseline(
      list.map((x) => x.value as number),
      network,
    );
    if (!hit) continue;
    for (const rec of list) rec.flag = AT_BASELINE_FLAG;
    found.push({ probe: list[0].probe, trial: list[0].trial, median: hit.median, baselineBps, intervals: list.length });
  }
  found.sort((a, b) => a.probe.localeCompare(b.probe) || a.trial - b.trial);
  return found;
}

/** Human note for the path, e.g. "iperf3 trial 2 sat at the client's baseline bandwidth (0.77G, baseline 0.78G, peak 12.5G) …". */
export function formatAtBaselineNote(t: TrialAtBaseline, peakBps?: number): string {
  return (
    `${t.probe} trial ${t.trial} sat at the client's baseline bandwidth from its first interval ` +
    `(median ${gbps(t.median)} over ${t.intervals} intervals, baseline ${gbps(t.baselineBps)}` +
    `${peakBps ? `, peak ${gbps(peakBps)}` : ''}): the burst credits were spent, it measured the instance, not the path`
  );
}
