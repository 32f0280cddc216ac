/** The HTML report's run line, redone on a stored page without its charts (ReleaseLock). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Summary } from '../../core/run-summary.js';
import { renderHtml } from '../../report/report-html.js';
import { restampHtml, runMetaHtml } from '../../report/run-meta-html.js';
import { FIXTURES } from '../helpers/repo.js';

/** ECharts numbers its SVG classes and clip paths per process (zr<n>-cls-<m>): two renders of one summary differ there only. */
const sameRender = (html: string) => html.replace(/zr\d+-[a-z]+-?\d+/g, 'zr');

const fixture = (): Summary => JSON.parse(readFileSync(join(FIXTURES, 'summary-full.json'), 'utf8'));

describe('restampHtml', () => {
  it('gives the page a full render of the final summary would give', async () => {
    const summarized = { ...fixture(), status: 'partial' as const, planName: 'a <b> & "c"' };
    delete summarized.endedAt;
    const released = { ...summarized, status: 'failed' as const, endedAt: '2026-11-30T05:02:44.000Z' };
    const page = await renderHtml(summarized);
    expect(page).not.toContain('ended 2026');
    expect(sameRender(restampHtml(page, released) ?? '')).toBe(sameRender(await renderHtml(released)));
    expect(runMetaHtml(released)).toBe(
      '<p class="run-meta">status: <strong>failed</strong> · plan a &lt;b&gt; &amp; &quot;c&quot; · started 2026-11-30T04:19:17.000Z · ended 2026-11-30T05:02:44.000Z</p>',
    );
  });

  it('leaves a page without a run line alone (undefined)', () => {
    expect(restampHtml('<html><p>status: x</p></html>', fixture())).toBeUndefined();
  });
});
