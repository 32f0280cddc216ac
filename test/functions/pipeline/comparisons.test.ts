/**
 * functions/pipeline/comparisons.ts through buildSummary on the real DuckDB engine: intervals
 * equal to an independent sort, tails and flags, comparisons (declared, defaulted, a path against
 * itself), the probes' own cost in the verdict, and two extra queries per run, never per group.
 */
import { rm } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  differenceInterval,
  type Estimate,
  INTERVAL_PERCENTILES,
  interpolateAt,
  percentileRanks,
  ratioInterval,
  spreadRanks,
} from '../../../core/confidence.js';
import { keys } from '../../../core/keys.js';
import type { RunManifest } from '../../../core/run-manifest.js';
import type { SummaryPath } from '../../../core/run-summary.js';
import { comparePairs, overheadNoise, valueInRuns } from '../../../functions/pipeline/comparisons.js';
import { withQuery } from '../../../functions/pipeline/query-rows.js';
import { buildSummary } from '../../../functions/pipeline/summary.js';
import type { QueryEngine } from '../../../functions/ports.js';
import { DirStore } from '../../../local/dir-store.js';
import { duckDbOver } from '../../helpers/duckdb.js';
import { comparisonRun, sortedValues } from '../../helpers/samples.js';

const RUN = 'run-c';
const records = comparisonRun(RUN, 21);

function manifest(compare?: RunManifest['compare']): RunManifest {
  const path = (id: string) => ({ id, label: id, status: 'succeeded' as const, steps: [], probes: [], notes: [] });
  const m: RunManifest = {
    runId: RUN,
    planName: 'compare',
    driver: 'local',
    status: 'succeeded',
    startedAt: '2026-12-01T00:00:00.000Z',
    paths: [path('A'), path('B'), path('C'), path('single'), path('dead')],
    routeChanges: [],
  };
  if (compare) m.compare = compare;
  return m;
}

/** The real DuckDB engine, with the labels of the queries it ran. */
function counting(engine: QueryEngine): { query: QueryEngine; labels: string[] } {
  const labels: string[] = [];
  return {
    labels,
    query: withQuery(engine, (sql, params, label) => {
      labels.push(label);
      return engine.query(sql, params, label);
    }),
  };
}

