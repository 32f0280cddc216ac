/**
 * The run summary for people: the console table, Markdown and CSV (the HTML page is
 * report-html.ts). Every rendering reads only the summary JSON (summary.ts builds it).
 */

import type { Comparison, DiffCell, ResultRow, Summary, SummaryPath } from '../core/run-summary.js';
import { AZ_HEAD, AZ_NOTE, azCsvRows, azNumeric, azTableRows, CSV_AZ_HEAD } from './report-az.js';
import { meshFitLines, meshMatrix } from './report-mesh.js';

/** Notes about the run as a whole (e.g. that nothing was measured). */
export function runNotes(s: Summary): string[] {
  return [...(s.notes ?? []), ...(s.runShifts ?? []).map(runShiftNote)];
}

/**
 * "the whole run moved: tcp-connect connect_rtt_ms p50 +31.0 % on 3 paths (earlier runs: −4.0 % to
 * +5.0 %), taken out before each path was judged": said once, not as a change of every path.
 */
export function runShiftNote(r: NonNullable<Summary['runShifts']>[number]): string {
  const pct = (v: number) => `${v > 0 ? '+' : v < 0 ? '−' : ''}${Math.abs(v).toFixed(1)} %`;
  const from = r.reference ? `read from reference path ${r.reference}` : `the median of ${r.paths} paths`;
  return `the whole run moved: ${r.probe} ${r.metric} ${r.percentile} ${pct(r.shift_pct)} (${from}; earlier runs: ${pct(r.usual_pct[0])} to ${pct(r.usual_pct[1])}), taken out before each path was judged`;
}

/**
 * "tcp-connect p50 2.0 µs / p99 5.0 µs (method)" per calibrated kind: shown next to the results
 * so a reader sees when a path's latency is within the probe's own noise.
 */
export function overheadLines(p: SummaryPath): string[] {
  return Object.entries(p.probe_overhead_us ?? {}).map(
    ([kind, c]) => `${kind} p50 ${c.p50_us.toFixed(1)} µs / p99 ${c.p99_us.toFixed(1)} µs (${c.method})`,
  );
}

/** A figure as the tables show it: throughput in Gbit/s, three significant-ish digits otherwise. */
export function fmt(v: number | null, metric: string): string {
  if (v === null) return '–';
  if (metric === 'throughput_bps') return (v / 1e9).toFixed(2);
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 10) return v.toFixed(2);
  return v.toFixed(3);
}

/** The unit the tables show a result in (throughput in Gbit/s). */
export const unitOf = (r: Pick<ResultRow, 'metric' | 'unit'>) => (r.metric === 'throughput_bps' ? 'Gbit/s' : r.unit);

/** "1.234 [1.200–1.300]": a percentile with its 95 % interval when there is one. */
function withInterval(v: number | null, ci: [number, number] | undefined, metric: string): string {
  const value = fmt(v, metric);
  return ci ? `${value} [${fmt(ci[0], metric)}–${fmt(ci[1], metric)}]` : value;
}

/** "trials 3: p50 ±1.2 %, p99 ±17.0 %" when the probe ran several trials. */
function trialsNote(r: ResultRow): string {
  const t = r.trials;
  return t
    ? `trials ${t.count}: p50 spread ${t.p50_spread_pct.toFixed(1)}%, p99 spread ${t.p99_spread_pct.toFixed(1)}%`
    : '';
}

/** Rows of the human tables: one per path × result (the seed's layout: path, n, loss, p50…). */
export function tableRows(s: Summary): string[][] {
  const out: string[][] = [];
  for (const p of s.paths) {
    if (p.results.length === 0) {
      out.push([p.id, '', '', '', '', '', '', '', '', '', `${p.status}${p.failedStep ? ` at ${p.failedStep}` : ''}`]);
      continue;
    }
    for (const r of p.results) {
      out.push(tableRow(p, r, r.probe, r, [...r.flags, trialsNote(r)], r.ci95));
      if (r.unflagged) out.push(tableRow(p, r, `${r.probe} (unflagged)`, r.unflagged, []));
    }
  }
  return out;
}

function tableRow(
  p: SummaryPath,
  r: ResultRow,
  label: string,
  f: Pick<ResultRow, 'n' | 'loss' | 'p50' | 'p95' | 'p99' | 'max'>,
  flags: string[],
  ci?: ResultRow['ci95'],
): string[] {
  return [
    p.id,
    label,
    `${r.metric} [${unitOf(r)}]`,
    String(f.n),
    `${(f.loss * 100).toFixed(1)}%`,
    withInterval(f.p50, ci?.p50, r.metric),
    withInterval(f.p95, ci?.p95, r.metric),
    withInterval(f.p99, ci?.p99, r.metric),
    fmt(f.max, r.metric),
    f === r && r.rps !== undefined ? r.rps.toFixed(r.rps >= 100 ? 0 : 1) : '',
    [p.status === 'succeeded' ? '' : `${p.status}${p.failedStep ? ` at ${p.failedStep}` : ''}`, ...flags]
      .filter(Boolean)
      .join(' '),
  ];
}

