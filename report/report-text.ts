/**
 * The run summary as a plain-text table for the console; the same rows as Markdown
 * (report-markdown.ts), CSV (report-csv.ts) and HTML (report-html.ts). Every rendering reads only
 * the summary JSON (functions/pipeline/summary.ts builds it).
 */
import type { Summary } from '../core/run-summary.js';
import { AZ_HEAD, AZ_NOTE, azNumeric, azTableRows } from './report-az.js';
import { LAB_HEAD, LAB_NOTE, labNumeric, labTableRows } from './report-lab.js';
import { meshFitLines, meshMatrix } from './report-mesh.js';
import {
  DIFF_HEAD,
  DIFF_NOTE,
  diffRows,
  HEAD,
  INTERVAL_NOTE,
  overheadLines,
  REGRESSION_HEAD,
  REGRESSION_NOTE,
  regressionRows,
  tableRows,
  trendLine,
} from './report-rows.js';

/** Notes about the run as a whole (e.g. that nothing was measured). */
export function runNotes(s: Summary): string[] {
  return [...(s.notes ?? []), ...(s.runShifts ?? []).map(runShiftNote)];
}

/**
 * "the whole run moved: tcp-connect connect_rtt_ms p50 +31.0 % on 3 paths (earlier runs: −4.0 % to
 * +5.0 %), taken out before each path was judged": said once, not as a change of every path.
 */
export function runShiftNote(r: NonNullable<Summary['runShifts']>[number]): string {
  const signed = (v: number, digits: number) => `${v > 0 ? '+' : v < 0 ? '−' : ''}${Math.abs(v).toFixed(digits)}`;
  const pct = (v: number) => `${signed(v, 1)} %`;
  const from = r.reference ? `read from reference path ${r.reference}` : `the median of ${r.paths} paths`;
  const moved =
    r.model === 'additive' && r.shift !== undefined
      ? `${signed(r.shift, 3)} ${r.unit} on every path (${pct(r.shift_pct)} of the median path)`
      : pct(r.shift_pct);
  return `the whole run moved: ${r.probe} ${r.metric} ${r.percentile} ${moved} (${from}; earlier runs: ${pct(r.usual_pct[0])} to ${pct(r.usual_pct[1])}), taken out before each path was judged`;
}

/** A plain-text table: numeric columns (by index) right-aligned. */
export function textTable(head: string[], rows: string[][], right: (i: number) => boolean): string[] {
  const all = [head, ...rows];
  const widths = head.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (right(i) ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
}

export function renderTable(s: Summary): string {
  const text = textTable(HEAD, tableRows(s), (i) => i >= 3 && i <= 9);
  text.push(INTERVAL_NOTE);
  if (s.mesh) {
    const [head, ...rows] = meshMatrix(s.mesh);
    text.push('', 'mesh pairs (latency p50 / throughput p50):', ...textTable(head, rows, (i) => i > 0));
    text.push(...meshFitLines(s.mesh));
  }
  const az = azTableRows(s);
  if (az.length) text.push('', 'AZ pairs:', ...textTable(AZ_HEAD, az, azNumeric), AZ_NOTE);
  const lab = labTableRows(s);
  if (lab.length) text.push('', 'lab:', ...textTable(LAB_HEAD, lab, labNumeric), LAB_NOTE);
  const diffs = diffRows(s);
  if (diffs.length) text.push('', 'differences:', ...textTable(DIFF_HEAD, diffs, (i) => i >= 3), DIFF_NOTE);
  const regressions = regressionRows(s);
  if (regressions.length)
    text.push('', 'regressions:', ...textTable(REGRESSION_HEAD, regressions, (i) => i >= 4), REGRESSION_NOTE);
  const trend = trendLine(s);
  if (trend) text.push(trend);
  const overhead = s.paths.flatMap((p) => overheadLines(p).map((l) => `  ${p.id}: ${l}`));
  if (overhead.length)
    text.push('', "the probes' own cost (self-calibrated on loopback before each path):", ...overhead);
  const failed = s.paths.filter((p) => p.error);
  for (const p of failed) text.push(`${p.id} failed at ${p.failedStep}: ${p.error}`);
  for (const n of runNotes(s)) text.push(`note: ${n}`);
  for (const p of s.paths) for (const n of p.notes ?? []) text.push(`${p.id} note: ${n}`);
  return `${text.join('\n')}\n`;
}
