/**
 * The run summary as one self-contained HTML page (summary.html): tables and charts, no script,
 * no request beyond the file itself, so it opens the same from S3 or a laptop. Charts are ECharts'
 * server-side SVG renderer, inlined (report/html-charts.ts); each chart appears only when its data is
 * in the summary.
 */
import type { Comparison, Distribution, MeshSummary, ResultRow, Summary } from '../core/run-summary.js';
import { gbps, PCTS, type Pct, unitLabel } from './chart-units.js';
import { esc } from './html-escape.js';
import { AZ_HEAD, AZ_NOTE, azNumeric, azTableRows } from './report-az.js';
import { LAB_HEAD, LAB_NOTE, labNumeric, labTableRows } from './report-lab.js';
import { meshFitLines, meshMatrix } from './report-mesh.js';
import {
  fmt,
  hostNote,
  oneWayNote,
  RATIO_HEAD,
  RATIO_NOTE,
  REGRESSION_HEAD,
  REGRESSION_NOTE,
  ratioRows,
  regressionRows,
  SELECTION_HEAD,
  SELECTION_NOTE,
  selectionRows,
  trendLine,
  unitOf,
} from './report-rows.js';
import { runNotes } from './report-text.js';
import { runMetaHtml } from './run-meta-html.js';

function meshTable(m: MeshSummary): string {
  const [head, ...rows] = meshMatrix(m);
  return `<table class="mesh"><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead>
<tbody>${rows.map((r) => `<tr>${r.map((c, i) => (i === 0 ? `<th>${esc(c)}</th>` : `<td>${esc(c)}</td>`)).join('')}</tr>`).join('\n')}</tbody></table>
<ul>${meshFitLines(m)
    .map((l) => `<li>${esc(l)}</li>`)
    .join('')}</ul>`;
}

const cls = (c: string) => (c ? ` class="${c}"` : '');

function regressionTable(s: Summary): string {
  const rows = regressionRows(s);
  if (!rows.length) return '';
  const cells = rows
    .map(
      (r) =>
        `<tr class="${esc(r[8].endsWith('regression') ? 'slower' : 'faster')}">${r.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`,
    )
    .join('\n');
  return `<h2>Regressions</h2>\n<p>${esc(REGRESSION_NOTE)}</p>\n<table class="regressions"><thead><tr>${REGRESSION_HEAD.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead>\n<tbody>\n${cells}\n</tbody></table>`;
}

/**
 * A plain table of text rows under a heading and its note; nothing when there are no rows. The
 * first cell of a row is its header; `cellClass` may class the others (e.g. `n` for numbers).
 */
function textTable(
  title: string,
  note: string,
  head: string[],
  rows: string[][],
  cssClass: string,
  cellClass: (i: number, text: string) => string = () => '',
): string {
  if (!rows.length) return '';
  const body = rows.map(
    (r) =>
      `<tr>${r.map((c, i) => (i === 0 ? `<th scope="row">${esc(c)}</th>` : `<td${cls(cellClass(i, c))}>${esc(c)}</td>`)).join('')}</tr>`,
  );
  return `<h2>${esc(title)}</h2>\n<p>${esc(note)}</p>\n<table class="${cssClass}"><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead>\n<tbody>\n${body.join('\n')}\n</tbody></table>`;
}