export const HEAD = [
  'path',
  'probe',
  'metric',
  'n',
  'loss',
  'p50 [95% CI]',
  'p95 [95% CI]',
  'p99 [95% CI]',
  'max',
  'rps',
  'notes',
];

/** The difference table's columns: path − baseline per percentile (the seed's B−A rows). */
export const DIFF_HEAD = ['comparison', 'probe', 'metric', 'p50', 'p95', 'p99'];

function signed(v: number, metric: string): string {
  const t = fmt(v, metric);
  return v > 0 ? `+${t}` : t;
}

/** "+0.203 (+13.6%) [0.158, 0.256] slower" */
export function diffText(c: DiffCell, metric: string): string {
  const pct = `${c.pct > 0 ? '+' : ''}${c.pct.toFixed(1)}%`;
  return `${signed(c.diff, metric)} (${pct}) [${signed(c.ci95[0], metric)}, ${signed(c.ci95[1], metric)}] ${c.why ? `${c.verdict}: ${c.why}` : c.verdict}`;
}

/** Rows of the difference table: one per comparison, probe and metric. */
export function diffRows(s: Summary): string[][] {
  return (s.comparisons ?? []).map((c: Comparison) => [
    `${c.path} − ${c.baseline}`,
    c.probe,
    `${c.metric} [${unitOf(c)}]`,
    diffText(c.p50, c.metric),
    diffText(c.p95, c.metric),
    diffText(c.p99, c.metric),
  ]);
}

