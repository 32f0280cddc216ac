/**
 * What every rendering of a run summary for people shows, as rows of text: the results (each
 * percentile with its interval, flags and trial spread), the differences, the regressions,
 * the trend line and the probes' own cost, with their heads and notes.
 */
import type { Comparison, DiffCell, RatioCell, ResultRow, Summary, SummaryPath } from '../core/run-summary.js';

/**
 * "tcp-connect p50 2.0 µs / p99 5.0 µs (method)" per calibrated kind: shown next to the results
 * so a reader sees when a path's latency is within the probe's own noise.
 */
export function overheadLines(p: SummaryPath): string[] {
  return Object.entries(p.probe_overhead_us ?? {}).map(
    ([kind, c]) => `${kind} p50 ${c.p50_us.toFixed(1)} µs / p99 ${c.p99_us.toFixed(1)} µs (${c.method})`,
  );
}

/** A figure as the tables show it: throughput in Gbit/s, three significant-ish digits otherwise. */
export function fmt(v: number | null, metric: string): string {
  if (v === null) return '–';
  if (metric === 'throughput_bps') return (v / 1e9).toFixed(2);
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 10) return v.toFixed(2);
  return v.toFixed(3);
}

/** The unit the tables show a result in (throughput in Gbit/s). */
export const unitOf = (r: Pick<ResultRow, 'metric' | 'unit'>) => (r.metric === 'throughput_bps' ? 'Gbit/s' : r.unit);

/** "1.234 [1.200–1.300]": a percentile with its 95 % interval when there is one. */
function withInterval(v: number | null, ci: [number, number] | undefined, metric: string): string {
  const value = fmt(v, metric);
  return ci ? `${value} [${fmt(ci[0], metric)}–${fmt(ci[1], metric)}]` : value;
}

/** "trials 3: p50 ±1.2 %, p99 ±17.0 %" when the probe ran several trials. */
function trialsNote(r: ResultRow): string {
  const t = r.trials;
  return t
    ? `trials ${t.count}: p50 spread ${t.p50_spread_pct.toFixed(1)}%, p99 spread ${t.p99_spread_pct.toFixed(1)}%`
    : '';
}

/**
 * "host p50 6.1 µs, p99 12.4 µs (kernel-sw)": the client's own part of the round trip when the
 * kernel timed it (the figure itself is then the network's), so a reader sees host and network apart.
 */
export function hostNote(r: Pick<ResultRow, 'host'>): string {
  const h = r.host;
  if (!h) return '';
  const us = (v: number | null) => (v === null ? '–' : `${v.toFixed(1)} µs`);
  return `host p50 ${us(h.p50_us)}, p99 ${us(h.p99_us)} (${h.ts_source})`;
}

/**
 * A one-way figure is shown as a number only when its clocks' bound is at most this share of it:
 * a figure whose bound is larger could as well be half or twice itself, so it is not one.
 */
export const ONE_WAY_MAX_BOUND_SHARE = 0.5;

/**
 * "one-way p50 fwd 612.5 µs, rev 201.0 µs (clocks ±0 µs)": pingpong's forward and reverse delays
 * when the server sent its clock readings. A direction whose bound exceeds ONE_WAY_MAX_BOUND_SHARE
 * of it is "not shown" (the bound is printed once, at the end).
 */
export function oneWayNote(r: Pick<ResultRow, 'oneWay'>): string {
  const o = r.oneWay;
  if (!o) return '';
  const bound = o.clock_error_us;
  const show = (v: number | null) =>
    v === null
      ? '–'
      : bound === 0 || bound <= ONE_WAY_MAX_BOUND_SHARE * Math.abs(v)
        ? `${v.toFixed(1)} µs`
        : 'not shown';
  return `one-way p50 fwd ${show(o.fwd_p50_us)}, rev ${show(o.rev_p50_us)} (clocks ±${bound} µs)`;
}