describe('confidence and comparisons in the summary', () => {
  let store: DirStore;

  const db = duckDbOver('comparisons', () => records);
  beforeAll(() => {
    store = new DirStore(db.dir);
  });

  const estimate = (path: string, probe: string, metric: string, unit: string, perMille: number): Estimate => {
    const s = sortedValues(records, { path, probe, metric, unit });
    const r = percentileRanks(s.length, perMille)!;
    const spread = spreadRanks(s.length, perMille)!;
    const at = (k: number) => s[k - 1];
    return { value: s[r.rank - 1], lo: interpolateAt(at, spread.lo), hi: interpolateAt(at, spread.hi) };
  };

  it('fills ci95, tail and thin-tail flags from an independent sort, with two extra queries per run', async () => {
    await store.put(keys.manifest(RUN), JSON.stringify(manifest()));
    const q = counting(db.engine);
    const s = await buildSummary({ store, query: q.query }, RUN);
    expect(q.labels.filter((l) => l.startsWith('percentile-windows'))).toHaveLength(1);
    expect(q.labels.filter((l) => l.startsWith('trial-spread'))).toHaveLength(1);
    let checked = 0;
    for (const p of s.paths)
      for (const r of p.results) {
        const sorted = sortedValues(records, { path: p.id, probe: r.probe, metric: r.metric, unit: r.unit });
        if (sorted.length === 0) {
          expect(r.ci95).toBeUndefined();
          expect(r.tail).toBeUndefined();
          continue;
        }
        for (const { column, perMille } of INTERVAL_PERCENTILES) {
          const ranks = percentileRanks(sorted.length, perMille)!;
          expect(r.ci95?.[column]).toEqual([sorted[ranks.lo - 1], sorted[ranks.hi - 1]]);
          expect(r.ci95?.[column][0]).toBeLessThanOrEqual(r[column] as number);
          expect(r.ci95?.[column][1]).toBeGreaterThanOrEqual(r[column] as number);
        }
        checked += 1;
      }
    expect(checked).toBeGreaterThan(10);
    const tcp = s.paths.find((p) => p.id === 'A')?.results.find((r) => r.probe === 'tcp-connect');
    // 300 samples: p99 is the 3rd-slowest, p99.9 the slowest — both thin, and said so
    expect(tcp?.tail).toEqual({ p50: 150, p95: 15, p99: 3, p999: 0 });
    expect(tcp?.flags).toEqual(['thin-tail:p99', 'thin-tail:p999']);
    const http = s.paths.find((p) => p.id === 'A')?.results.find((r) => r.probe === 'http');
    expect(http?.n).toBeGreaterThan(1000);
    expect(http?.flags).toEqual(['thin-tail:p999']);
    expect(http?.trials?.count).toBe(3);
  });

  it('compares what the plan declared, never a path with itself', async () => {
    await store.put(
      keys.manifest(RUN),
      JSON.stringify(
        manifest([
          { path: 'B', baseline: 'A' },
          { path: 'A', baseline: 'A' },
          { path: 'C', baseline: 'dead' },
        ]),
      ),
    );
    const s = await buildSummary({ store, query: db.engine }, RUN);
    const cs = s.comparisons ?? [];
    // B − A: http and tcp-connect (B ran no iperf3); A − A (an older manifest may hold one) and
    // anything against a dead path are left out
    expect(cs.map((c) => `${c.path}-${c.baseline}:${c.probe}/${c.metric}`)).toEqual([
      'B-A:http/http_latency_ms',
      'B-A:tcp-connect/connect_rtt_ms',
    ]);
    const ba = cs[0];
    for (const { column, perMille } of INTERVAL_PERCENTILES) {
      const a = estimate('B', 'http', 'http_latency_ms', 'ms', perMille);
      const b = estimate('A', 'http', 'http_latency_ms', 'ms', perMille);
      expect(ba[column].diff).toBe(a.value - b.value);
      expect(ba[column].pct).toBe((100 * (a.value - b.value)) / b.value);
      expect(ba[column].ci95).toEqual(differenceInterval(a, b));
    }
    // A is log-normal around e^0.2 ≈ 1.2 ms, B exponential from about 1.5 ms: B is clearly slower at p50
    expect(ba.p50.verdict).toBe('slower');
    expect(ba.p50.ci95[0]).toBeGreaterThan(0);
  });

  it('calls a difference within the probes’ own cost no clear difference', async () => {
    const m = manifest([{ path: 'B', baseline: 'A' }]);
    await store.put(keys.manifest(RUN), JSON.stringify(m));
    const plain = (await buildSummary({ store, query: db.engine }, RUN)).comparisons?.[0];
    expect(plain?.p50.verdict).toBe('slower');
    // the http probe's own p50 cost larger than the difference (in µs; the metric is in ms)
    const cost = Math.ceil(Math.abs(plain?.p50.diff ?? 0) * 1000) + 1;
    m.paths[1].probe_overhead_us = { http: { p50_us: cost, p99_us: 1, n: 100, method: 'test' } };
    await store.put(keys.manifest(RUN), JSON.stringify(m));
    const noisy = (await buildSummary({ store, query: db.engine }, RUN)).comparisons?.[0];
    expect(noisy?.p50.verdict).toBe('no clear difference');
    expect(noisy?.p50.diff).toBe(plain?.p50.diff);
  });

  it('without a manifest compares every other path (by id) with the first', async () => {
    await rm(`${db.dir}/${keys.manifest(RUN)}`);
    const s = await buildSummary({ store, query: db.engine }, RUN);
    expect([...new Set(s.comparisons?.map((c) => `${c.path}-${c.baseline}`))]).toEqual(['B-A', 'C-A', 'single-A']);
  });
});

