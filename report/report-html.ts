/**
 * The run summary as one self-contained HTML page (summary.html): tables and charts, no script,
 * no request beyond the file itself, so it opens the same from S3 or a laptop. Charts are ECharts'
 * server-side SVG renderer, inlined; each chart appears only when its data is in the summary.
 */
import { BarChart, LineChart, ScatterChart } from 'echarts/charts';
import { GridComponent, LegendComponent, MarkAreaComponent, MarkLineComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { SVGRenderer } from 'echarts/renderers';
import type {
  Comparison,
  Distribution,
  MeshSummary,
  ResultRow,
  Series,
  Summary,
  SummaryPath,
  TrendSeries,
} from '../core/run-summary.js';
import { AZ_HEAD, AZ_NOTE, azNumeric, azTableRows } from './report-az.js';
import { meshFitLines, meshMatrix } from './report-mesh.js';
import { fmt, REGRESSION_HEAD, REGRESSION_NOTE, regressionRows, runNotes, trendLine, unitOf } from './report-text.js';

echarts.use([
  BarChart,
  LineChart,
  ScatterChart,
  GridComponent,
  LegendComponent,
  MarkAreaComponent,
  MarkLineComponent,
  SVGRenderer,
]);

type Pct = 'p50' | 'p95' | 'p99';

const PCTS: Pct[] = ['p50', 'p95', 'p99'];

export const esc = (t: string) =>
  t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** Values as the tables show them: throughput in Gbit/s, the rest in the result's unit. */
const scale = (metric: string) => (metric === 'throughput_bps' ? 1e-9 : 1);
const unitLabel = (metric: string, unit: string) => unitOf({ metric, unit });
const gbps = (bps: number) => `${(bps / 1e9).toFixed(3)} Gbit/s`;

/** One chart as inline SVG; dispose() releases the instance (an undisposed one keeps a timer alive). */
function svgChart(option: echarts.EChartsCoreOption, width: number, height: number): string {
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width, height });
  try {
    chart.setOption({ animation: false, textStyle: { fontFamily: 'system-ui, sans-serif' }, ...option });
    return chart.renderToSVGString();
  } finally {
    chart.dispose();
  }
}

function figure(kind: string, caption: string, svg: string, wide = true): string {
  return `<figure class="chart${wide ? '' : ' small'}" data-chart="${esc(kind)}"><figcaption>${esc(caption)}</figcaption>\n${svg}\n</figure>`;
}

const legend = { type: 'plain', bottom: 0 } as const;
const grid = { left: 64, right: 24, top: 24, bottom: 64 } as const;
const groupKey = (x: { probe: string; metric: string }) => `${x.probe}\u0000${x.metric}`;
function groups<T extends { probe: string; metric: string }>(xs: T[]): T[][] {
  const m = new Map<string, T[]>();
  for (const x of xs) m.set(groupKey(x), [...(m.get(groupKey(x)) ?? []), x]);
  return [...m.values()];
}

/**
 * A mesh run's two scatter charts: latency p50 against great-circle distance with its least-squares
 * line, and throughput p50 against RTT with the fitted a/RTT + b curve and the window bound W/RTT.
 */
