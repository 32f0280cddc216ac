/**
 * Walks every comparison of a summary and fails on one that contradicts itself: a path compared
 * with itself, or a faster/slower verdict on a zero-width interval, an interval holding 0, a
 * thin tail or a p50 from too few samples (core/confidence.ts noVerdictReason).
 */
import { expect } from 'vitest';
import { FEW_SAMPLES_P50, THIN_TAIL_SAMPLES, tailCounts } from '../../core/confidence.js';
import type { Summary } from '../../core/run-summary.js';

export function expectHonestComparisons(s: Summary): number {
  let judged = 0;
  const n = (pathId: string, probe: string, metric: string) =>
    s.paths.find((p) => p.id === pathId)?.results.find((r) => r.probe === probe && r.metric === metric)?.n ?? 0;
  for (const c of s.comparisons ?? []) {
    const at = `${c.path} − ${c.baseline} ${c.probe}/${c.metric}`;
    expect(c.path, at).not.toBe(c.baseline);
    const fewest = Math.min(n(c.path, c.probe, c.metric), n(c.baseline, c.probe, c.metric));
    for (const column of ['p50', 'p95', 'p99'] as const) {
      const d = c[column];
      if (d.verdict !== 'faster' && d.verdict !== 'slower') continue;
      judged++;
      expect(d.ci95[1], `${at} ${column}: a verdict on a zero-width interval`).toBeGreaterThan(d.ci95[0]);
      expect(d.ci95[0] > 0 || d.ci95[1] < 0, `${at} ${column}: a verdict on an interval holding 0`).toBe(true);
      if (column === 'p50')
        expect(fewest, `${at} p50 judged from too few samples`).toBeGreaterThanOrEqual(FEW_SAMPLES_P50);
      else
        expect(tailCounts(fewest)[column], `${at} ${column} judged on a thin tail`).toBeGreaterThanOrEqual(
          THIN_TAIL_SAMPLES,
        );
    }
  }
  return judged;
}
