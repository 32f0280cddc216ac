import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AT_BASELINE_FLAG,
  CREDIT_FLAG,
  detectAtBaseline,
  detectCreditCliff,
  flagAtBaseline,
  flagCreditCliffs,
  formatAtBaselineNote,
  formatCreditFlag,
} from '../../core/credit.js';
import type { SampleRecord } from '../../core/sample-record.js';
import { median } from '../../core/stats.js';

const G = 1e9;
const fill = (n: number, v: number) => Array.from({ length: n }, () => v);

describe('detectCreditCliff', () => {
  it('flags the seed pattern: 16 s at ~10 Gbps, then a one-interval drop to 0.77 Gbps that stays', () => {
    const series = [...fill(16, 9.8 * G), ...fill(14, 0.77 * G)];
    const c = detectCreditCliff(series);
    expect(c).toEqual({ firstLowIndex: 16, before: 9.8 * G, after: 0.77 * G });
  });

  it('flags a cliff with a half-way transition interval at that interval', () => {
    const series = [972, 951, 963, 952, 960, 382, 195, 186, 195, 196, 185, 196];
    expect(detectCreditCliff(series)).toEqual({ firstLowIndex: 5, before: 960, after: 195 });
  });

  it('does not flag a steady series with ordinary noise', () => {
    expect(detectCreditCliff([9.7, 10.1, 9.9, 10.0, 9.6, 10.2, 9.8, 9.9, 10.0, 9.7])).toBeUndefined();
  });

  it('ignores TCP slow start in interval 0', () => {
    expect(detectCreditCliff([1.2, 9.9, 10, 10, 9.8, 10, 10, 9.9, 10, 10])).toBeUndefined();
  });

  it('ignores a single noisy second (and two)', () => {
    expect(detectCreditCliff([10, 10, 10, 10, 1, 10, 10, 10, 10, 10])).toBeUndefined();
    expect(detectCreditCliff([10, 10, 10, 10, 1, 1, 10, 10, 10, 10])).toBeUndefined();
  });

  it('does not flag a gradual decline', () => {
    expect(detectCreditCliff([10, 9, 8, 7, 6, 5, 4, 3, 2, 1])).toBeUndefined();
    expect(detectCreditCliff(Array.from({ length: 30 }, (_, i) => 10 - i * 0.3))).toBeUndefined();
  });

  it('does not flag a drop that recovers (a dip of several seconds in a long run)', () => {
    expect(detectCreditCliff([...fill(8, 10), 1, 1, 1, ...fill(9, 10)])).toBeUndefined();
  });

  it('returns undefined for series too short to judge', () => {
    expect(detectCreditCliff([])).toBeUndefined();
    expect(detectCreditCliff([10, 10, 10, 1, 1])).toBeUndefined();
  });

  it('needs three low intervals in a row, and reports an early cliff where it happened', () => {
    expect(detectCreditCliff([10, 10, 10, 1, 1, 1])).toEqual({ firstLowIndex: 3, before: 10, after: 1 });
    expect(detectCreditCliff([10, 10, 10, 1, 1, 10])).toBeUndefined();
    expect(detectCreditCliff([10, 10, 1, 1, 1, 1])).toEqual({ firstLowIndex: 2, before: 10, after: 1 });
  });

  it('rejects non-finite values', () => {
    expect(() => detectCreditCliff([1, Number.NaN, 3, 4, 5, 6])).toThrow(/finite/);
  });
});

/**
 * The rule as the module header states it, as a plain scan: a median of every prefix and every
 * remainder (O(n² log n)). The detector must give exactly its answers.
 */
function plainScan(series: number[]) {
  const n = series.length;
  if (n < 6) return undefined;
  for (let k = 3; k + 3 <= n; k++) {
    const before = median(series.slice(0, k));
    if (before <= 0) continue;
    const low = 0.5 * before;
    if (!(series[k] < low)) continue;
    if (!series.slice(Math.max(0, k - 2), k).some((v) => v >= 0.8 * before)) continue;
    if (!series.slice(k, k + 3).every((v) => v < low)) continue;
    const rest = series.slice(k);
    if (!(median(rest) < low)) continue;
    if (rest.filter((v) => v >= low).length > 0.2 * rest.length) continue;
    let first = k;
    while (first > 1 && series[first - 1] < low) first--;
    return { firstLowIndex: first, before: median(series.slice(0, first)), after: median(series.slice(first)) };
  }
  return undefined;
}

