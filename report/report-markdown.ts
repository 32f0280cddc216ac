/** The run summary as Markdown: the results, mesh, AZ, difference and regression tables, then each path's notes. */
import type { Summary } from '../core/run-summary.js';
import { AZ_HEAD, AZ_NOTE, azNumeric, azTableRows } from './report-az.js';
import { meshFitLines, meshMatrix } from './report-mesh.js';
import {
  DIFF_HEAD,
  DIFF_NOTE,
  diffRows,
  HEAD,
  INTERVAL_NOTE,
  overheadLines,
  RATIO_HEAD,
  RATIO_NOTE,
  REGRESSION_HEAD,
  REGRESSION_NOTE,
  ratioRows,
  regressionRows,
  SELECTION_HEAD,
  SELECTION_NOTE,
  selectionRows,
  tableRows,
  trendLine,
} from './report-rows.js';
import { runNotes } from './report-text.js';

const mdRow = (r: string[]) => `| ${r.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;

export function renderMarkdown(s: Summary): string {
  const rows = tableRows(s);
  const md = [
    `# pathbench run ${s.runId}`,
    '',
    `status: **${s.status}**${s.planName ? ` · plan: ${s.planName}` : ''}${s.startedAt ? ` · started ${s.startedAt}` : ''}`,
    '',
    `| ${HEAD.join(' | ')} |`,
    `|${HEAD.map((_, i) => (i >= 3 && i <= 9 ? '---:' : '---')).join('|')}|`,
    ...rows.map(mdRow),
    '',
    `_${INTERVAL_NOTE}_`,
    '',
    ...runNotes(s).map((n) => `**note:** ${n}\n`),
  ];
  if (s.mesh) {
    const [head, ...rows] = meshMatrix(s.mesh);
    md.push(
      '## Mesh pairs',
      '',
      'Latency p50 / throughput p50, client region (row) to target region (column).',
      '',
      `| ${head.join(' | ')} |`,
      `|${head.map((_, i) => (i > 0 ? '---:' : '---')).join('|')}|`,
      ...rows.map(mdRow),
      '',
      ...meshFitLines(s.mesh).map((l) => `- ${l}`),
      '',
    );
  }
  const az = azTableRows(s);
  if (az.length)
    md.push(
      '## AZ pairs',
      '',
      `| ${AZ_HEAD.join(' | ')} |`,
      `|${AZ_HEAD.map((_, i) => (azNumeric(i) ? '---:' : '---')).join('|')}|`,
      ...az.map(mdRow),
      '',
      `_${AZ_NOTE}_`,
      '',
    );
  const diffs = diffRows(s);
  if (diffs.length)
    md.push(
      '## Differences',
      '',
      `| ${DIFF_HEAD.join(' | ')} |`,
      `|${DIFF_HEAD.map((_, i) => (i >= 3 ? '---:' : '---')).join('|')}|`,
      ...diffs.map(mdRow),
      '',
      `_${DIFF_NOTE}_`,
      '',
    );
  const ratios = ratioRows(s);
  if (ratios.length)
    md.push(
      '## Ratios within a path',
      '',
      `| ${RATIO_HEAD.join(' | ')} |`,
      `|${RATIO_HEAD.map((_, i) => (i >= 3 ? '---:' : '---')).join('|')}|`,
      ...ratios.map(mdRow),
      '',
      `_${RATIO_NOTE}_`,
      '',
    );
  const selection = selectionRows(s);
  if (selection.length)
    md.push(
      '## Selection',
      '',
      `| ${SELECTION_HEAD.join(' | ')} |`,
      `|${SELECTION_HEAD.map((_, i) => (i >= 3 ? '---:' : '---')).join('|')}|`,
      ...selection.map(mdRow),
      '',
      `_${SELECTION_NOTE}_`,
      '',
    );
  if (s.order)
    md.push(`_paths ran in ${s.order.mode} order (run index ${s.order.index}): ${s.order.paths.join(', ')}_`, '');
  const regressions = regressionRows(s);
  if (regressions.length)
    md.push(
      '## Regressions',
      '',
      `| ${REGRESSION_HEAD.join(' | ')} |`,
      `|${REGRESSION_HEAD.map((_, i) => (i >= 4 ? '---:' : '---')).join('|')}|`,
      ...regressions.map(mdRow),
      '',
      `_${REGRESSION_NOTE}_`,
      '',
    );
  const trend = trendLine(s);
  if (trend) md.push(`_${trend}_`, '');
  for (const p of s.paths) {
    if (p.error) md.push(`- **${p.id}** failed at \`${p.failedStep}\`: ${p.error}`);
    for (const l of overheadLines(p)) md.push(`- **${p.id}** probe's own cost: ${l}`);
    for (const n of p.notes ?? []) md.push(`- **${p.id}** note: ${n}`);
    for (const k of p.skipped ?? []) md.push(`- **${p.id}** skipped ${k.probe}: ${k.reason ?? 'no reason given'}`);
  }
  return `${md.join('\n')}\n`;
}
