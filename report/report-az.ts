/**
 * The AZ-pair table: per path that carries an AZ pair (AZ-pair plans) and per round-trip probe
 * (`rtt_us`: sockperf, or the agent's ping-pong probe), p50 / p99 / p99.9 / max one-way and
 * round trip side by side, the p99/p50 ratio, the modes (one-way) and whether the mean lies in a
 * valley between them. One-way is round trip / 2, sockperf's own definition (it reports
 * RTT/2); with nearest-rank percentiles halving commutes with the percentile, so the one-way
 * figures are exactly half the round-trip ones. Reads only the summary (summary.ts, distributions.ts).
 */
import type { AzPair } from '../core/resolved-plan.js';
import type { ResultRow, Summary } from '../core/run-summary.js';

/** The metric the table reads: the round trip of one exchange, µs. */
export const AZ_METRIC = 'rtt_us';

export interface AzPairRow {
  path: string;
  az: AzPair;
  probe: string;
  n: number;
  loss: number;
  /** Round trip, µs. */
  rtt: { p50: number | null; p99: number | null; p999: number | null; max: number | null };
  /** One-way = round trip / 2, µs. */
  oneWay: { p50: number | null; p99: number | null; p999: number | null; max: number | null };
  /** p99 / p50 (the same one-way and round trip). */
  ratio: number | null;
  /** Modes of the one-way distribution (µs, share 0–1). */
  modes: { at: number; share: number }[];
  /** The round-trip mean when it lies in a valley between two modes (µs). */
  valleyMeanRtt?: number;
}

const half = (v: number | null) => (v === null ? null : v / 2);

/** "apne1-az1 → apne1-az2", with the regions when they differ. */
export function pairName(az: AzPair): string {
  return az.from.region === az.to.region
    ? `${az.from.azId} → ${az.to.azId}`
    : `${az.from.azId} (${az.from.region}) → ${az.to.azId} (${az.to.region})`;
}

/** The table's rows, in the plan's path order; empty when no path carries an AZ pair. */
export function azPairRows(s: Summary): AzPairRow[] {
  const out: AzPairRow[] = [];
  for (const p of s.paths) {
    if (!p.az) continue;
    for (const r of p.results.filter((x: ResultRow) => x.metric === AZ_METRIC)) {
      const rtt = { p50: r.p50, p99: r.p99, p999: r.p999, max: r.max };
      const row: AzPairRow = {
        path: p.id,
        az: p.az,
        probe: r.probe,
        n: r.n,
        loss: r.loss,
        rtt,
        oneWay: { p50: half(r.p50), p99: half(r.p99), p999: half(r.p999), max: half(r.max) },
        ratio: r.p50 && r.p99 !== null ? r.p99 / r.p50 : null,
        modes: (r.modes ?? []).map((m) => ({ at: m.at / 2, share: m.share })),
      };
      if (r.meanInValley && r.mean !== undefined) row.valleyMeanRtt = r.mean;
      out.push(row);
    }
  }
  return out;
}

const us = (v: number | null) => (v === null ? '–' : v >= 100 ? v.toFixed(0) : v.toFixed(1));

export const AZ_HEAD = [
  'AZ pair',
  'probe',
  'n',
  'one-way p50',
  'p99',
  'p99.9',
  'max',
  'RTT p50',
  'p99',
  'p99.9',
  'max',
  'p99/p50',
  'modes (one-way)',
  'note',
];
/** Columns 2–11 are numbers (right-aligned). */
export const azNumeric = (i: number) => i >= 2 && i <= 11;

export const AZ_NOTE =
  'µs; one-way = round trip / 2 (sockperf reports one-way the same way); p99/p50 is the same either way; modes of the one-way distribution with their share';

/** The modes as "300 (50 %), 370 (30 %)" (one-way µs). */
export function modesText(modes: AzPairRow['modes']): string {
  return modes.length < 2
    ? modes.length
      ? 'one'
      : ''
    : modes.map((m) => `${us(m.at)} (${Math.round(m.share * 100)} %)`).join(', ');
}

export function valleyText(r: AzPairRow): string {
  return r.valleyMeanRtt === undefined ? '' : `mean ${us(r.valleyMeanRtt / 2)} one-way lies in a valley`;
}

/** The table's cells as text (console, Markdown, HTML). */
export function azTableRows(s: Summary): string[][] {
  return azPairRows(s).map((r) => [
    pairName(r.az),
    r.probe,
    String(r.n),
    us(r.oneWay.p50),
    us(r.oneWay.p99),
    us(r.oneWay.p999),
    us(r.oneWay.max),
    us(r.rtt.p50),
    us(r.rtt.p99),
    us(r.rtt.p999),
    us(r.rtt.max),
    r.ratio === null ? '–' : r.ratio.toFixed(2),
    modesText(r.modes),
    valleyText(r),
  ]);
}

export const CSV_AZ_HEAD = [
  'run_id',
  'path',
  'from_region',
  'from_az_id',
  'to_region',
  'to_az_id',
  'probe',
  'n',
  'loss',
  'one_way_p50_us',
  'one_way_p99_us',
  'one_way_p999_us',
  'one_way_max_us',
  'rtt_p50_us',
  'rtt_p99_us',
  'rtt_p999_us',
  'rtt_max_us',
  'p99_p50_ratio',
  'modes_one_way_us',
  'mean_in_valley',
];

/** The CSV block's rows (raw numbers; modes as "at:share" joined with spaces). */
export function azCsvRows(s: Summary): unknown[][] {
  return azPairRows(s).map((r) => [
    s.runId,
    r.path,
    r.az.from.region,
    r.az.from.azId,
    r.az.to.region,
    r.az.to.azId,
    r.probe,
    r.n,
    r.loss,
    r.oneWay.p50,
    r.oneWay.p99,
    r.oneWay.p999,
    r.oneWay.max,
    r.rtt.p50,
    r.rtt.p99,
    r.rtt.p999,
    r.rtt.max,
    r.ratio === null ? null : Number(r.ratio.toFixed(4)),
    r.modes.map((m) => `${Number(m.at.toFixed(2))}:${Number(m.share.toFixed(3))}`).join(' '),
    r.valleyMeanRtt !== undefined,
  ]);
}
