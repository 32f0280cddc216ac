/**
 * report.ts: the console table, Markdown and CSV carry each percentile's interval, the
 * thin-tail flags, the trial spread and the difference table; CSV text that a spreadsheet would
 * run as a formula is quoted.
 */
import { describe, expect, it } from 'vitest';
import type { Summary } from '../../core/run-summary.js';
import {
  CSV_DIFF_HEAD,
  CSV_HEAD,
  csvCell,
  diffRows,
  HEAD,
  renderCsv,
  renderMarkdown,
  renderTable,
  tableRows,
} from '../../report/report-text.js';

function summary(): Summary {
  const result = (p50: number) => ({
    probe: 'tcp-connect',
    metric: 'connect_rtt_ms',
    unit: 'ms',
    n: 300,
    loss: 0,
    p50,
    p95: p50 + 0.2,
    p99: p50 + 0.4,
    p999: p50 + 0.5,
    max: p50 + 0.5,
    flags: ['thin-tail:p99', 'thin-tail:p999'],
    ci95: {
      p50: [p50 - 0.01, p50 + 0.02] as [number, number],
      p95: [p50 + 0.15, p50 + 0.25] as [number, number],
      p99: [p50 + 0.3, p50 + 0.5] as [number, number],
    },
    tail: { p50: 150, p95: 15, p99: 3, p999: 0 },
    trials: { count: 3, p50_spread_pct: 1.25, p99_spread_pct: 17 },
  });
  return {
    runId: 'r1',
    status: 'succeeded',
    paths: [
      { id: 'C', label: '=cmd|calc', status: 'succeeded', steps: [], results: [result(2.5)] },
      { id: 'D', label: '@peering', status: 'succeeded', steps: [], results: [result(4.6)] },
    ],
    comparisons: [
      {
        path: 'D',
        baseline: 'C',
        probe: 'tcp-connect',
        metric: 'connect_rtt_ms',
        unit: 'ms',
        p50: { diff: 2.1, pct: 84, ci95: [2.05, 2.16], verdict: 'slower' },
        p95: { diff: 2.1, pct: 77.8, ci95: [1.9, 2.3], verdict: 'slower' },
        p99: { diff: -0.05, pct: -1.7, ci95: [-0.4, 0.3], verdict: 'no clear difference' },
      },
    ],
  };
}

describe('tables for people', () => {
  it('shows each percentile with its interval, and the flags and trial spread in the notes', () => {
    const [row] = tableRows(summary());
    expect(row.slice(5, 8)).toEqual(['2.500 [2.490–2.520]', '2.700 [2.650–2.750]', '2.900 [2.800–3.000]']);
    expect(row[9]).toBe(''); // rps: http results only
    expect(row[10]).toBe('thin-tail:p99 thin-tail:p999 trials 3: p50 spread 1.3%, p99 spread 17.0%');
  });

  it("puts an http result's requests per second next to its latency", () => {
    const s = summary();
    Object.assign(s.paths[0].results[0], { metric: 'http_latency_ms', rps: 4123.4 });
    const [row] = tableRows(s);
    expect(HEAD[9]).toBe('rps');
    expect(row[9]).toBe('4123');
    expect(renderCsv(s).split('\n')[1].split(',').at(-1)).toBe('4123.4');
  });

  it('has a difference table: path − baseline, % of baseline, interval, verdict', () => {
    expect(diffRows(summary())).toEqual([
      [
        'D − C',
        'tcp-connect',
        'connect_rtt_ms [ms]',
        '+2.100 (+84.0%) [+2.050, +2.160] slower',
        '+2.100 (+77.8%) [+1.900, +2.300] slower',
        '-0.050 (-1.7%) [-0.400, +0.300] no clear difference',
      ],
    ]);
    const text = renderTable(summary());
    expect(text).toContain('differences:');
    expect(text).toMatch(/D − C\s+tcp-connect\s+connect_rtt_ms \[ms\]\s+\+2\.100 \(\+84\.0%\)/);
    const md = renderMarkdown(summary());
    expect(md).toContain('## Differences');
    expect(md).toContain('| D − C | tcp-connect | connect_rtt_ms [ms] | +2.100 (+84.0%) [+2.050, +2.160] slower |');
    expect(md).toContain('| 2.500 [2.490–2.520] |');
  });

  it('has no difference table when the run has no comparisons', () => {
    const s = summary();
    delete s.comparisons;
    expect(renderTable(s)).not.toContain('differences:');
    expect(renderMarkdown(s)).not.toContain('## Differences');
    expect(renderCsv(s).trimEnd().split('\n')).toHaveLength(3);
  });

  it('says once when the whole run moved, in every rendering', () => {
    const s = summary();
    s.runShifts = [
      {
        probe: 'tcp-connect',
        metric: 'connect_rtt_ms',
        unit: 'ms',
        percentile: 'p50',
        shift_pct: 31,
        usual_pct: [-4, 5],
        paths: 3,
      },
    ];
    const note =
      'the whole run moved: tcp-connect connect_rtt_ms p50 +31.0 % (the median of 3 paths; earlier runs: −4.0 % to +5.0 %), taken out before each path was judged';
    expect(renderTable(s)).toContain(`note: ${note}`);
    expect(renderMarkdown(s)).toContain(note);
    s.runShifts[0].reference = 'A';
    expect(renderTable(s)).toContain('(read from reference path A;');
  });

  it('prints why a difference has no verdict', () => {
    const s = summary();
    const c = s.comparisons?.[0];
    if (!c) throw new Error('the fixture has a comparison');
    c.p99 = { diff: 0, pct: 0, ci95: [0, 0], verdict: 'no verdict', why: 'zero-width interval' };
    expect(renderTable(s)).toContain('no verdict: zero-width interval');
  });
});

describe('CSV', () => {
  it('quotes text starting with = + - @, leaves numbers alone, and escapes commas and quotes', () => {
    expect(csvCell('=1+1')).toBe("'=1+1");
    expect(csvCell('+cmd')).toBe("'+cmd");
    expect(csvCell('-2+3')).toBe("'-2+3");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('=a,b')).toBe(`"'=a,b"`);
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell(-0.25)).toBe('-0.25');
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell('plain')).toBe('plain');
  });

  it('carries the intervals, tails and spreads, then the differences under their own header', () => {
    const lines = renderCsv(summary()).trimEnd().split('\n');
    expect(lines[0]).toBe(CSV_HEAD.join(','));
    const first = lines[1].split(',');
    const at = (name: string) => first[CSV_HEAD.indexOf(name)];
    // an existing cell escaped too: the path label
    expect(at('label')).toBe("'=cmd|calc");
    expect(lines[2].split(',')[CSV_HEAD.indexOf('label')]).toBe("'@peering");
    expect([at('p50_ci_lo'), at('p50_ci_hi'), at('tail_p99'), at('tail_p999'), at('trials')]).toEqual([
      '2.49',
      '2.52',
      '3',
      '0',
      '3',
    ]);
    expect(at('p99_spread_pct')).toBe('17');
    expect(lines[3]).toBe('');
    expect(lines[4]).toBe(CSV_DIFF_HEAD.join(','));
    const diff = lines[5].split(',');
    const d = (name: string) => diff[CSV_DIFF_HEAD.indexOf(name)];
    expect([d('comparison'), d('p50_diff'), d('p50_pct'), d('p50_verdict'), d('p99_diff'), d('p99_ci_lo')]).toEqual([
      'D - C',
      '2.1',
      '84',
      'slower',
      '-0.05',
      '-0.4',
    ]);
  });
});
