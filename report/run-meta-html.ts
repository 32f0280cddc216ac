/**
 * The HTML report's run line (status, plan, start and end) on its own, without the charts: ReleaseLock
 * brings a stored report's status and end time up to date with restampHtml, and so needs no chart
 * renderer (only SummarizeRun's bundle carries ECharts).
 */
import type { Summary } from '../core/run-summary.js';
import { esc } from './html-escape.js';

const RUN_META = /<p class="run-meta">[^\n]*<\/p>/;

/** The run line of summary.html: `<p class="run-meta">status · plan · started · ended</p>`. */
export function runMetaHtml(s: Summary): string {
  const meta = [
    `status: <strong>${esc(s.status)}</strong>`,
    s.planName ? `plan ${esc(String(s.planName))}` : '',
    s.startedAt ? `started ${esc(String(s.startedAt))}` : '',
    s.endedAt ? `ended ${esc(String(s.endedAt))}` : '',
  ].filter(Boolean);
  return `<p class="run-meta">${meta.join(' · ')}</p>`;
}

/**
 * A rendered report with its run line redone for `s`; the rest of the page does not depend on the
 * run's status or end time. Undefined when the page has no run line (rendered before it had one).
 */
export function restampHtml(html: string, s: Summary): string | undefined {
  if (!RUN_META.test(html)) return undefined;
  return html.replace(RUN_META, () => runMetaHtml(s));
}