function meshCharts(m: MeshSummary): string[] {
  const out: string[] = [];
  const lat = m.pairs.filter((p) => p.latencyMs !== null);
  const l = m.latencyVsDistance;
  if (lat.length > 0) {
    const xs = lat.map((p) => p.distanceKm);
    const [x0, x1] = [0, Math.max(...xs)];
    const series: unknown[] = [
      { type: 'scatter', name: 'pairs', data: lat.map((p) => [p.distanceKm, p.latencyMs]), symbolSize: 6 },
    ];
    if (l)
      series.push({
        type: 'line',
        name: `fit (r = ${l.r.toFixed(3)})`,
        data: [
          [x0, l.intercept],
          [x1, l.slope * x1 + l.intercept],
        ],
        showSymbol: false,
      });
    out.push(
      figure(
        'mesh-latency-distance',
        `Latency p50 vs distance${l ? `: ${(l.slope * 1000).toFixed(2)} ms per 1000 km + ${l.intercept.toFixed(2)} ms, r = ${l.r.toFixed(3)}` : ''}`,
        svgChart(
          {
            legend,
            grid,
            xAxis: { type: 'value', name: 'km', nameLocation: 'middle', nameGap: 28 },
            yAxis: { type: 'value', name: 'ms' },
            series,
          },
          720,
          360,
        ),
      ),
    );
  }
  const thr = m.pairs.filter((p) => p.latencyMs !== null && p.latencyMs > 0 && p.throughputBps !== null);
  if (thr.length > 0) {
    const rtts = thr.map((p) => p.latencyMs!);
    const lo = Math.min(...rtts);
    const hi = Math.max(...rtts);
    const steps = 40;
    const grid40 = Array.from({ length: steps + 1 }, (_, i) => lo + ((hi - lo) * i) / steps);
    const t = m.throughputVsInverseRtt;
    const series: unknown[] = [
      { type: 'scatter', name: 'pairs', data: thr.map((p) => [p.latencyMs, p.throughputBps! / 1e9]), symbolSize: 6 },
      {
        type: 'line',
        name: `window bound W/RTT (W = ${(m.windowBytes / 1048576).toFixed(0)} MiB)`,
        data: grid40.map((x) => [x, (m.windowBytes * 8) / (x / 1000) / 1e9]),
        showSymbol: false,
        lineStyle: { type: 'dashed' },
      },
    ];
    if (t)
      series.push({
        type: 'line',
        name: `fit a/RTT + b (r = ${t.r.toFixed(3)})`,
        data: grid40.map((x) => [x, (t.slope * (1000 / x) + t.intercept) / 1e9]),
        showSymbol: false,
      });
    out.push(
      figure(
        'mesh-throughput-rtt',
        `Throughput p50 vs RTT${t ? `, r (throughput, 1/RTT) = ${t.r.toFixed(3)}` : ''}; dashed: the window bound`,
        svgChart(
          {
            legend,
            grid,
            xAxis: { type: 'value', name: 'RTT ms', nameLocation: 'middle', nameGap: 28 },
            yAxis: { type: 'log', name: 'Gbit/s' },
            series,
          },
          720,
          360,
        ),
      ),
    );
  }
  return out;
}

function meshTable(m: MeshSummary): string {
  const [head, ...rows] = meshMatrix(m);
  return `<table class="mesh"><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead>
<tbody>${rows.map((r) => `<tr>${r.map((c, i) => (i === 0 ? `<th>${esc(c)}</th>` : `<td>${esc(c)}</td>`)).join('')}</tr>`).join('\n')}</tbody></table>
<ul>${meshFitLines(m)
    .map((l) => `<li>${esc(l)}</li>`)
    .join('')}</ul>`;
}

/** Each comparison's p50/p95/p99 as a percentage of its baseline (baseline = 100), per probe and metric. */
function relativeCharts(cs: Comparison[]): string[] {
  return groups(cs).map((g) => {
    const oneBaseline = new Set(g.map((c) => c.baseline)).size === 1;
    const names = g.map((c) =>
      c.path === c.baseline ? `${c.path} (baseline)` : oneBaseline ? c.path : `${c.path} vs ${c.baseline}`,
    );
    const svg = svgChart(
      {
        legend,
        grid,
        xAxis: { type: 'category', data: names },
        yAxis: { type: 'value', name: '% of baseline', min: 0 },
        series: PCTS.map((k, i) => ({
          name: k,
          type: 'bar',
          data: g.map((c) => Math.round((100 + c[k].pct) * 10) / 10),
          ...(i === 0
            ? {
                markLine: {
                  symbol: 'none',
                  silent: true,
                  lineStyle: { color: '#555', type: 'dashed' },
                  label: { formatter: 'baseline = 100', position: 'insideStartTop' },
                  data: [{ yAxis: 100 }],
                },
              }
            : {}),
        })),
      },
      760,
      340,
    );
    return figure('relative', `${g[0].probe} ${g[0].metric}: each path relative to its baseline (= 100)`, svg);
  });
}

