/** The lab's truth per path in every rendering (text, Markdown, CSV, HTML); nothing outside the lab. */
import { describe, expect, it } from 'vitest';
import { type Summary, summarySchema } from '../../core/run-summary.js';
import { renderCsv } from '../../report/report-csv.js';
import { renderHtml } from '../../report/report-html.js';
import { labTableRows } from '../../report/report-lab.js';
import { renderMarkdown } from '../../report/report-markdown.js';
import { renderTable } from '../../report/report-text.js';

const path = (id: string, lab?: Record<string, unknown>) => ({
  id,
  label: id,
  status: 'succeeded',
  steps: [],
  results: [],
  ...(lab ? { lab } : {}),
});

const summary: Summary = summarySchema.parse({
  runId: 'run-lab',
  status: 'succeeded',
  paths: [
    path('A', {
      targetRttMs: 0.21,
      achievedRttMs: 0.2,
      appliedRttMs: 0.13,
      appliedP10P90Ms: [0.125, 0.14],
      bareRttMs: 0.07,
      packets: 200,
      labError: false,
    }),
    path('B', {
      targetRttMs: 1.65,
      achievedRttMs: 2.141,
      appliedRttMs: 2.066,
      bareRttMs: 0.075,
      packets: 180,
      labError: true,
    }),
    path('loopback'),
  ],
});

describe('the lab table', () => {
  it('gives each lab path target, achieved, how far off, applied and bare, and says which are lab error', () => {
    expect(labTableRows(summary)).toEqual([
      ['A', '0.210', '0.200', '−4.8 %', '0.130', '0.125–0.140', '0.070', '200', 'ok'],
      ['B', '1.650', '2.141', '+29.8 %', '2.066', '', '0.075', '180', 'lab error'],
    ]);
  });

  it('is in every rendering of a lab run, and in none of a run without the lab', async () => {
    expect(renderTable(summary)).toMatch(/\nlab:\npath +target ms +achieved ms/);
    expect(renderTable(summary)).toMatch(/^B +1\.650 +2\.141 +\+29\.8 % .* lab error$/m);
    expect(renderMarkdown(summary)).toContain('## Lab');
    expect(renderMarkdown(summary)).toContain('| B | 1.650 | 2.141 | +29.8 % | 2.066 |  | 0.075 | 180 | lab error |');
    const csv = renderCsv(summary);
    expect(csv).toContain('\nrun_id,path,lab_target_rtt_ms,lab_achieved_rtt_ms,');
    expect(csv).toContain('\nrun-lab,A,0.21,0.2,0.13,0.125,0.14,0.07,200,false');
    expect(csv).toContain('\nrun-lab,B,1.65,2.141,2.066,,,0.075,180,true');
    const html = await renderHtml(summary);
    expect(html).toContain('<h2>Lab</h2>');
    expect(html).toContain('<td class="bad">lab error</td>');
    const plain = { ...summary, paths: [summary.paths[2]] } as Summary;
    expect(renderTable(plain)).not.toContain('lab:');
    expect(renderMarkdown(plain)).not.toContain('## Lab');
    expect(renderCsv(plain)).not.toContain('lab_target_rtt_ms');
    expect(await renderHtml(plain)).not.toContain('<h2>Lab</h2>');
  });
});
