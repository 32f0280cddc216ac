/**
 * The run summary as Markdown: the results, mesh, AZ, difference and regression tables, then each
 * path's notes. Every text taken from the summary goes through mdText: the summary carries what
 * targets, tools and plans said (skip reasons, errors, notes, labels), and none of it may become
 * a link, an image, HTML, a heading or a table cell of its own in a Markdown viewer.
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

/** Line breaks, control and format characters (bidi overrides, zero-width) and line separators. */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}]+/gu;

/**
 * Text shown as it reads in a Markdown viewer, never acting as Markdown or HTML: on one line;
 * `&`, `<`, `>` as entities (no HTML, no autolink, no entity of the text's own); backslash,
 * backtick, `*`, `|`, `~`, a `]` right before `(` (what makes `[text](url)` a link and
 * `![alt](url)` an image) and a `_` that could open or close emphasis (not one inside a word, as
 * in connect_rtt_ms) backslash-escaped, so no link, image, code span, emphasis or table cell
 * starts inside it. Other brackets stay as they read ("[ms]", "[0.209–0.211]"): without a link
 * destination they are text, and a reference definition would need a line of its own.
 */
export function mdText(text: string): string {
  return text
    .replace(UNPRINTABLE, ' ')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/[\\`*|~]|\](?=\()|_(?![\p{L}\p{N}])|(?<![\p{L}\p{N}])_/gu, '\\$&');
}

/**
 * Text inside a code span: one line, no backtick to close it early; nothing else acts there, but
 * `&`, `<`, `>` are entities still, for viewers that do not keep to CommonMark.
 */
const mdCode = (text: string) =>
  text.replace(UNPRINTABLE, ' ').replace(/`/g, "'").replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const mdRow = (r: string[]) => `| ${r.map(mdText).join(' | ')} |`;

/** A titled table with its note in italics (numeric columns right-aligned); nothing without rows. */
function mdSection(title: string, head: string[], rows: string[][], numeric: (i: number) => boolean, note: string) {
  if (!rows.length) return [];
  const align = `|${head.map((_, i) => (numeric(i) ? '---:' : '---')).join('|')}|`;
  return [`## ${title}`, '', `| ${head.join(' | ')} |`, align, ...rows.map(mdRow), '', `_${note}_`, ''];
}

export function renderMarkdown(s: Summary): string {
  const rows = tableRows(s);
  const md = [
    `# pathbench run ${mdText(s.runId)}`,
    '',
    `status: **${mdText(s.status)}**${s.planName ? ` · plan: ${mdText(s.planName)}` : ''}${s.startedAt ? ` · started ${mdText(s.startedAt)}` : ''}`,
    '',
    `| ${HEAD.join(' | ')} |`,
    `|${HEAD.map((_, i) => (i >= 3 && i <= 9 ? '---:' : '---')).join('|')}|`,
    ...rows.map(mdRow),
    '',
    `_${INTERVAL_NOTE}_`,
    '',
    ...runNotes(s).map((n) => `**note:** ${mdText(n)}\n`),
  ];
  if (s.mesh) {
    const [head, ...rows] = meshMatrix(s.mesh);
    md.push(
      '## Mesh pairs',
      '',
      'Latency p50 / throughput p50, client region (row) to target region (column).',
      '',
      mdRow(head),
      `|${head.map((_, i) => (i > 0 ? '---:' : '---')).join('|')}|`,
      ...rows.map(mdRow),
      '',
      ...meshFitLines(s.mesh).map((l) => `- ${mdText(l)}`),
      '',
    );
  }
  md.push(...mdSection('AZ pairs', AZ_HEAD, azTableRows(s), azNumeric, AZ_NOTE));
  md.push(...mdSection('Lab', LAB_HEAD, labTableRows(s), labNumeric, LAB_NOTE));
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
  if (trend) md.push(`_${mdText(trend)}_`, '');
  for (const p of s.paths) {
    const id = mdText(p.id);
    if (p.error) md.push(`- **${id}** failed at \`${mdCode(p.failedStep ?? '')}\`: ${mdText(p.error)}`);
    for (const l of overheadLines(p)) md.push(`- **${id}** probe's own cost: ${mdText(l)}`);
    for (const n of p.notes ?? []) md.push(`- **${id}** note: ${mdText(n)}`);
    for (const k of p.skipped ?? [])
      md.push(`- **${id}** skipped ${mdText(k.probe)}: ${mdText(k.reason ?? 'no reason given')}`);
  }
  return `${md.join('\n')}\n`;
}
