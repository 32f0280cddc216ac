/**
 * What the page's charts hold, read from ECharts' SVG output: each figure's kind and its series,
 * counted three ways (legend entries, plotted line groups, bar series with drawn elements).
 */
export interface ChartCount {
  kind: string;
  caption: string;
  /** Distinct series indices among the legend's entries. */
  legend: number;
  /** Legend entry texts, in order. */
  names: string[];
  /** Clipped groups, one per drawn line series. */
  lines: number;
  /** Distinct series indices among drawn data elements (bars, symbols). */
  drawn: number;
}

export function chartsIn(html: string): ChartCount[] {
  return html
    .split('<figure')
    .slice(1)
    .map((f) => {
      const kind = /data-chart="([^"]+)"/.exec(f)?.[1] ?? '';
      const caption = /<figcaption>([^<]*)<\/figcaption>/.exec(f)?.[1] ?? '';
      const distinct = (type: string) =>
        new Set(
          [
            ...f.matchAll(
              new RegExp(`ecmeta_series_index="(\\d+)" ecmeta_data_index="\\d+" ecmeta_ssr_type="${type}"`, 'g'),
            ),
          ].map((m) => m[1]),
        ).size;
      // Legend texts are the <text> elements placed right before each legend hit area.
      const names = [...f.matchAll(/<text[^>]*>([^<]*)<\/text>\s*<path[^>]*ecmeta_ssr_type="legend"/g)].map(
        (m) => m[1],
      );
      return {
        kind,
        caption,
        legend: distinct('legend'),
        names,
        lines: (f.match(/<g clip-path=/g) ?? []).length,
        drawn: distinct('chart'),
      };
    });
}

/**
 * The charts a summary should produce, from its JSON alone: kind and series count in page order
 * (relative: p50/p95/p99 per probe and metric compared; per latency group a CDF with a line per
 * path and a histogram per path; throughput: a line per trial per path and probe).
 */
export function expectedCharts(s: Record<string, unknown>): { kind: string; series: number }[] {
  type G = { probe: string; metric: string; path: string; trial?: number };
  const key = (x: G) => `${x.probe} ${x.metric}`;
  const grouped = <T extends G>(xs: T[], k: (x: T) => string) => {
    const m = new Map<string, T[]>();
    for (const x of xs) m.set(k(x), [...(m.get(k(x)) ?? []), x]);
    return [...m.values()];
  };
  const comparisons = (s.comparisons ?? []) as G[];
  const distributions = (s.distributions ?? []) as G[];
  const series = (s.series ?? []) as G[];
  return [
    ...grouped(comparisons, key).map(() => ({ kind: 'relative', series: 3 })),
    ...grouped(distributions, key).flatMap((g) => [
      { kind: 'cdf', series: g.length },
      ...g.map(() => ({ kind: 'histogram', series: 1 })),
    ]),
    ...grouped(series, (x) => `${x.path} ${key(x)}`).map((g) => ({ kind: 'series', series: g.length })),
  ];
}