/** Rows of the human tables: one per path × result (the seed's layout: path, n, loss, p50…). */
export function tableRows(s: Summary): string[][] {
  const out: string[][] = [];
  for (const p of s.paths) {
    if (p.results.length === 0) {
      out.push([p.id, '', '', '', '', '', '', '', '', '', `${p.status}${p.failedStep ? ` at ${p.failedStep}` : ''}`]);
      continue;
    }
    for (const r of p.results) {
      out.push(tableRow(p, r, r.probe, r, [...r.flags, trialsNote(r), hostNote(r), oneWayNote(r)], r.ci95));
      if (r.unflagged) out.push(tableRow(p, r, `${r.probe} (unflagged)`, r.unflagged, []));
    }
  }
  return out;
}

function tableRow(
  p: SummaryPath,
  r: ResultRow,
  label: string,
  f: Pick<ResultRow, 'n' | 'loss' | 'p50' | 'p95' | 'p99' | 'max'>,
  flags: string[],
  ci?: ResultRow['ci95'],
): string[] {
  return [
    p.id,
    label,
    `${r.metric} [${unitOf(r)}]`,
    String(f.n),
    `${(f.loss * 100).toFixed(1)}%`,
    withInterval(f.p50, ci?.p50, r.metric),
    withInterval(f.p95, ci?.p95, r.metric),
    withInterval(f.p99, ci?.p99, r.metric),
    fmt(f.max, r.metric),
    f === r && r.rps !== undefined ? r.rps.toFixed(r.rps >= 100 ? 0 : 1) : '',
    [p.status === 'succeeded' ? '' : `${p.status}${p.failedStep ? ` at ${p.failedStep}` : ''}`, ...flags]
      .filter(Boolean)
      .join(' '),
  ];
}

export const HEAD = [
  'path',
  'probe',
  'metric',
  'n',
  'loss',
  'p50 [95% CI]',
  'p95 [95% CI]',
  'p99 [95% CI]',
  'max',
  'rps',
  'notes',
];

/** The difference table's columns: path − baseline per percentile (the seed's B−A rows). */
export const DIFF_HEAD = ['comparison', 'probe', 'metric', 'p50', 'p95', 'p99'];

function signed(v: number, metric: string): string {
  const t = fmt(v, metric);
  return v > 0 ? `+${t}` : t;
}

/** "+0.203 (+13.6%) [0.158, 0.256] slower" */
export function diffText(c: DiffCell, metric: string): string {
  const pct = `${c.pct > 0 ? '+' : ''}${c.pct.toFixed(1)}%`;
  return `${signed(c.diff, metric)} (${pct}) [${signed(c.ci95[0], metric)}, ${signed(c.ci95[1], metric)}] ${c.why ? `${c.verdict}: ${c.why}` : c.verdict}`;
}

/** Rows of the difference table: one per comparison, probe and metric. */
export function diffRows(s: Summary): string[][] {
  return (s.comparisons ?? []).map((c: Comparison) => [
    `${c.path} − ${c.baseline}`,
    c.probe,
    `${c.metric} [${unitOf(c)}]`,
    diffText(c.p50, c.metric),
    diffText(c.p95, c.metric),
    diffText(c.p99, c.metric),
  ]);
}

/** The ratio table's columns: probe ÷ baseline probe of one path per percentile (seed 002's keep-alive off ÷ on). */
export const RATIO_HEAD = ['path', 'ratio', 'metric', 'p50', 'p95', 'p99'];

/** "3.52× [3.30, 3.77] slower" */
export function ratioText(c: RatioCell): string {
  const x = (v: number) => `${v.toFixed(v >= 10 ? 1 : 2)}×`;
  return `${x(c.ratio)} [${x(c.ci95[0])}, ${x(c.ci95[1])}] ${c.why ? `${c.verdict}: ${c.why}` : c.verdict}`;
}

/** Rows of the ratio table: one per path, probe pair and metric. */
export function ratioRows(s: Summary): string[][] {
  return (s.ratios ?? []).map((r) => [
    r.path,
    `${r.probe} ÷ ${r.baselineProbe}`,
    `${r.metric} [${unitOf(r)}]`,
    ratioText(r.p50),
    ratioText(r.p95),
    ratioText(r.p99),
  ]);
}

