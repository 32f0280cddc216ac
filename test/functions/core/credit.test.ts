import { describe, expect, it } from 'vitest';
import { CREDIT_FLAG, detectCreditCliff, flagCreditCliffs, formatCreditFlag } from '../../../functions/core/credit.js';
import type { SampleRecord } from '../../../functions/core/model.js';

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