describe('helpers', () => {
  it('comparePairs: the manifest’s, else every other path against the first', () => {
    expect(comparePairs(['A', 'B', 'C'])).toEqual([
      { path: 'B', baseline: 'A' },
      { path: 'C', baseline: 'A' },
    ]);
    expect(comparePairs([])).toEqual([]);
    const m = { compare: [{ path: 'A', baseline: 'C' }] } as RunManifest;
    expect(comparePairs(['A', 'B', 'C'], m)).toEqual([{ path: 'A', baseline: 'C' }]);
  });

  it('overheadNoise: the larger of both paths’ cost for the kind, p50 or p99, in the metric’s unit', () => {
    const path = (p50_us: number, p99_us: number): SummaryPath => ({
      id: 'x',
      label: 'x',
      status: 'succeeded',
      steps: [],
      results: [],
      probe_overhead_us: { 'tcp-connect': { p50_us, p99_us, n: 1, method: 'm' } },
    });
    const both = [path(20, 90), path(30, 60)];
    expect(overheadNoise(both, 'tcp-connect', 'p50', 'ms')).toBe(0.03);
    expect(overheadNoise(both, 'tcp-connect', 'p99', 'us')).toBe(90);
    expect(overheadNoise(both, 'tcp-connect', 'p95', 'us')).toBe(90);
    expect(overheadNoise(both, 'http', 'p50', 'ms')).toBe(0);
    expect(overheadNoise(both, 'tcp-connect', 'p50', 'bit/s')).toBe(0);
  });

  it('valueInRuns: the value whose run of ranks holds the rank', () => {
    const runs: [number, number, number][] = [
      [3, 3, 1.5],
      [4, 9, 2],
      [10, 10, 7],
    ];
    expect(valueInRuns(runs, 3)).toBe(1.5);
    expect(valueInRuns(runs, 4)).toBe(2);
    expect(valueInRuns(runs, 9)).toBe(2);
    expect(valueInRuns(runs, 10)).toBe(7);
    expect(valueInRuns(runs, 2)).toBeUndefined();
    expect(valueInRuns(runs, 11)).toBeUndefined();
  });
});

describe('within-path ratios in the summary', () => {
  const RUN2 = 'run-r';
  // Path A's http again as a second probe three times as slow: the same ranks, every value × 3.
  const base = comparisonRun(RUN2, 21);
  const rows = [
    ...base,
    ...base
      .filter((r) => r.path_id === 'A' && r.probe === 'http')
      .map((r) => ({ ...r, probe: 'http-slow', value: r.value === null ? null : (r.value as number) * 3 })),
  ];
  const db = duckDbOver('ratios', () => rows);

  it('reports probe ÷ baseline probe of one path per percentile, with the log-MOVER interval and a verdict', async () => {
    const store = new DirStore(db.dir);
    const m = manifest();
    m.runId = RUN2;
    m.ratios = [
      { path: 'A', probe: 'http-slow', baseline: 'http' },
      { path: 'A', probe: 'http', baseline: 'http-slow' },
      { path: 'B', probe: 'http-slow', baseline: 'http' },
    ];
    await store.put(keys.manifest(RUN2), JSON.stringify(m));
    const s = await buildSummary({ store, query: db.engine }, RUN2);
    // B has no http-slow: nothing for it; comparisons still never pair a path with itself.
    expect(s.ratios?.map((r) => `${r.path}:${r.probe}/${r.baselineProbe}:${r.metric}`)).toEqual([
      'A:http-slow/http:http_latency_ms',
      'A:http/http-slow:http_latency_ms',
    ]);
    expect(s.comparisons?.some((c) => c.path === c.baseline)).toBe(false);
    const [slow, fast] = s.ratios ?? [];
    const sorted = (probe: string) => sortedValues(rows, { path: 'A', probe, metric: 'http_latency_ms', unit: 'ms' });
    for (const { column, perMille } of INTERVAL_PERCENTILES) {
      const est = (v: ArrayLike<number>): Estimate => {
        const r = percentileRanks(v.length, perMille)!;
        const spread = spreadRanks(v.length, perMille)!;
        const at = (k: number) => v[k - 1];
        return { value: v[r.rank - 1], lo: interpolateAt(at, spread.lo), hi: interpolateAt(at, spread.hi) };
      };
      const a = est(sorted('http-slow'));
      const b = est(sorted('http'));
      expect(slow[column].ratio).toBeCloseTo(3, 12);
      expect(slow[column].ci95).toEqual(ratioInterval(a, b));
      expect(slow[column].ci95[0]).toBeLessThan(3);
      expect(slow[column].ci95[1]).toBeGreaterThan(3);
      expect(fast[column].ratio).toBeCloseTo(1 / 3, 12);
    }
    expect(slow.p50.verdict).toBe('slower');
    expect(fast.p50.verdict).toBe('faster');
    // about 1,160 samples: p99 has 11 beyond it, judged; the selection table lists every path
    expect(s.selection?.map((r) => r.path)).toEqual(['A', 'B', 'C', 'single', 'dead']);
  }, 120_000);
});
