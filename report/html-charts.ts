/**
 * The charts of summary.html: ECharts' server-side SVG renderer, each chart inlined as SVG (no
 * script in the page). Each function returns the figures for one kind of data, none when the
 * summary has none of it.
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
import { gbps, PCTS, unitLabel } from './chart-units.js';
import { esc } from './html-escape.js';
import { fmt } from './report-rows.js';

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

/** Values as the tables show them: throughput in Gbit/s, the rest in the result's unit. */
const scale = (metric: string) => (metric === 'throughput_bps' ? 1e-9 : 1);

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
export function meshCharts(m: MeshSummary): string[] {
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

/** Each comparison's p50/p95/p99 as a percentage of its baseline (baseline = 100), per probe and metric. */
export function relativeCharts(cs: Comparison[]): string[] {
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
export function distributionCharts(
  ds: Distribution[],
  results: (path: string, d: Distribution) => ResultRow | undefined,
) {
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
export function seriesCharts(ss: Series[], paths: SummaryPath[]): string[] {
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

/** The seed-style results table: percentiles with their 95 % intervals, tails, trial spread, flags. */
/**
 * This run against the plan's last runs: one chart per probe, metric and judged percentile, a
 * line per path (gaps where a run was left out of the baseline), each path's baseline band
 * shaded, flagged figures in red.
 */
export function trendCharts(s: Summary): string[] {
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
