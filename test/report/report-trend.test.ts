/**
 * Regressions and the trend in every rendering of a summary: the console table, Markdown, CSV
 * and the HTML page (its trend chart an inline ECharts SVG with the flagged point in red).
 */
import { describe, expect, it } from 'vitest';
import type { Regression, Summary, TrendSeries } from '../../core/run-summary.js';
import { CSV_REGRESSION_HEAD, renderCsv } from '../../report/report-csv.js';
import { renderHtml } from '../../report/report-html.js';
import { renderMarkdown } from '../../report/report-markdown.js';
import { renderTable } from '../../report/report-text.js';

const regression: Regression = {
  path: 'C',
  probe: 'tcp-connect',
  metric: 'connect_rtt_ms',
  unit: 'ms',
  percentile: 'p50',
  value: 9.858,
  ci95: [9.83, 9.88],
  baseline: 8.857,
  band: [8.414, 9.3],
  runsInBaseline: 5,
  change_pct: 11.3,
  direction: 'regression',
};
const trend = (path: string, values: (number | null)[], band?: [number, number]): TrendSeries => ({
  path,
  probe: 'tcp-connect',
  metric: 'connect_rtt_ms',
  unit: 'ms',
  percentile: 'p50',
  points: values.map((value, i) => ({
    runId: i === values.length - 1 ? 'now' : `r${i}`,
    value,
    ...(value === null ? { excluded: 'path failed' } : {}),
  })),
  ...(band ? { band } : {}),
});
const summary: Summary = {
  runId: 'now',
  planName: 'lab',
  status: 'succeeded',
  paths: [{ id: 'C', label: 'C', status: 'succeeded', steps: [], results: [] }],
  regressions: [regression],
  trend: [
    trend('C', [8.9, 8.8, null, 8.86, 9.858], [8.414, 9.3]),
    trend('A', [0.21, 0.2, 0.22, 0.21, 0.2], [0.19, 0.23]),
  ],
};

describe('regressions in the reports', () => {
  it('the console table and Markdown list each regression with its figures', () => {
    const t = renderTable(summary);
    expect(t).toMatch(/\nregressions:\npath\s+probe\s+metric/);
    expect(t).toMatch(
      /C\s+tcp-connect\s+connect_rtt_ms \[ms\]\s+p50\s+9\.858 \[9\.830–9\.880\]\s+8\.857\s+8\.414–9\.300\s+5\s+\+11\.3% regression/,
    );
    expect(t).toContain("trend: 2 figures judged against the plan's earlier runs; 1 flagged");
    const md = renderMarkdown(summary);
    expect(md).toContain('## Regressions');
    expect(md).toContain(
      '| C | tcp-connect | connect_rtt_ms [ms] | p50 | 9.858 [9.830–9.880] | 8.857 | 8.414–9.300 | 5 | +11.3% regression |',
    );
  });

  it('the CSV has a regression block under its own header', () => {
    const lines = renderCsv(summary).trim().split('\n');
    const at = lines.indexOf(CSV_REGRESSION_HEAD.join(','));
    expect(at).toBeGreaterThan(0);
    // the last column, paired_with, is empty: this regression was not judged against a paired reference
    expect(lines[at + 1]).toBe(
      'now,C,tcp-connect,connect_rtt_ms,ms,p50,9.858,9.83,9.88,8.857,8.414,9.3,5,11.3,regression,',
    );
    const paired: Summary = {
      ...summary,
      regressions: summary.regressions?.map((g) => ({ ...g, pairedWith: 'A' })),
    };
    expect(renderCsv(paired).trim().split('\n')[at + 1]).toMatch(/,11\.3,regression,A$/);
    expect(renderTable(paired)).toMatch(/\+11\.3% regression \(paired with A\)/);
  });

  it('the HTML page has the regression table and a trend chart with the band and the flagged point', async () => {
    const html = await renderHtml(summary);
    expect(html).toContain('<h2>Regressions</h2>');
    expect(html).toContain('<table class="regressions">');
    const charts = html.match(/data-chart="trend"/g) ?? [];
    expect(charts).toHaveLength(1);
    const fig = html.slice(html.indexOf('data-chart="trend"'));
    expect(fig).toContain('now (this run)');
    expect(fig).toMatch(/<svg/);
    // the flagged figure's symbol in red; without a regression there is none
    expect(fig).toMatch(/stroke="#b5281c"/);
    const calm = await renderHtml({ ...summary, regressions: [] });
    expect(calm.slice(calm.indexOf('data-chart="trend"'))).not.toMatch(/#b5281c/);
    expect(await renderHtml({ ...summary, regressions: [], trend: [] })).not.toContain('data-chart="trend"');
  });

  it('says when a run was not judged yet', () => {
    const t = renderTable({ ...summary, regressions: [], trend: [trend('C', [8.9, 8.8])] });
    expect(t).toContain('trend: not judged yet (fewer than 5 clean earlier runs of this plan)');
  });
});
