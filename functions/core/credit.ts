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
 */
import type { SampleRecord } from './model.js';
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
 * Find a burst-credit cliff in a per-interval throughput series (rule in the module header).
 * Returns undefined when there is none or the series is too short.
 */
export function detectCreditCliff(series: number[], rule: Partial<CreditRule> = {}): CreditCliff | undefined {
  const r: CreditRule = { ...CREDIT_RULE, ...rule };
  if (series.some((v) => !Number.isFinite(v))) throw new RangeError('credit series must be finite numbers');
  const n = series.length;
  if (n < r.minBefore + r.minLow) return undefined;
  for (let k = r.minBefore; k + r.minLow <= n; k++) {
    const before = median(series.slice(0, k));
    if (before <= 0) continue;
    const low = r.lowRatio * before;
    if (!(series[k] < low)) continue;
    const sharp = series.slice(Math.max(0, k - r.stepWindow), k).some((v) => v >= r.highRatio * before);
    if (!sharp) continue;
    if (!series.slice(k, k + r.minLow).every((v) => v < low)) continue;
    const rest = series.slice(k);
    const after = median(rest);
    if (!(after < low)) continue;
    const recovered = rest.filter((v) => v >= low).length;
    if (recovered > r.maxRecoverFraction * rest.length) continue;
    // The first three before-intervals may already hold low values (a cliff at index 2): walk
    // back so firstLowIndex is where the level actually fell, then re-take both medians.
    let first = k;
    while (first > 1 && series[first - 1] < low) first--;
    if (first === k) return { firstLowIndex: k, before, after };
    return { firstLowIndex: first, before: median(series.slice(0, first)), after: median(series.slice(first)) };
  }
  return undefined;
}

/**
 * Run the detector on every (probe, trial) throughput series in `records` (ok records, in seq
 * order), set `flag: "credit-exhausted"` IN PLACE on the throughput records from the first low
 * interval on, and return the detections (firstLowIndex = that interval's seq). Idempotent.
 */
export function flagCreditCliffs(records: SampleRecord[]): TrialCreditCliff[] {
  const series = new Map<string, SampleRecord[]>();
  for (const rec of records) {
    if (rec.metric !== 'throughput_bps' || !rec.ok || typeof rec.value !== 'number') continue;
    const key = JSON.stringify([rec.probe, rec.trial]);
    const list = series.get(key) ?? [];
    list.push(rec);
    series.set(key, list);
  }
  const cliffs: TrialCreditCliff[] = [];
  for (const list of series.values()) {
    list.sort((a, b) => a.seq - b.seq);
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