function resultsTable(s: Summary): string {
  const head = [
    'path',
    'probe',
    'metric',
    'clock',
    'n',
    'loss',
    'p50',
    'p95',
    'p99',
    'p99.9',
    'max',
    'trials',
    'flags',
  ];
  const rows: string[] = [];
  for (const p of s.paths) {
    const state = p.status === 'succeeded' ? '' : `${p.status}${p.failedStep ? ` at ${p.failedStep}` : ''}`;
    if (p.results.length === 0) {
      rows.push(`<tr><th scope="row">${esc(p.id)}</th><td colspan="12" class="bad">${esc(state)}</td></tr>`);
      continue;
    }
    for (const r of p.results) {
      const thin = new Set(r.flags.filter((f) => f.startsWith('thin-tail:')).map((f) => f.slice('thin-tail:'.length)));
      const cell = (key: Pct | 'p999', v: number | null) => {
        const ci = key !== 'p999' ? r.ci95?.[key] : undefined;
        const tail = r.tail?.[key];
        const sub = [
          ci ? `[${fmt(ci[0], r.metric)}, ${fmt(ci[1], r.metric)}]` : '',
          tail !== undefined ? `${tail} beyond` : '',
        ].filter(Boolean);
        return `<td${cls(`n${thin.has(key) ? ' thin' : ''}`)}>${esc(fmt(v, r.metric))}${sub.map((t) => `<small>${esc(t)}</small>`).join('')}</td>`;
      };
      const trials = r.trials
        ? `${r.trials.count}<small>p50 spread ${r.trials.p50_spread_pct}%</small><small>p99 spread ${r.trials.p99_spread_pct}%</small>`
        : '';
      const flags = [state, ...r.flags]
        .filter(Boolean)
        .map((f) => `<span class="flag${/^(thin-tail|credit|at-baseline)/.test(f) ? ' warn' : ''}">${esc(f)}</span>`)
        .join(' ');
      const common = `<th scope="row">${esc(p.id)}</th>`;
      rows.push(
        `<tr>${common}<td>${esc(r.probe)}</td><td>${esc(`${r.metric} [${unitOf(r)}]`)}</td><td>${esc(p.provenance?.clocks?.[r.probe] ?? '')}${r.host ? `<small>${esc(hostNote(r))}</small>` : ''}${r.oneWay ? `<small>${esc(oneWayNote(r))}</small>` : ''}</td>` +
          `<td class="n">${r.n}</td><td class="n">${(r.loss * 100).toFixed(1)}%</td>` +
          `${cell('p50', r.p50)}${cell('p95', r.p95)}${cell('p99', r.p99)}${cell('p999', r.p999)}` +
          `<td class="n">${esc(fmt(r.max, r.metric))}</td><td class="n">${trials}</td><td>${flags}</td></tr>`,
      );
      if (r.unflagged) {
        const u = r.unflagged;
        rows.push(
          `<tr class="sub">${common}<td>${esc(r.probe)} (unflagged)</td><td>${esc(`${r.metric} [${unitOf(r)}]`)}</td><td></td>` +
            `<td class="n">${u.n}</td><td class="n">${(u.loss * 100).toFixed(1)}%</td>` +
            [u.p50, u.p95, u.p99, u.p999, u.max].map((v) => `<td class="n">${esc(fmt(v, r.metric))}</td>`).join('') +
            '<td></td><td></td></tr>',
        );
      }
    }
  }
  return `<table class="results"><thead><tr>${head.map((h) => `<th>${h}</th>`).join('')}</tr></thead>
<tbody>
${rows.join('\n')}
</tbody></table>
<p class="legend">Under each percentile: its 95 % interval and how many samples lie beyond it; <span class="thin">orange</span> figures rest on fewer than 10 samples beyond (thin tail).</p>`;
}

const signed = (v: number, metric: string) => `${v > 0 ? '+' : v < 0 ? '−' : '±'}${fmt(Math.abs(v), metric)}`;

