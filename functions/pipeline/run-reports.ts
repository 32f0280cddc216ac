/**
 * A run's final status and its stored reports' text renderings, apart from the HTML page's chart
 * renderer (functions/pipeline/summary.ts): ReleaseLock brings the reports SummarizeRun wrote up
 * to date with the run's final status and end time, and its bundle holds no ECharts.
 */
import { keys } from '../../core/keys.js';
import type { RunManifest } from '../../core/run-manifest.js';
import type { Summary } from '../../core/run-summary.js';
import { renderCsv } from '../../report/report-csv.js';
import { renderMarkdown } from '../../report/report-markdown.js';
import { restampHtml } from '../../report/run-meta-html.js';
import type { Deps } from '../ports.js';

/** Final status of a run from its manifest. */
export function runStatus(m: RunManifest): RunManifest['status'] {
  const failed = m.paths.filter((p) => p.status !== 'succeeded').length;
  if (m.restore?.status === 'failed') return 'failed';
  if (failed === 0) return 'succeeded';
  return failed === m.paths.length ? 'failed' : 'partial';
}

/** Store summary.json / .md / .csv under reports/run=<id>/ (the page, summary.html, is summary.ts's). */
export async function storeTextReports(deps: Pick<Deps, 'store'>, summary: Summary): Promise<void> {
  const id = summary.runId;
  await deps.store.put(keys.report(id, 'json'), `${JSON.stringify(summary, null, 2)}\n`, 'application/json');
  await deps.store.put(keys.report(id, 'md'), renderMarkdown(summary), 'text/markdown');
  await deps.store.put(keys.report(id, 'csv'), renderCsv(summary), 'text/csv');
}

/**
 * Store the reports of a summary whose status or end time changed since they were rendered: the
 * text renderings anew, and the stored page with its run line redone (its charts do not depend on
 * either), so all four agree.
 */
export async function restampReports(deps: Pick<Deps, 'store' | 'log'>, summary: Summary): Promise<void> {
  await storeTextReports(deps, summary);
  const key = keys.report(summary.runId, 'html');
  const page = await deps.store.getText(key);
  const restamped = page === undefined ? undefined : restampHtml(page, summary);
  if (restamped !== undefined) await deps.store.put(key, restamped, 'text/html');
  else if (page !== undefined) deps.log.warn('summary.html has no run line to update', { runId: summary.runId });
}
