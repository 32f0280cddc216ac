/** The trend's between-run line: the spread of a series' clean runs and the runs a trustworthy figure needs. */
import { describe, expect, it } from 'vitest';
import { betweenRunsLine, positionLine, type TrendRow, trendText } from '../../cli/trend.js';
import { betweenRuns, runsNeeded, trendPoint } from '../../functions/pipeline/regressions.js';

const row = (i: number, value: number | null, excluded?: string): TrendRow => ({
  plan: 'p',
  runId: `run-${i}`,
  path: 'A',
  probe: 'tcp-connect',
  metric: 'connect_rtt_ms',
  unit: 'ms',
  percentile: 'p50',
  value,
  ...(excluded ? { excluded } : {}),
});

describe('between runs', () => {
  it('reads the robust spread of the clean runs and the runs needed for ±5 % and ±1 %', () => {
    const values = [10, 10.2, 9.8, 10.1, 9.9, 10, 10.3, 9.7];
    const b = betweenRuns(values);
    expect(b?.runs).toBe(8);
    expect(b?.median).toBe(10);
    // MAD 0.15 → sd 0.222 → 2.22 %
    expect(b?.sd_pct).toBeCloseTo(2.2239, 3);
    expect(runsNeeded(b!, 5)).toBe(1);
    expect(runsNeeded(b!, 1)).toBe(19);
    const line = betweenRunsLine([...values.map((v, i) => row(i, v)), row(9, 50, 'path failed'), row(10, null)]);
    expect(line).toMatch(
      /^between runs: median 10\.0+, robust sd 2\.2 % over 8 clean runs; .* for ±5 %: 1, for ±1 %: 19$/,
    );
  });

  it('says so when there are too few clean runs', () => {
    expect(betweenRuns([1, 2, 3])).toBeUndefined();
    expect(betweenRunsLine([row(1, 1), row(2, 2)])).toBe('between runs: 2 clean run(s), fewer than 5: no spread yet');
  });
});

describe('position effects', () => {
  it('keeps where each path ran when the plan set an order', () => {
    const point = trendPoint({
      runId: 'run-1',
      status: 'succeeded',
      planName: 'p',
      order: { mode: 'rotated', index: 1, paths: ['B', 'A'] },
      paths: ['A', 'B'].map((id) => ({ id, label: id, status: 'succeeded' as const, steps: [], results: [] })),
    });
    expect(point?.order).toBe('rotated');
    expect(point?.paths.map((p) => [p.id, p.position])).toEqual([
      ['A', 1],
      ['B', 0],
    ]);
    const plain = trendPoint({ runId: 'run-2', status: 'succeeded', planName: 'p', paths: [] });
    expect(plain?.order).toBeUndefined();
  });

  it('reads the same figure by position across runs (median of the clean ones)', () => {
    const at = (i: number, value: number, position: number, excluded?: string) => ({
      ...row(i, value, excluded),
      position,
    });
    const rows = [at(1, 1, 0), at(2, 3, 1), at(3, 1.2, 0), at(4, 2.8, 1), at(5, 2, 1), at(6, 99, 0, 'path failed')];
    expect(positionLine(rows)).toBe('by position run (median of clean runs): 1: 1.100 (2 runs) · 2: 2.800 (3 runs)');
    expect(positionLine([row(1, 1)])).toBeUndefined();
    expect(trendText(rows)).toMatch(/ #2$/m);
    expect(trendText(rows)).toContain('by position run');
  });
});
