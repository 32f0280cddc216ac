/** Mesh results: the fits, the pair matrix and its renderings (console, Markdown, CSV, HTML charts). */
import { describe, expect, it } from 'vitest';
import type { MeshFacts } from '../../../core/resolved-plan.js';
import type { ResultRow, Summary, SummaryPath } from '../../../core/run-summary.js';
import { DEFAULT_WINDOW_BYTES, fitLine, meshSummary } from '../../../functions/pipeline/mesh-summary.js';
import { CSV_MESH_HEAD, renderCsv } from '../../../report/report-csv.js';
import { renderHtml } from '../../../report/report-html.js';
import { renderMarkdown } from '../../../report/report-markdown.js';
import { meshMatrix } from '../../../report/report-mesh.js';
import { renderTable } from '../../../report/report-text.js';
import { chartsIn } from '../../helpers/report-html.js';

const row = (probe: string, metric: string, unit: string, p50: number): ResultRow => ({
  probe,
  metric,
  unit,
  n: 10,
  loss: 0,
  p50,
  p95: p50,
  p99: p50,
  p999: p50,
  max: p50,
  flags: [],
});

const REGIONS = ['a', 'b', 'c'];
const KM: Record<string, number> = { 'a>b': 1000, 'a>c': 3000, 'b>c': 2000 };
const km = (x: string, y: string) => KM[`${x}>${y}`] ?? KM[`${y}>${x}`]!;

/** Latency exactly 0.01 ms/km + 2 ms; throughput exactly 4e6 bit · (1/RTT) + 1e8. */
function meshRun(): { paths: SummaryPath[]; facts: Map<string, MeshFacts> } {
  const paths: SummaryPath[] = [];
  const facts = new Map<string, MeshFacts>();
  let round = 0;
  for (const from of REGIONS)
    for (const to of REGIONS) {
      if (from === to) continue;
      const id = `${from}_${to}`;
      const lat = 0.01 * km(from, to) + 2;
      paths.push({
        id,
        label: id,
        status: 'succeeded',
        steps: [],
        results: [
          row('tcp-connect', 'connect_rtt_ms', 'ms', lat),
          row('iperf3', 'throughput_bps', 'bit/s', 4e6 * (1000 / lat) + 1e8),
        ],
      });
      facts.set(id, { from, to, distanceKm: km(from, to), round: round++ % 3 });
    }
  return { paths, facts };
}

describe('fitLine', () => {
  it('recovers an exact line with r = 1, and a falling one with r = -1', () => {
    expect(
      fitLine([
        [0, 1],
        [1, 3],
        [2, 5],
      ]),
    ).toEqual({ slope: 2, intercept: 1, r: 1, n: 3 });
    expect(
      fitLine([
        [0, 5],
        [1, 3],
        [2, 1],
      ])!.r,
    ).toBeCloseTo(-1, 12);
  });

  it('matches the textbook r for scattered points', () => {
    // x = 1..5, y = 2, 4, 5, 4, 5: r = 6 / sqrt(10 · 6) = 0.7746
    const f = fitLine([
      [1, 2],
      [2, 4],
      [3, 5],
      [4, 4],
      [5, 5],
    ])!;
    expect(f.slope).toBeCloseTo(0.6, 12);
    expect(f.intercept).toBeCloseTo(2.2, 12);
    expect(f.r).toBeCloseTo(6 / Math.sqrt(60), 12);
  });

  it('has no fit for one point or no spread in x', () => {
    expect(fitLine([[1, 1]])).toBeNull();
    expect(
      fitLine([
        [1, 1],
        [1, 2],
      ]),
    ).toBeNull();
  });
});

describe('meshSummary', () => {
  const { paths, facts } = meshRun();
  const m = meshSummary(paths, facts)!;

  it('fits latency against distance and throughput against 1/RTT', () => {
    expect(m.regions).toEqual(['a', 'b', 'c']);
    expect(m.pairs).toHaveLength(6);
    expect(m.latencyVsDistance!.slope).toBeCloseTo(0.01, 12);
    expect(m.latencyVsDistance!.intercept).toBeCloseTo(2, 9);
    expect(m.latencyVsDistance!.r).toBeCloseTo(1, 12);
    expect(m.throughputVsInverseRtt!.slope).toBeCloseTo(4e6, 3);
    expect(m.throughputVsInverseRtt!.r).toBeCloseTo(1, 12);
  });

  it('puts the window bound W/RTT on each pair', () => {
    const ab = m.pairs.find((p) => p.path === 'a_b')!;
    expect(ab.latencyMs).toBe(12);
    expect(ab.windowBoundBps).toBeCloseTo((DEFAULT_WINDOW_BYTES * 8) / 0.012, 3);
    expect(ab.latencyMetric).toBe('connect_rtt_ms');
  });

  it('is absent when no path is a mesh pair', () => {
    expect(meshSummary(paths, new Map())).toBeUndefined();
  });

  it('lays out the matrix rows by client region, columns by target region', () => {
    const [head, a] = meshMatrix(m);
    expect(head).toEqual(['from \\ to', 'a', 'b', 'c']);
    expect(a[0]).toBe('a');
    expect(a[1]).toBe('·');
    expect(a[2]).toBe('12.0 ms / 0.433 Gb/s');
  });

  const summary: Summary = { runId: 'mesh-run', status: 'succeeded', paths, mesh: m };

  it('reports the matrix, the fits and the bound in the console and Markdown', () => {
    const text = renderTable(summary);
    expect(text).toContain('mesh pairs (latency p50 / throughput p50):');
    expect(text).toMatch(
      /latency vs distance: latency = 10\.000 ms per 1000 km × distance \+ 2\.00 ms, r = 1\.000 \(n = 6\)/,
    );
    expect(text).toMatch(/window bound: throughput ≤ W \/ RTT per stream, W = 6 MiB/);
    expect(renderMarkdown(summary)).toContain('## Mesh pairs');
  });

  it('writes one CSV line per pair', () => {
    const csv = renderCsv(summary).split('\n');
    const at = csv.indexOf(CSV_MESH_HEAD.join(','));
    expect(at).toBeGreaterThan(0);
    expect(csv[at + 1]).toMatch(/^mesh-run,a_b,a,b,1000,0,12,connect_rtt_ms,/);
    expect(csv.slice(at + 1).filter((l) => l.startsWith('mesh-run,'))).toHaveLength(6);
  });

  it('draws latency vs distance (points + fit) and throughput vs RTT (points + bound + fit) in summary.html', async () => {
    const html = await renderHtml(summary);
    const charts = chartsIn(html).filter((c) => c.kind.startsWith('mesh-'));
    expect(charts.map((c) => c.kind)).toEqual(['mesh-latency-distance', 'mesh-throughput-rtt']);
    expect(charts[0].names).toEqual(['pairs', 'fit (r = 1.000)']);
    expect(charts[1].names).toEqual(['pairs', 'window bound W/RTT (W = 6 MiB)', 'fit a/RTT + b (r = 1.000)']);
    expect(html).toContain('<table class="mesh">');
  });
});