/** path − baseline per percentile: the difference, in % of the baseline, its interval and the verdict. */
function differenceTable(cs: Comparison[]): string {
  const rows = cs.map((c) => {
    const cells = PCTS.map((k) => {
      const d = c[k];
      const v = d.verdict.replace(/ /g, '-');
      return `<td class="n">${esc(`${signed(d.diff, c.metric)} (${d.pct > 0 ? '+' : ''}${d.pct.toFixed(1)}%)`)}<small>${esc(`[${fmt(d.ci95[0], c.metric)}, ${fmt(d.ci95[1], c.metric)}]`)}</small><span class="verdict ${v}"${d.why ? ` title="${esc(d.why)}"` : ''}>${esc(d.why ? `${d.verdict}: ${d.why}` : d.verdict)}</span></td>`;
    }).join('');
    return `<tr><th scope="row">${esc(`${c.path} − ${c.baseline}`)}</th><td>${esc(c.probe)}</td><td>${esc(`${c.metric} [${unitLabel(c.metric, c.unit)}]`)}</td>${cells}</tr>`;
  });
  return `<table class="diff"><thead><tr><th>path − baseline</th><th>probe</th><th>metric</th>${PCTS.map((k) => `<th>${k}</th>`).join('')}</tr></thead>
<tbody>
${rows.join('\n')}
</tbody></table>`;
}

function overheadTable(s: Summary): string {
  const rows = s.paths.flatMap((p) =>
    Object.entries(p.probe_overhead_us ?? {}).map(
      ([kind, o]) =>
        `<tr><th scope="row">${esc(p.id)}</th><td>${esc(kind)}</td><td class="n">${o.p50_us.toFixed(1)}</td><td class="n">${o.p99_us.toFixed(1)}</td><td class="n">${o.n}</td><td>${esc(o.method)}</td></tr>`,
    ),
  );
  if (!rows.length) return '';
  return `<h2>The probes' own cost</h2>
<p>Self-calibrated on loopback before each path: a difference smaller than this is the probe, not the network.</p>
<table><thead><tr><th>path</th><th>kind</th><th>p50 µs</th><th>p99 µs</th><th>n</th><th>method</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody></table>`;
}

function provenanceTable(s: Summary): string {
  const withProv = s.paths.filter((p) => p.provenance);
  if (!withProv.length) return '';
  const kv = (r?: Record<string, string>) =>
    Object.entries(r ?? {})
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  const rows = withProv.map((p) => {
    const v = p.provenance ?? {};
    const cells = [
      v.instanceType ?? '',
      v.azId ?? '',
      v.baselineBps !== undefined ? gbps(v.baselineBps) : '',
      v.peakBps !== undefined ? gbps(v.peakBps) : '',
      v.agentVersion ?? '',
      v.kernel ?? '',
      kv(v.tools),
      kv(v.clocks),
    ];
    return `<tr><th scope="row">${esc(p.id)}</th><td>${esc(p.label)}</td>${cells.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`;
  });
  return `<h2>Provenance</h2>
<table><thead><tr><th>path</th><th>label</th><th>instance type</th><th>AZ ID</th><th>baseline</th><th>peak</th><th>agent</th><th>kernel</th><th>tools</th><th>clock per probe</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody></table>`;
}

const STYLE = `body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem;color:#222}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5rem 0;font-size:13px}table.results td.n,table.results th{white-space:nowrap}td,th{padding:.3rem .55rem;border-bottom:1px solid #e3e3e3;text-align:left;vertical-align:top}
thead th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}
small{display:block;color:#777;font-size:.78em;white-space:nowrap}.thin{color:#b85f00}tr.sub td,tr.sub th{color:#666}
.flag{display:inline-block;padding:0 .35em;margin:0 .15em .15em 0;border-radius:3px;background:#eee;font-size:.82em}
.flag.warn{background:#ffe8c2}.bad{color:#b5281c}
.verdict{display:block;font-size:.78em;font-weight:600}.verdict.slower{color:#b5281c}.verdict.faster{color:#1c7c3a}.verdict.no-clear-difference,.verdict.no-verdict{color:#777}
.charts{display:flex;flex-wrap:wrap;gap:1rem}figure{margin:0}figure.chart{border:1px solid #e3e3e3;padding:.4rem}
figcaption{font-size:.85em;color:#444;max-width:740px}figure.small figcaption{max-width:570px}.legend{color:#666;font-size:.85em}`;

