/**
 * The run summary as CSV: one line per path × result × subset, then a block each (own header,
 * after an empty line) for the differences, the mesh pairs, the AZ pairs and the regressions.
 * Cells a spreadsheet would run as a formula are quoted.
 */
import type { ResultRow, Summary } from '../core/run-summary.js';
import { azCsvRows, CSV_AZ_HEAD } from './report-az.js';
import { CSV_LAB_HEAD, labCsvRows } from './report-lab.js';

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

/** The within-path ratios' header: probe ÷ baseline probe per percentile. */
export const CSV_RATIO_HEAD = [
  'run_id',
  'ratio',
  'path',
  'probe',
  'baseline_probe',
  'metric',
  'unit',
  ...['p50', 'p95', 'p99'].flatMap((p) => [`${p}_ratio`, `${p}_ci_lo`, `${p}_ci_hi`, `${p}_verdict`]),
];

/** The selection table's header: one line per path. */
export const CSV_SELECTION_HEAD = [
  'run_id',
  'selection',
  'method',
  'label',
  'latency_probe',
  'latency_metric',
  'latency_unit',
  'p50',
  'p50_ci_lo',
  'p50_ci_hi',
  'p99',
  'p99_ci_lo',
  'p99_ci_hi',
  'loss',
  'throughput_bps',
  'mtu_bytes',
  'fixed_usd_per_month',
  'usd_per_gb',
  'link',
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
  if (s.ratios?.length) {
    lines.push('', CSV_RATIO_HEAD.join(','));
    for (const r of s.ratios) {
      const cells: unknown[] = [s.runId, `${r.probe} / ${r.baselineProbe}`, r.path, r.probe, r.baselineProbe];
      cells.push(r.metric, r.unit);
      for (const c of [r.p50, r.p95, r.p99]) cells.push(c.ratio, c.ci95[0], c.ci95[1], c.verdict);
      lines.push(cells.map(csvCell).join(','));
    }
  }
  if (s.selection?.length) {
    lines.push('', CSV_SELECTION_HEAD.join(','));
    for (const r of s.selection) {
      const l = r.latency;
      const cells: unknown[] = [s.runId, r.path, r.method, r.label, l?.probe, l?.metric, l?.unit];
      cells.push(l?.p50, l?.p50_ci95?.[0], l?.p50_ci95?.[1], l?.p99, l?.p99_ci95?.[0], l?.p99_ci95?.[1], l?.loss);
      cells.push(r.throughputBps, r.mtuBytes, r.fixedUsdPerMonth, r.usdPerGb, r.link);
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
  const lab = labCsvRows(s);
  if (lab.length) {
    lines.push('', CSV_LAB_HEAD.join(','));
    for (const cells of lab) lines.push(cells.map(csvCell).join(','));
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
      cells.push(g.baseline, g.band[0], g.band[1], g.runsInBaseline, g.change_pct, g.direction, g.pairedWith ?? '');
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
  'paired_with',
];
