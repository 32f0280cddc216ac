/** The run summary as one self-contained HTML page (summary.html). */
import type { Summary } from '../core/model.js';
import { HEAD, overheadLines, runNotes, tableRows } from './report.js';

const esc = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A self-contained page (no scripts, no external assets) for people who open reports in a browser. */
export function renderHtml(s: Summary): string {
  const rows = tableRows(s)
    .map((r) => `<tr>${r.map((c, i) => `<td${i >= 3 && i <= 8 ? ' class="n"' : ''}>${esc(c)}</td>`).join('')}</tr>`)
    .join('\n');
  const notes = [
    ...runNotes(s),
    ...s.paths.flatMap((p) => [
      ...(p.error ? [`${p.id} failed at ${p.failedStep}: ${p.error}`] : []),
      ...overheadLines(p).map((l) => `${p.id} probe's own cost: ${l}`),
      ...((p.notes as string[] | undefined) ?? []).map((n) => `${p.id} note: ${n}`),
    ]),
  ]
    .map((n) => `<li>${esc(n)}</li>`)
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>pathbench run ${esc(s.runId)}</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem}table{border-collapse:collapse}td,th{padding:.25rem .6rem;border-bottom:1px solid #ddd;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}</style>
</head><body>
<h1>pathbench run ${esc(s.runId)}</h1>
<p>status: <strong>${esc(s.status)}</strong>${s.planName ? ` · plan ${esc(String(s.planName))}` : ''}${s.startedAt ? ` · started ${esc(String(s.startedAt))}` : ''}${s.endedAt ? ` · ended ${esc(String(s.endedAt))}` : ''}</p>
<table><thead><tr>${HEAD.map((h) => `<th>${h}</th>`).join('')}</tr></thead>
<tbody>
${rows}
</tbody></table>
${notes ? `<ul>\n${notes}\n</ul>` : ''}
</body></html>
`;
}