/** A plain-text table: numeric columns (by index) right-aligned. */
function textTable(head: string[], rows: string[][], right: (i: number) => boolean): string[] {
  const all = [head, ...rows];
  const widths = head.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (right(i) ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
}

const INTERVAL_NOTE =
  '[…] = 95 % interval (distribution-free, order statistics); thin-tail:pXX = fewer than 10 samples beyond that percentile';
const DIFF_NOTE =
  'path − baseline per percentile (% of baseline) [95 % interval]; "no clear difference" when the interval contains 0 or the difference is within the probes\' own cost';

/** The regression table's columns: this run against the plan's baseline band (regressions.ts). */
export const REGRESSION_HEAD = [
  'path',
  'probe',
  'metric',
  'pct',
  'this run [95 %]',
  'baseline',
  'band',
  'runs',
  'change',
];
export const REGRESSION_NOTE =
  "flagged when this run's 95 % interval lies wholly outside the band of the plan's last clean runs (median ± max(3 · 1.4826 · MAD, their typical interval, 5 %)); failed, credit-flagged and thin-tail figures are left out";

/** Rows of the regression table: one per flagged percentile. */
export function regressionRows(s: Summary): string[][] {
  return (s.regressions ?? []).map((g) => [
    g.path,
    g.probe,
    `${g.metric} [${unitOf(g)}]`,
    g.percentile,
    withInterval(g.value, g.ci95, g.metric),
    fmt(g.baseline, g.metric),
    `${fmt(g.band[0], g.metric)}–${fmt(g.band[1], g.metric)}`,
    String(g.runsInBaseline),
    `${g.change_pct > 0 ? '+' : ''}${g.change_pct.toFixed(1)}% ${g.direction}`,
  ]);
}

/** One line on the judgement: how many figures were judged, and against how many runs. */
export function trendLine(s: Summary): string | undefined {
  const judged = (s.trend ?? []).filter((t) => t.band);
  if (!s.trend?.length) return undefined;
  if (judged.length === 0) return 'trend: not judged yet (fewer than 3 clean earlier runs of this plan)';
  const flagged = s.regressions?.length ?? 0;
  return `trend: ${judged.length} figures judged against the plan's earlier runs; ${flagged === 0 ? 'no regression' : `${flagged} flagged`}`;
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

/**
 * Text that a spreadsheet would run as a formula (OWASP, CSV injection): a cell starting with
 * = + - @, tab or carriage return — also after leading spaces, and in the full-width forms
 * some spreadsheets read as the same characters.
 */
const FORMULA_START = /^[\s\u00a0\u3000]*[=+\-@\t\r\uff1d\uff0b\uff0d\uff20]/;

/**
 * One CSV cell. Text a spreadsheet would run as a formula is prefixed with a single quote, so
 * it is shown, not run; numbers stay numbers (a number is never a formula, and
 * quoting would turn every negative difference into text).
 */
export function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  const text = String(v);
  const t = typeof v !== 'number' && FORMULA_START.test(text) ? `'${text}` : text;
  return /[",\n\r]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
}

export const CSV_HEAD = [
  'run_id',
  'path',
  'label',
  'status',
  'probe',
  'subset',
  'metric',
  'unit',
  'n',
  'loss',
  'p50',
  'p95',
  'p99',
  'p999',
  'max',
  'flags',
  'p50_ci_lo',
  'p50_ci_hi',
  'p95_ci_lo',
  'p95_ci_hi',
  'p99_ci_lo',
  'p99_ci_hi',
  'tail_p99',
  'tail_p999',
  'trials',
  'p50_spread_pct',
  'p99_spread_pct',
  'rps',
];

export const CSV_DIFF_HEAD = [
  'run_id',
  'comparison',
  'path',
  'baseline',
  'probe',
  'metric',
  'unit',
  ...['p50', 'p95', 'p99'].flatMap((p) => [`${p}_diff`, `${p}_pct`, `${p}_ci_lo`, `${p}_ci_hi`, `${p}_verdict`]),
];

/**
 * The results, one line per path × result × subset; then, after an empty line, the differences
 * (their own header, first column `comparison`) when the run has any.
 */
export function renderCsv(s: Summary): string {
  const lines = [CSV_HEAD.join(',')];
  for (const p of s.paths) {
    for (const r of p.results) {
      const ci = r.ci95;
      const extra = [
        ci?.p50[0],
        ci?.p50[1],
        ci?.p95[0],
        ci?.p95[1],
        ci?.p99[0],
        ci?.p99[1],
        r.tail?.p99,
        r.tail?.p999,
        r.trials?.count,
        r.trials?.p50_spread_pct,
        r.trials?.p99_spread_pct,
        r.rps,
      ];
      const subsets: [string, NonNullable<ResultRow['unflagged']>, string, unknown[]][] = [
        ['all', r, r.flags.join(' '), extra],
      ];
      if (r.unflagged) subsets.push(['unflagged', r.unflagged, '', []]);
      for (const [subset, f, flags, more] of subsets) {
        const cells: unknown[] = [s.runId, p.id, p.label, p.status, r.probe, subset, r.metric, r.unit, f.n, f.loss];
        cells.push(f.p50, f.p95, f.p99, f.p999, f.max, flags, ...more);
        while (cells.length < CSV_HEAD.length) cells.push(undefined);
        lines.push(cells.map(csvCell).join(','));
      }
    }
  }
  if (s.comparisons?.length) {
    lines.push('', CSV_DIFF_HEAD.join(','));
    for (const c of s.comparisons) {
      const cells: unknown[] = [s.runId, `${c.path} - ${c.baseline}`, c.path, c.baseline, c.probe, c.metric, c.unit];
      for (const d of [c.p50, c.p95, c.p99]) cells.push(d.diff, d.pct, d.ci95[0], d.ci95[1], d.verdict);
      lines.push(cells.map(csvCell).join(','));
    }
  }
  if (s.mesh) {
    lines.push('', CSV_MESH_HEAD.join(','));
    for (const p of s.mesh.pairs) {
      const cells: unknown[] = [s.runId, p.path, p.from, p.to, p.distanceKm, p.round, p.latencyMs, p.latencyMetric];
      cells.push(p.throughputBps, p.windowBoundBps);
      lines.push(cells.map(csvCell).join(','));
    }
  }
  const az = azCsvRows(s);
  if (az.length) {
    lines.push('', CSV_AZ_HEAD.join(','));
    for (const cells of az) lines.push(cells.map(csvCell).join(','));
  }
  if (s.regressions?.length) {
    lines.push('', CSV_REGRESSION_HEAD.join(','));
    for (const g of s.regressions) {
      const cells: unknown[] = [
        s.runId,
        g.path,
        g.probe,
        g.metric,
        g.unit,
        g.percentile,
        g.value,
        g.ci95[0],
        g.ci95[1],
      ];
      cells.push(g.baseline, g.band[0], g.band[1], g.runsInBaseline, g.change_pct, g.direction);
      lines.push(cells.map(csvCell).join(','));
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The CSV's mesh block: one line per pair (after the results and differences, when the run is a mesh). */
export const CSV_MESH_HEAD = [
  'run_id',
  'mesh_pair',
  'from_region',
  'to_region',
  'distance_km',
  'round',
  'latency_p50_ms',
  'latency_metric',
  'throughput_p50_bps',
  'window_bound_bps',
];

/** The CSV's regression block (after the differences, when the run has any). */
export const CSV_REGRESSION_HEAD = [
  'run_id',
  'path',
  'probe',
  'metric',
  'unit',
  'percentile',
  'value',
  'ci95_lo',
  'ci95_hi',
  'baseline',
  'band_lo',
  'band_hi',
  'runs_in_baseline',
  'change_pct',
  'direction',
];