/** One CDF chart per probe and metric (a line per path), then one histogram per path with its modes marked. */
function distributionCharts(ds: Distribution[], results: (path: string, d: Distribution) => ResultRow | undefined) {
  const out: string[] = [];
  for (const g of groups(ds)) {
    const k = scale(g[0].metric);
    const positive = g.every((d) => d.cdf.every((c) => c.value > 0));
    const svg = svgChart(
      {
        legend,
        grid,
        xAxis: {
          type: positive ? 'log' : 'value',
          name: unitLabel(g[0].metric, g[0].unit),
          nameLocation: 'middle',
          nameGap: 28,
          scale: true,
        },
        yAxis: { type: 'value', min: 0, max: 1, name: 'share ≤ x' },
        series: g.map((d) => ({
          name: d.path,
          type: 'line',
          step: 'end',
          showSymbol: false,
          data: d.cdf.map((c) => [c.value * k, c.p]),
        })),
      },
      760,
      340,
    );
    out.push(figure('cdf', `${g[0].probe} ${g[0].metric}: latency CDF per path`, svg));
    for (const d of g) {
      const modes = results(d.path, d)?.modes ?? [];
      const label = (b: { lo: number; hi: number }) => fmt((b.lo * b.hi) ** 0.5 * k, d.metric);
      const names = d.bins.map(label);
      const modeBins = modes
        .map((m) => ({ m, i: d.bins.findIndex((b) => m.at >= b.lo && m.at <= b.hi) }))
        .filter((x) => x.i >= 0);
      const hsvg = svgChart(
        {
          legend,
          grid: { left: 48, right: 12, top: 28, bottom: 64 },
          xAxis: {
            type: 'category',
            data: names,
            name: unitLabel(d.metric, d.unit),
            nameLocation: 'middle',
            nameGap: 26,
          },
          yAxis: { type: 'value', name: 'samples' },
          series: [
            {
              name: d.path,
              type: 'bar',
              barCategoryGap: '8%',
              data: d.bins.map((b) => b.count),
              ...(modeBins.length > 1
                ? {
                    markLine: {
                      symbol: 'none',
                      silent: true,
                      lineStyle: { color: '#b5281c', type: 'dashed' },
                      label: { formatter: '{b}', position: 'end', fontSize: 10 },
                      data: modeBins.map(({ m, i }) => ({
                        name: `${fmt(m.at * k, d.metric)} (${Math.round(m.share * 100)}%)`,
                        xAxis: i,
                      })),
                    },
                  }
                : {}),
            },
          ],
        },
        380,
        240,
      );
      const modeText = modes.length
        ? ` · ${modes.length} mode${modes.length > 1 ? 's' : ''}: ${modes.map((m) => `${fmt(m.at * k, d.metric)} (${Math.round(m.share * 100)}%)`).join(', ')}`
        : '';
      out.push(figure('histogram', `${d.path} ${d.probe} histogram (log-spaced bins)${modeText}`, hsvg, false));
    }
  }
  return out;
}

const FLAG_COLOUR: Record<string, string> = { 'credit-exhausted': '#c8281e', 'at-baseline': '#e69600' };

/**
 * Throughput per interval, one chart per path and probe, a line per trial: flagged intervals are
 * drawn as dots in the flag's colour (the trial's legend entry names its flags), a cliff gets a
 * vertical line where it starts, and the client's baseline bandwidth a dotted level.
 */
