/** The ratio and selection tables in every rendering of a summary (Markdown, CSV, HTML). */
import { describe, expect, it } from 'vitest';
import { type Summary, summarySchema } from '../../core/run-summary.js';
import { renderCsv } from '../../report/report-csv.js';
import { renderHtml } from '../../report/report-html.js';
import { renderMarkdown } from '../../report/report-markdown.js';
import { ratioText } from '../../report/report-rows.js';

const cell = (ratio: number, lo: number, hi: number, verdict: 'slower' | 'no verdict', why?: string) => ({
  ratio,
  ci95: [lo, hi] as [number, number],
  verdict,
  ...(why ? { why } : {}),
});

const summary: Summary = summarySchema.parse({
  runId: 'run-rs',
  status: 'succeeded',
  paths: [{ id: 'B', label: 'peering', status: 'succeeded', steps: [], results: [] }],
  ratios: [
    {
      path: 'B',
      probe: 'http-noka-c1-1k',
      baselineProbe: 'http-ka-c1-1k',
      metric: 'http_latency_ms',
      unit: 'ms',
      p50: cell(3.52, 3.3, 3.77, 'slower'),
      p95: cell(3.1, 2.8, 3.4, 'slower'),
      p99: cell(2.5, 1.9, 3.6, 'no verdict', 'thin tail, 3 samples beyond p99'),
    },
  ],
  selection: [
    {
      path: 'B',
      method: 'vpc-peering',
      label: 'peering',
      latency: {
        probe: 'ping',
        metric: 'icmp_rtt_ms',
        unit: 'ms',
        p50: 8.89,
        p99: 9.5,
        p50_ci95: [8.8, 9],
        p99_ci95: [9.2, 9.9],
        loss: 0,
      },
      throughputBps: 4.98e9,
      mtuBytes: 8500,
      fixedUsdPerMonth: 0,
      usdPerGb: 0.09,
      link: 'inter-region',
    },
  ],
  order: { mode: 'rotated', index: 3, paths: ['B'] },
});

describe('ratios and selection in the reports', () => {
  it('writes a ratio as "3.52× [3.30×, 3.77×] slower", with the reason where there is no verdict', () => {
    expect(ratioText(summary.ratios![0].p50)).toBe('3.52× [3.30×, 3.77×] slower');
    expect(ratioText(summary.ratios![0].p99)).toBe('2.50× [1.90×, 3.60×] no verdict: thin tail, 3 samples beyond p99');
  });

  it('has both tables in Markdown, CSV and HTML', async () => {
    const md = renderMarkdown(summary);
    expect(md).toContain('## Ratios within a path');
    expect(md).toContain(
      '| B | http-noka-c1-1k ÷ http-ka-c1-1k | http_latency_ms [ms] | 3.52× [3.30×, 3.77×] slower |',
    );
    expect(md).toContain(
      '| B | vpc-peering | ping [ms] | 8.890 [8.800–9.000] | 9.500 [9.200–9.900] | 0.0% | 4.98 | 8500 | $0.00 | $0.0900 |',
    );
    expect(md).toContain('rotated order (run index 3)');
    const csv = renderCsv(summary).split('\n');
    expect(csv).toContain(
      'run-rs,http-noka-c1-1k / http-ka-c1-1k,B,http-noka-c1-1k,http-ka-c1-1k,http_latency_ms,ms,3.52,3.3,3.77,slower,3.1,2.8,3.4,slower,2.5,1.9,3.6,no verdict',
    );
    expect(csv).toContain(
      'run-rs,B,vpc-peering,peering,ping,icmp_rtt_ms,ms,8.89,8.8,9,9.5,9.2,9.9,0,4980000000,8500,0,0.09,inter-region',
    );
    const html = await renderHtml(summary);
    expect(html).toContain('<h2>Ratios within a path</h2>');
    expect(html).toContain('<h2>Selection</h2>');
    expect(html).toContain('<td>vpc-peering</td>');
  });
});
