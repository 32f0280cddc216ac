/** The trend's between-run line: the spread of a series' clean runs and the runs a trustworthy figure needs. */
import { describe, expect, it } from 'vitest';
import { betweenRunsLine, type TrendRow } from '../../cli/trend.js';
import { betweenRuns, runsNeeded } from '../../functions/pipeline/regressions.js';

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
