/** ReleaseLock's reports: the final status and end time in all four, the page's charts untouched. */
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { keys } from '../../../core/keys.js';
import type { Summary } from '../../../core/run-summary.js';
import { restampReports } from '../../../functions/pipeline/run-reports.js';
import { storeReports } from '../../../functions/pipeline/summary.js';
import { DirStore } from '../../../local/dir-store.js';
import { FIXTURES } from '../../helpers/repo.js';
import { tempDataDir } from '../../helpers/samples.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

describe('restampReports', () => {
  it('brings the stored json, md, csv and html in step with the final status and end time', async () => {
    const dir = await tempDataDir('restamp');
    dirs.push(dir);
    const store = new DirStore(dir);
    const warnings: string[] = [];
    const log = { info() {}, error() {}, warn: (m: string) => warnings.push(m) };
    const summarized: Summary = JSON.parse(readFileSync(join(FIXTURES, 'summary-full.json'), 'utf8'));
    summarized.status = 'succeeded';
    delete summarized.endedAt;
    await storeReports({ store }, summarized);
    const charts = (await store.getText(keys.report(summarized.runId, 'html')))?.match(/<svg/g)?.length;
    expect(charts).toBeGreaterThan(5);

    const final = { ...summarized, status: 'failed' as const, endedAt: '2026-11-30T05:02:44.000Z' };
    await restampReports({ store, log }, final);
    const text = (ext: 'json' | 'md' | 'csv' | 'html') => store.getText(keys.report(final.runId, ext));
    expect(JSON.parse((await text('json')) ?? '{}')).toMatchObject({ status: 'failed', endedAt: final.endedAt });
    expect(await text('md')).toContain('status: **failed**');
    const page = (await text('html')) ?? '';
    expect(page).toContain('status: <strong>failed</strong>');
    expect(page).toContain(`ended ${final.endedAt}`);
    expect(page.match(/<svg/g)?.length).toBe(charts);
    expect(warnings).toEqual([]);
  });
});