describe('detectCreditCliff against the plain scan of its rule', () => {
  // Levels with ties, zeros, negatives, plateaus and drops: every branch of the rule is reached.
  const level = fc.oneof(fc.constantFrom(0, 1, 2, 5, 9.8, 10, -1), fc.double({ min: -5, max: 20, noNaN: true }));
  const plateaus = fc
    .array(fc.tuple(level, fc.integer({ min: 1, max: 12 }), fc.double({ min: 0, max: 0.3, noNaN: true })), {
      maxLength: 8,
    })
    .chain((parts) =>
      fc.tuple(
        fc.constant(parts),
        fc.array(fc.double({ min: -1, max: 1, noNaN: true }), {
          minLength: parts.reduce((a, [, len]) => a + len, 0),
          maxLength: parts.reduce((a, [, len]) => a + len, 0),
        }),
      ),
    )
    .map(([parts, noise]) => {
      const out: number[] = [];
      for (const [v, len, spread] of parts) for (let i = 0; i < len; i++) out.push(v + spread * noise[out.length]);
      return out;
    });

  it('gives the same answer on any series of plateaus, drops and noise', () => {
    fc.assert(
      fc.property(plateaus, (series) => {
        expect(detectCreditCliff(series)).toEqual(plainScan(series));
      }),
      { numRuns: 2000 },
    );
  });

  it('gives the same answer on short series of a few values (ties everywhere)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(0, 1, 4, 5, 10), { maxLength: 14 }), (series) => {
        expect(detectCreditCliff(series)).toEqual(plainScan(series));
      }),
      { numRuns: 3000 },
    );
  });

  // An hour of 0.1 s iperf3 intervals. The plain scan took 158 s on such a trial (it runs twice
  // per trial in CollectOutput); the detector takes well under a second, so these finish far
  // inside the unit suite's 30 s test timeout. Answers checked against values worked out by hand.
  it('handles a 36,000-interval trial without a cliff, with one, and with a dip every second', () => {
    const steady = Array.from({ length: 36_000 }, (_, i) => 9.8 * G + (i % 7) * 1e6);
    expect(detectCreditCliff(steady)).toBeUndefined();
    const cliff = [...fill(20_000, 9.8 * G), ...fill(16_000, 0.77 * G)];
    expect(detectCreditCliff(cliff)).toEqual({ firstLowIndex: 20_000, before: 9.8 * G, after: 0.77 * G });
    // 10 high, 3 low, repeated: every drop passes the local tests and fails only on the remainder.
    const dips = Array.from({ length: 36_000 }, (_, i) => (i % 13 < 10 ? 10 : 1));
    expect(detectCreditCliff(dips)).toBeUndefined();
  });
});

describe('flagCreditCliffs', () => {
  const rec = (trial: number, seq: number, value: number | null, metric = 'throughput_bps'): SampleRecord => ({
    run_id: 'r',
    path_id: 'p',
    probe: 'iperf3-tcp',
    kind: 'iperf3',
    trial,
    seq,
    t_start: seq * 1000,
    t_end: seq * 1000 + 1000,
    metric,
    value,
    unit: 'bit/s',
    ok: value !== null,
  });

  it('flags throughput records from the first low interval of the affected trial only', () => {
    const cliff = [...fill(16, 9.8 * G), ...fill(6, 0.77 * G)];
    const records = [
      ...cliff.map((v, i) => rec(1, i, v)),
      ...cliff.map((_, i) => rec(1, i, 3, 'retransmits')),
      ...fill(22, 9.8 * G).map((v, i) => rec(2, i, v)),
      rec(3, 0, null),
    ];
    const cliffs = flagCreditCliffs(records);
    expect(cliffs).toEqual([{ probe: 'iperf3-tcp', trial: 1, firstLowIndex: 16, before: 9.8 * G, after: 0.77 * G }]);
    const flagged = records.filter((r) => r.flag === CREDIT_FLAG);
    expect(flagged.map((r) => [r.trial, r.seq, r.metric])).toEqual(
      Array.from({ length: 6 }, (_, i) => [1, 16 + i, 'throughput_bps']),
    );
    expect(formatCreditFlag(cliffs[0])).toBe('credit-exhausted(trial 1 @ interval 16: 9.8G→0.77G)');
    // Idempotent: a second pass finds the same and flags nothing new.
    expect(flagCreditCliffs(records)).toEqual(cliffs);
    expect(records.filter((r) => r.flag === CREDIT_FLAG)).toHaveLength(6);
  });
});