export const RATIO_NOTE =
  'probe ÷ baseline probe of the same path per percentile [95 % interval]; "slower" when the probe\'s figure is worse, "no clear difference" when the interval contains 1; "no verdict" (and why) when too few samples lie around the percentile';

/** The selection table's columns (seed 000 §8): per path its method, figures and cost. */
export const SELECTION_HEAD = [
  'path',
  'method',
  'latency',
  'p50 [95% CI]',
  'p99 [95% CI]',
  'loss',
  'Gbit/s',
  'MTU',
  '$/month',
  '$/GB',
];

const money = (v: number | null, digits: number) => (v === null ? '–' : `$${v.toFixed(digits)}`);

/** Rows of the selection table: one per path. */
export function selectionRows(s: Summary): string[][] {
  return (s.selection ?? []).map((r) => {
    const l = r.latency;
    return [
      r.path,
      r.method,
      l ? `${l.probe} [${l.unit}]` : '–',
      l ? withInterval(l.p50, l.p50_ci95, l.metric) : '–',
      l ? withInterval(l.p99, l.p99_ci95, l.metric) : '–',
      l ? `${(l.loss * 100).toFixed(1)}%` : '–',
      fmt(r.throughputBps, 'throughput_bps'),
      r.mtuBytes === null ? '–' : String(r.mtuBytes),
      money(r.fixedUsdPerMonth, 2),
      money(r.usdPerGb, 4),
    ];
  });
}

export const SELECTION_NOTE =
  "latency from the path's most direct probe (ping, sockperf, pingpong, tcp-connect, http); Gbit/s the best iperf3 p50; $/month the method's fixed bill (730 h, on top of the instances) and $/GB the link's transfer plus the method's processing, from the shipped price table (core/prices.json)";

export const INTERVAL_NOTE =
  '[…] = 95 % interval (distribution-free, order statistics); thin-tail:pXX = fewer than 10 samples beyond that percentile';
export const DIFF_NOTE =
  'path − baseline per percentile (% of baseline) [95 % interval]; "no clear difference" when the interval contains 0 or the difference is within the probes\' own cost; "no verdict" (and why) when too few samples lie around the percentile to judge';

/** The regression table's columns: this run against the plan's baseline band (regressions.ts). */
export const REGRESSION_HEAD = [
  'path',
  'probe',
  'metric',
  'pct',
  'this run [95 %]',
  'baseline',
  'band',
  'runs',
  'change',
];
export const REGRESSION_NOTE =
  "flagged when this run's 95 % interval lies wholly outside the band of the plan's last clean runs, after the run's common shift (median ± max(4 · 1.4826 · MAD, their typical interval, the plan's floor: 5 % unless regression.minRelative sets it)); with regression.paired, a path is judged by its difference from the reference measured in its own probe (\"paired with\"); failed, credit-flagged and thin-tail figures are left out";

/** Rows of the regression table: one per flagged percentile. */
export function regressionRows(s: Summary): string[][] {
  return (s.regressions ?? []).map((g) => [
    g.path,
    g.probe,
    `${g.metric} [${unitOf(g)}]`,
    g.percentile,
    withInterval(g.value, g.ci95, g.metric),
    fmt(g.baseline, g.metric),
    `${fmt(g.band[0], g.metric)}–${fmt(g.band[1], g.metric)}`,
    String(g.runsInBaseline),
    `${g.change_pct > 0 ? '+' : ''}${g.change_pct.toFixed(1)}% ${g.direction}${g.pairedWith ? ` (paired with ${g.pairedWith})` : ''}`,
  ]);
}

/** One line on the judgement: how many figures were judged, and against how many runs. */
export function trendLine(s: Summary): string | undefined {
  const judged = (s.trend ?? []).filter((t) => t.band);
  if (!s.trend?.length) return undefined;
  if (judged.length === 0) return 'trend: not judged yet (fewer than 5 clean earlier runs of this plan)';
  const flagged = s.regressions?.length ?? 0;
  return `trend: ${judged.length} figures judged against the plan's earlier runs; ${flagged === 0 ? 'no regression' : `${flagged} flagged`}`;
}
