/**
 * `pathbench compare RUN_A RUN_B`: the same paths across two runs of a data directory, run B −
 * run A per percentile with the difference's 95 % interval and verdict
 * (cli/compare-runs.ts, the comparisons code of one run's summary).
 */

import { diffText, fmt, unitOf } from '../report/report-rows.js';
import type { RunComparison } from './compare-runs.js';

export const COMPARE_HEAD = ['path', 'probe', 'metric', 'n A / B', 'p50 A → B', 'p50', 'p95', 'p99'];

/** Rows of the comparison table: one per path, probe and metric measured in both runs. */
export function compareRows(c: RunComparison): string[][] {
  return c.diffs.map((d) => [
    d.path,
    d.probe,
    `${d.metric} [${unitOf(d)}]`,
    `${d.a.n} / ${d.b.n}`,
    `${fmt(d.a.p50, d.metric)} → ${fmt(d.b.p50, d.metric)}`,
    diffText(d.p50, d.metric),
    diffText(d.p95, d.metric),
    diffText(d.p99, d.metric),
  ]);
}

/** The comparison as a plain-text table with its notes. */
export function compareText(c: RunComparison): string {
  const head = `run ${c.runB}${c.planB ? ` (${c.planB})` : ''} − run ${c.runA}${c.planA ? ` (${c.planA})` : ''}`;
  const rows = compareRows(c);
  const all = [COMPARE_HEAD, ...rows];
  const widths = COMPARE_HEAD.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((cell, i) => (i >= 3 ? cell.padStart(widths[i]) : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  const out = [head, '', line(COMPARE_HEAD), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
  out.push(
    `${c.runB} − ${c.runA} per percentile (% of ${c.runA}) [95 % interval]; "no clear difference" when the interval contains 0 or the difference is within the probes' own cost; "no verdict" (and why) when too few samples lie around the percentile to judge`,
  );
  const paired = c.diffs.filter((d) => d.paired);
  if (paired.length) {
    out.push(
      '',
      `${c.runB} − ${c.runA} of each paired figure less the reference measured in the same probe (regression.paired: what trend judges; % of ${c.runA}'s figure):`,
    );
    for (const d of paired)
      for (const pct of ['p50', 'p99'] as const)
        out.push(`  ${d.path} ${d.probe} ${d.metric} ${pct}: ${diffText(d.paired![pct], d.metric)}`);
  }
  const spread = c.diffs.filter((d) => d.betweenRuns || d.pairedBetweenRuns);
  if (spread.length) {
    out.push('', `${c.runB} − ${c.runA} against the plan's run-to-run spread (its other clean runs; 95 %):`);
    for (const d of spread)
      for (const [b, cell, what] of [
        [d.betweenRuns, (pct: 'p50' | 'p99') => d[pct], ''],
        [d.pairedBetweenRuns, (pct: 'p50' | 'p99') => d.paired![pct], ' (paired)'],
      ] as const) {
        if (!b) continue;
        for (const pct of ['p50', 'p99'] as const) {
          const iv = b[pct];
          if (!iv) continue;
          const within = iv[0] <= 0 && iv[1] >= 0;
          out.push(
            `  ${d.path} ${d.probe} ${d.metric} ${pct}${what}: ${fmt(cell(pct).diff, d.metric)} [${fmt(iv[0], d.metric)}, ${fmt(iv[1], d.metric)}] over ${b.runs} runs: ${within ? 'within what runs of this plan differ by' : 'beyond it'}`,
          );
        }
      }
  }
  if (c.onlyInA.length) out.push(`only in ${c.runA}: ${c.onlyInA.join(', ')}`);
  if (c.onlyInB.length) out.push(`only in ${c.runB}: ${c.onlyInB.join(', ')}`);
  if (c.planA && c.planB && c.planA !== c.planB)
    out.push(`note: the runs are of different plans (${c.planA}, ${c.planB})`);
  return `${out.join('\n')}\n`;
}
