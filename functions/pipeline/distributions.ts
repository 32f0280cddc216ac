/**
 * Distribution shape in the summary: per path, probe and latency metric the
 * log-spaced histogram, the CDF points and the modes (with a path note when a distribution is
 * multimodal or its mean lies in a valley), and per iperf3 trial the throughput per interval.
 * Three queries per run — queries/histogram.sql, cdf.sql, series.sql — each run once for all
 * groups, never per group; the mode detection is core/shape.ts.
 */

import type { Distribution, ResultRow, Series, Summary, SummaryPath } from '../../core/run-summary.js';
import { contiguousBins, detectModes, LATENCY_METRICS, meanInValley } from '../../core/shape.js';
import { loadQuery } from '../../queries/sql.js';
import type { Deps } from '../ports.js';
import { groupRows, rowKey } from './query-rows.js';

/** A figure for a note: 3 significant digits, in the metric's unit. */
function fig(v: number, unit: string): string {
  return `${Number(v.toPrecision(3))} ${unit}`;
}

/** The notes for one latency distribution: its modes when there are several, the mean in a valley. */
export function shapeNotes(
  r: Pick<ResultRow, 'probe' | 'metric' | 'unit'>,
  modes: { at: number; share: number }[],
  mean: number,
  inValley: boolean,
): string[] {
  if (modes.length < 2) return [];
  const what = `${r.probe} ${r.metric}`;
  const list = modes.map((m) => `${fig(m.at, r.unit)} (${Math.round(m.share * 100)} %)`).join(', ');
  const notes = [`${what} is multimodal: ${modes.length} modes at ${list}`];
  if (inValley) {
    const below = modes.filter((m) => m.at < mean).pop();
    const above = modes.find((m) => m.at > mean);
    notes.push(
      `${what}: the mean ${fig(mean, r.unit)} lies in a valley between the modes at ${fig(below?.at ?? 0, r.unit)} and ${fig(above?.at ?? 0, r.unit)} — it describes almost no sample; read the modes and percentiles`,
    );
  }
  return notes;
}

/**
 * Fill `results[].modes`, `summary.distributions` and `summary.series` of a summary built from
 * the same run, and add shape notes to its paths. Runs each of the three queries once.
 */
export async function addDistributions(deps: Pick<Deps, 'query'>, runId: string, summary: Summary): Promise<void> {
  // Independent of each other: on Athena they run side by side.
  const [histRows, cdfRows, seriesRows] = await Promise.all([
    deps.query.query(loadQuery('histogram'), [runId], `histogram-${runId}`),
    deps.query.query(loadQuery('cdf'), [runId], `cdf-${runId}`),
    deps.query.query(loadQuery('series'), [runId], `series-${runId}`),
  ]);
  const paths = new Map<string, SummaryPath>(summary.paths.map((p) => [p.id, p]));
  const cdfs = groupRows(
    cdfRows.filter((r) => LATENCY_METRICS.has(String(r.metric))),
    rowKey,
  );
  const distributions: Distribution[] = [];
  for (const rows of groupRows(
    histRows.filter((r) => LATENCY_METRICS.has(String(r.metric))),
    rowKey,
  ).values()) {
    const first = rows[0];
    const sp = paths.get(String(first.path));
    if (!sp) continue;
    const bins = contiguousBins(rows.map((r) => ({ index: Number(r.bin), count: Number(r.count) })));
    distributions.push({
      path: String(first.path),
      probe: String(first.probe),
      metric: String(first.metric),
      unit: String(first.unit),
      bins,
      cdf: (cdfs.get(rowKey(first)) ?? []).map((c) => ({ p: Number(c.p), value: Number(c.value) })),
    });
    const result = sp.results.find(
      (x) => x.probe === first.probe && x.metric === first.metric && x.unit === first.unit,
    );
    const analysis = detectModes(bins);
    if (!result || !analysis) continue;
    result.modes = analysis.modes;
    const mean = Number(first.mean);
    const inValley = meanInValley(bins, analysis, mean);
    if (analysis.modes.length >= 2 && Number.isFinite(mean)) {
      result.mean = mean;
      if (inValley) result.meanInValley = true;
    }
    const notes = shapeNotes(result, analysis.modes, mean, inValley);
    if (notes.length) sp.notes = [...((sp.notes as string[] | undefined) ?? []), ...notes];
  }
  if (distributions.length) summary.distributions = distributions;

  const series: Series[] = [];
  for (const rows of groupRows(seriesRows, (r) => `${rowKey(r)}|${r.trial}`).values()) {
    const first = rows[0];
    if (!paths.has(String(first.path))) continue;
    series.push({
      path: String(first.path),
      probe: String(first.probe),
      trial: Number(first.trial),
      metric: String(first.metric),
      unit: String(first.unit),
      points: rows.map((r) => ({
        seq: Number(r.seq),
        t: Number(r.t),
        value: Number(r.value),
        ...(r.flag === null || r.flag === undefined ? {} : { flag: String(r.flag) }),
      })),
    });
  }
  if (series.length) summary.series = series;
}