describe('detectAtBaseline', () => {
  // c6i.large: baseline 0.781 Gbit/s, peak 12.5 Gbit/s (EC2 DescribeInstanceTypes).
  const c6i = { baselineBps: 0.781 * G, peakBps: 12.5 * G };

  it('flags the seed symptom: a later path reading 0.77 Gbit/s from its first interval', () => {
    const series = [0.74, 0.77, 0.77, 0.78, 0.77, 0.76, 0.77, 0.77, 0.77, 0.77].map((g) => g * G);
    expect(detectAtBaseline(series, c6i)).toEqual({ median: 0.77 * G, head: 0.77 * G });
  });

  it('does not flag a trial above the baseline (the burst rate, or anywhere between)', () => {
    expect(detectAtBaseline(fill(10, 9.8 * G), c6i)).toBeUndefined();
    expect(detectAtBaseline(fill(10, 0.9 * G), c6i)).toBeUndefined();
    // just outside ±5 %: 0.83 is +6.3 %, 0.74 is −5.3 %
    expect(detectAtBaseline(fill(10, 0.83 * G), c6i)).toBeUndefined();
    expect(detectAtBaseline(fill(10, 0.74 * G), c6i)).toBeUndefined();
    // well below the baseline is a slow path, not a plateau
    expect(detectAtBaseline(fill(10, 0.3 * G), c6i)).toBeUndefined();
  });

  it('does not flag a cliff down to the baseline: its first intervals are high', () => {
    // even when most of the trial sits at the baseline (whole median 0.77 G)
    const series = [...fill(4, 9.8 * G), ...fill(16, 0.77 * G)];
    expect(detectAtBaseline(series, c6i)).toBeUndefined();
    expect(detectCreditCliff(series)).toMatchObject({ firstLowIndex: 4 });
  });

  it('does not flag a trial that starts at the baseline and climbs back to the burst rate', () => {
    expect(detectAtBaseline([...fill(3, 0.77 * G), ...fill(7, 9.8 * G)], c6i)).toBeUndefined();
  });

  it('ignores a slow-start interval 0', () => {
    expect(detectAtBaseline([0.2 * G, ...fill(9, 0.78 * G)], c6i)).toMatchObject({ median: 0.78 * G });
  });

  it('needs enough intervals', () => {
    expect(detectAtBaseline(fill(5, 0.77 * G), c6i)).toBeUndefined();
    expect(detectAtBaseline(fill(6, 0.77 * G), c6i)).toMatchObject({ median: 0.77 * G });
    expect(detectAtBaseline([], c6i)).toBeUndefined();
  });

  it('needs a known baseline and a peak above it', () => {
    const series = fill(10, 0.77 * G);
    expect(detectAtBaseline(series, undefined)).toBeUndefined();
    expect(detectAtBaseline(series, {})).toBeUndefined();
    expect(detectAtBaseline(series, { peakBps: 12.5 * G })).toBeUndefined();
    expect(detectAtBaseline(series, { baselineBps: 0.781 * G })).toBeUndefined();
    // no burst above the baseline (a large instance type): its only rate is no plateau
    expect(detectAtBaseline(series, { baselineBps: 0.781 * G, peakBps: 0.781 * G })).toBeUndefined();
  });

  it('rejects non-finite values', () => {
    expect(() => detectAtBaseline([1, Number.NaN, 3, 4, 5, 6], c6i)).toThrow(/finite/);
  });
});

describe('flagAtBaseline', () => {
  const rec = (trial: number, seq: number, value: number | null, metric = 'throughput_bps'): SampleRecord => ({
    run_id: 'r',
    path_id: 'p',
    probe: 'iperf3-tcp',
    kind: 'iperf3',
    trial,
    seq,
    t_start: seq * 1000,
    t_end: seq * 1000 + 1000,
    metric,
    value,
    unit: 'bit/s',
    ok: value !== null,
  });
  const lab = { baselineBps: 200e6, peakBps: 1e9 };

  it('flags every throughput interval of the trials at the baseline, after the cliff pass', () => {
    const records = [
      ...fill(8, 195e6).map((v, i) => rec(1, i, v)), // at the baseline from the start
      ...fill(8, 195e6).map((_, i) => rec(1, i, 2, 'retransmits')),
      ...[...fill(5, 960e6), ...fill(7, 195e6)].map((v, i) => rec(2, i, v)), // a cliff down to it
      ...fill(8, 960e6).map((v, i) => rec(3, i, v)), // bursting
      rec(4, 0, null),
    ];
    expect(flagCreditCliffs(records)).toMatchObject([{ trial: 2, firstLowIndex: 5 }]);
    const found = flagAtBaseline(records, lab);
    expect(found).toEqual([{ probe: 'iperf3-tcp', trial: 1, median: 195e6, baselineBps: 200e6, intervals: 8 }]);
    expect(records.filter((r) => r.flag === AT_BASELINE_FLAG).map((r) => [r.trial, r.seq, r.metric])).toEqual(
      Array.from({ length: 8 }, (_, i) => [1, i, 'throughput_bps']),
    );
    // the cliff trial keeps its own flag only
    expect(new Set(records.filter((r) => r.trial === 2).map((r) => r.flag))).toEqual(new Set([undefined, CREDIT_FLAG]));
    // idempotent
    expect(flagAtBaseline(records, lab)).toEqual(found);
    expect(formatAtBaselineNote(found[0], lab.peakBps)).toBe(
      "iperf3-tcp trial 1 sat at the client's baseline bandwidth from its first interval (median 0.20G over 8 intervals, baseline 0.20G, peak 1.0G): the burst credits were spent, it measured the instance, not the path",
    );
  });

  it('flags nothing without a baseline', () => {
    const records = fill(8, 195e6).map((v, i) => rec(1, i, v));
    expect(flagAtBaseline(records, undefined)).toEqual([]);
    expect(records.some((r) => r.flag !== undefined)).toBe(false);
  });
});