function seriesCharts(ss: Series[], paths: SummaryPath[]): string[] {
  const byPathProbe = new Map<string, Series[]>();
  for (const s of ss) {
    const key = `${s.path}\u0000${s.probe}\u0000${s.metric}`;
    byPathProbe.set(key, [...(byPathProbe.get(key) ?? []), s]);
  }
  return [...byPathProbe.values()].map((g) => {
    const k = scale(g[0].metric);
    const prov = paths.find((p) => p.id === g[0].path)?.provenance;
    const bandwidth = g[0].metric === 'throughput_bps' ? prov : undefined;
    const svg = svgChart(
      {
        legend,
        grid: { left: 48, right: 16, top: 28, bottom: 64 },
        xAxis: { type: 'value', name: 'interval', nameLocation: 'middle', nameGap: 24, minInterval: 1 },
        yAxis: { type: 'value', name: unitLabel(g[0].metric, g[0].unit), min: 0 },
        series: [...g]
          .sort((a, b) => a.trial - b.trial)
          .map((s, i) => {
            const flags = [...new Set(s.points.flatMap((p) => (p.flag ? [p.flag] : [])))];
            const cliff = s.points.find((p) => p.flag === 'credit-exhausted');
            const lines = [
              ...(i === 0 && bandwidth?.baselineBps ? [{ name: 'baseline', yAxis: bandwidth.baselineBps * k }] : []),
              ...(cliff ? [{ name: `cliff (trial ${s.trial})`, xAxis: cliff.seq }] : []),
            ];
            return {
              name: `trial ${s.trial}${flags.length ? ` · ${flags.join(', ')}` : ''}`,
              type: 'line',
              symbol: 'none',
              data: s.points.map((p) =>
                p.flag
                  ? {
                      value: [p.seq, p.value * k],
                      symbol: 'circle',
                      symbolSize: 5,
                      itemStyle: { color: FLAG_COLOUR[p.flag] ?? '#777' },
                    }
                  : [p.seq, p.value * k],
              ),
              ...(lines.length
                ? {
                    markLine: {
                      symbol: 'none',
                      silent: true,
                      lineStyle: { color: '#777', type: 'dotted' },
                      label: { formatter: '{b}', position: 'insideEndTop', fontSize: 10 },
                      data: lines,
                    },
                  }
                : {}),
            };
          }),
      },
      580,
      280,
    );
    const levels = [
      bandwidth?.baselineBps ? `baseline ${gbps(bandwidth.baselineBps)}` : '',
      bandwidth?.peakBps ? `peak ${gbps(bandwidth.peakBps)}` : '',
    ].filter(Boolean);
    const note = levels.length ? ` · ${bandwidth?.instanceType ?? 'client'}: ${levels.join(', ')}` : '';
    return figure('series', `${g[0].path} ${g[0].probe}: ${g[0].metric} per interval, per trial${note}`, svg, false);
  });
}

const cls = (c: string) => (c ? ` class="${c}"` : '');

/** The seed-style results table: percentiles with their 95 % intervals, tails, trial spread, flags. */
/**
 * This run against the plan's last runs: one chart per probe, metric and judged percentile, a
 * line per path (gaps where a run was left out of the baseline), each path's baseline band
 * shaded, flagged figures in red.
 */