/**
 * A self-contained page (no scripts, no external assets) for people who open reports in a browser.
 * ECharts (thousands of ES modules) is imported here, when a page is drawn, not when the CLI starts.
 */
export async function renderHtml(s: Summary): Promise<string> {
  const { distributionCharts, meshCharts, relativeCharts, seriesCharts, trendCharts } = await import(
    './html-charts.js'
  );
  const page = s;
  const comparisons = page.comparisons ?? [];
  const distributions = page.distributions ?? [];
  const series = page.series ?? [];
  const resultOf = (path: string, d: Distribution) =>
    s.paths.find((p) => p.id === path)?.results.find((r) => r.probe === d.probe && r.metric === d.metric) as
      | ResultRow
      | undefined;
  const notes = [
    ...runNotes(s),
    ...s.paths.flatMap((p) => [
      ...(p.error ? [`${p.id} failed at ${p.failedStep}: ${p.error}`] : []),
      ...(p.notes ?? []).map((n) => `${p.id} note: ${n}`),
      ...(p.skipped ?? []).map((k) => `${p.id} skipped ${k.probe}: ${k.reason ?? 'no reason given'}`),
    ]),
  ];
  const section = (title: string, intro: string, body: string[]) =>
    body.length ? `<h2>${esc(title)}</h2>\n<p>${esc(intro)}</p>\n<div class="charts">\n${body.join('\n')}\n</div>` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>pathbench run ${esc(s.runId)}</title>
<style>${STYLE}</style>
</head><body>
<h1>pathbench run ${esc(s.runId)}</h1>
${runMetaHtml(s)}
<h2>Results</h2>
${resultsTable(s)}
${textTable('AZ pairs', AZ_NOTE, AZ_HEAD, azTableRows(s), 'az', (i) => (azNumeric(i) ? 'n' : ''))}
${textTable('Lab', LAB_NOTE, LAB_HEAD, labTableRows(s), 'lab', (i, c) => (labNumeric(i) ? 'n' : c === 'lab error' ? 'bad' : ''))}
${comparisons.length ? `<h2>Differences</h2>\n<p>Each path minus its baseline; an interval that contains 0 (or a difference within the probes' own cost) is no clear difference.</p>\n${differenceTable(comparisons)}` : ''}
${textTable('Ratios within a path', RATIO_NOTE, RATIO_HEAD, ratioRows(s), 'ratios')}
${textTable('Selection', SELECTION_NOTE, SELECTION_HEAD, selectionRows(s), 'selection')}
${s.order ? `<p>${esc(`Paths ran in ${s.order.mode} order (run index ${s.order.index}): ${s.order.paths.join(', ')}`)}</p>` : ''}
${s.mesh ? `<h2>Mesh pairs</h2>\n<p>Latency p50 / throughput p50, client region (row) to target region (column).</p>\n${meshTable(s.mesh)}` : ''}
${s.mesh ? section('Mesh: latency and throughput', 'Latency against great-circle distance with the least-squares line; throughput against RTT with the fitted a/RTT + b curve and the window bound.', meshCharts(s.mesh)) : ''}
${section('Relative to the baseline', 'p50, p95 and p99 of each path as a percentage of its baseline path.', comparisons.length ? relativeCharts(comparisons) : [])}
${section('Latency distributions', 'Cumulative distribution per path, then each path’s histogram on log-spaced bins with its modes marked.', distributionCharts(distributions, resultOf))}
${section('Throughput per interval', 'Each trial’s throughput per interval; dots: intervals after a burst-credit cliff (credit-exhausted, red) or at the client’s baseline bandwidth (at-baseline, amber).', seriesCharts(series, s.paths))}
${regressionTable(s)}
${section('Trend', trendLine(s) ?? '', trendCharts(s))}
${overheadTable(s)}
${provenanceTable(s)}
${notes.length ? `<h2>Notes</h2>\n<ul>\n${notes.map((n) => `<li>${esc(n)}</li>`).join('\n')}\n</ul>` : ''}
</body></html>
`;
}
