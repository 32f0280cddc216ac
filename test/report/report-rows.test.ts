/**
 * The rows every rendering shows (report-rows.ts): each percentile's interval, the thin-tail
 * flags, the trial spread and the difference table, as the console table and Markdown show them.
 */
import { describe, expect, it } from 'vitest';
import { renderCsv } from '../../report/report-csv.js';
import { renderHtml } from '../../report/report-html.js';
import { renderMarkdown } from '../../report/report-markdown.js';
import { diffRows, HEAD, tableRows } from '../../report/report-rows.js';
import { renderTable } from '../../report/report-text.js';
import { summary } from '../helpers/report-summary.js';

describe('tables for people', () => {
  it('shows each percentile with its interval, and the flags and trial spread in the notes', () => {
    const [row] = tableRows(summary());
    expect(row.slice(5, 8)).toEqual(['2.500 [2.490–2.520]', '2.700 [2.650–2.750]', '2.900 [2.800–3.000]']);
    expect(row[9]).toBe(''); // rps: http results only
    expect(row[10]).toBe('thin-tail:p99 thin-tail:p999 trials 3: p50 spread 1.3%, p99 spread 17.0%');
  });

  it("shows a kernel-timed result's host part beside the figure: text, Markdown and HTML", async () => {
    const s = summary();
    s.paths[0].results[0].host = { n: 3000, p50_us: 6.14, p99_us: 12.5, ts_source: 'kernel-sw' };
    const note = 'host p50 6.1 µs, p99 12.5 µs (kernel-sw)';
    expect(tableRows(s)[0][10]).toBe(
      `thin-tail:p99 thin-tail:p999 trials 3: p50 spread 1.3%, p99 spread 17.0% ${note}`,
    );
    expect(renderTable(s)).toContain(note);
    expect(renderMarkdown(s)).toContain(note);
    expect(await renderHtml(s)).toContain(`<small>${note}</small>`);
    // Without the kernel's timing there is no host part, and nothing is said.
    expect(tableRows(summary())[0][10]).not.toContain('host');
  });

  it("shows pingpong's one-way delays with their clock bound, a direction the bound swamps not as a number", async () => {
    const s = summary();
    s.paths[0].results[0].oneWay = { n: 3000, fwd_p50_us: 612.46, rev_p50_us: 201.04, clock_error_us: 0 };
    const note = 'one-way p50 fwd 612.5 µs, rev 201.0 µs (clocks ±0 µs)';
    expect(tableRows(s)[0][10]).toContain(note);
    expect(renderMarkdown(s)).toContain(note);
    expect(await renderHtml(s)).toContain(`<small>${note}</small>`);
    // Two hosts whose clocks agree to ±250 µs: 612 µs is shown (bound ≤ half of it), 201 µs is not.
    s.paths[0].results[0].oneWay = { n: 3000, fwd_p50_us: 612.46, rev_p50_us: 201.04, clock_error_us: 250 };
    expect(tableRows(s)[0][10]).toContain('one-way p50 fwd 612.5 µs, rev not shown (clocks ±250 µs)');
    // A negative figure (clocks apart by more than the delay) is never printed as a number.
    s.paths[0].results[0].oneWay = { n: 10, fwd_p50_us: 700, rev_p50_us: -40, clock_error_us: 300 };
    expect(tableRows(s)[0][10]).toContain('rev not shown (clocks ±300 µs)');
    expect(tableRows(summary())[0][10]).not.toContain('one-way');
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
});