function trendCharts(s: Summary): string[] {
  const all = s.trend ?? [];
  const m = new Map<string, TrendSeries[]>();
  for (const t of all) {
    const key = `${t.probe}\u0000${t.metric}\u0000${t.percentile}`;
    m.set(key, [...(m.get(key) ?? []), t]);
  }
  const out: string[] = [];
  for (const g of m.values()) {
    if (!g.some((t) => t.points.length > 1)) continue;
    const { probe, metric, unit, percentile } = g[0];
    const k = scale(metric);
    const runs = [...new Set(g.flatMap((t) => t.points.map((p) => p.runId)))];
    const flagged = new Set(
      (s.regressions ?? [])
        .filter((r) => r.probe === probe && r.metric === metric && r.percentile === percentile)
        .map((r) => r.path),
    );
    const svg = svgChart(
      {
        legend,
        grid: { ...grid, bottom: 96 },
        // Every run named (this one last), slanted so long run ids fit.
        xAxis: {
          type: 'category',
          data: runs.map((r) => (r === s.runId ? `${r} (this run)` : r)),
          axisLabel: { interval: 0, rotate: 30, fontSize: 10 },
        },
        yAxis: { type: 'value', name: unitLabel(metric, unit), scale: true },
        series: g.map((t) => ({
          name: t.path,
          type: 'line',
          connectNulls: false,
          data: runs.map((r) => {
            const p = t.points.find((x) => x.runId === r);
            const v = p && !p.excluded && p.value !== null ? p.value * k : null;
            return r === s.runId && flagged.has(t.path) && v !== null
              ? { value: v, symbolSize: 12, itemStyle: { color: '#b5281c' } }
              : v;
          }),
          ...(t.band
            ? {
                markArea: {
                  silent: true,
                  itemStyle: { opacity: 0.12 },
                  data: [[{ yAxis: t.band[0] * k }, { yAxis: t.band[1] * k }]],
                },
              }
            : {}),
        })),
      },
      760,
      340,
    );
    out.push(figure('trend', `${probe} ${metric} ${percentile}: this run against the plan's last runs`, svg));
  }
  return out;
}

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
        `<tr>${common}<td>${esc(r.probe)}</td><td>${esc(`${r.metric} [${unitOf(r)}]`)}</td><td>${esc(p.provenance?.clocks?.[r.probe] ?? '')}</td>` +
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
      return `<td class="n">${esc(`${signed(d.diff, c.metric)} (${d.pct > 0 ? '+' : ''}${d.pct.toFixed(1)}%)`)}<small>${esc(`[${fmt(d.ci95[0], c.metric)}, ${fmt(d.ci95[1], c.metric)}]`)}</small><span class="verdict ${v}">${esc(d.verdict)}</span></td>`;
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
.verdict{display:block;font-size:.78em;font-weight:600}.verdict.slower{color:#b5281c}.verdict.faster{color:#1c7c3a}.verdict.no-clear-difference{color:#777}
.charts{display:flex;flex-wrap:wrap;gap:1rem}figure{margin:0}figure.chart{border:1px solid #e3e3e3;padding:.4rem}
figcaption{font-size:.85em;color:#444;max-width:740px}figure.small figcaption{max-width:570px}.legend{color:#666;font-size:.85em}`;

/** The AZ-pair table (AZ-pair plans only): one-way and round trip side by side. */
function azPairTable(s: Summary): string {
  const rows = azTableRows(s);
  if (!rows.length) return '';
  const body = rows
    .map(
      (r) =>
        `<tr>${r.map((c, i) => (i === 0 ? `<th scope="row">${esc(c)}</th>` : `<td${azNumeric(i) ? ' class="n"' : ''}>${esc(c)}</td>`)).join('')}</tr>`,
    )
    .join('\n');
  return `<h2>AZ pairs</h2>\n<p>${esc(AZ_NOTE)}</p>\n<table class="az"><thead><tr>${AZ_HEAD.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead>\n<tbody>\n${body}\n</tbody></table>`;
}

/** A self-contained page (no scripts, no external assets) for people who open reports in a browser. */
export function renderHtml(s: Summary): string {
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
  const meta = [
    `status: <strong>${esc(s.status)}</strong>`,
    s.planName ? `plan ${esc(String(s.planName))}` : '',
    s.startedAt ? `started ${esc(String(s.startedAt))}` : '',
    s.endedAt ? `ended ${esc(String(s.endedAt))}` : '',
  ].filter(Boolean);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>pathbench run ${esc(s.runId)}</title>
<style>${STYLE}</style>
</head><body>
<h1>pathbench run ${esc(s.runId)}</h1>
<p>${meta.join(' · ')}</p>
<h2>Results</h2>
${resultsTable(s)}
${azPairTable(s)}
${comparisons.length ? `<h2>Differences</h2>\n<p>Each path minus its baseline; an interval that contains 0 (or a difference within the probes' own cost) is no clear difference.</p>\n${differenceTable(comparisons)}` : ''}
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
