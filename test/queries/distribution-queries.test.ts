import { describe, expect, it } from 'vitest';
import { loadQuery } from '../../queries/sql.js';
import { duckDbOver } from '../helpers/duckdb.js';
import { prng } from '../helpers/samples.js';

type Rec = Record<string, unknown>;
const RUN = 'run-2026.12.01T00:00';

/** Group sizes around the edges: 1, 2, 99/100/101 (p levels share ranks), 1000 (p99.9 appears). */
const SIZES = [1, 2, 99, 100, 101, 999, 1000, 1500, 37];

function makeRun(runId: string, seed: number): Rec[] {
  const rand = prng(seed);
  const recs: Rec[] = [];
  const probes = [
    { probe: 'tcp-connect', kind: 'tcp-connect', metric: 'connect_rtt_ms', unit: 'ms' },
    { probe: 'sockperf', kind: 'sockperf', metric: 'rtt_us', unit: 'us' },
    { probe: 'iperf-tcp', kind: 'iperf3', metric: 'throughput_bps', unit: 'bit/s' },
  ];
  let g = 0;
  for (const pathId of ['A', 'B', 'c-1']) {
    for (const p of probes) {
      const size = SIZES[g % SIZES.length];
      const shape = g % 4;
      for (let i = 0; i < size; i++) {
        const trial = 1 + (i % 3);
        const failed = rand() < 0.05;
        let value: number;
        if (shape === 0)
          value = 0.2 + rand() * 20; // doubles over two decades
        else if (shape === 1)
          value = [0.25, 0.5, 1, 10][Math.floor(rand() * 4)]; // heavy ties, exact powers of 10
        else if (shape === 2)
          value = Math.round(rand() * 100) / 10; // includes 0 (left out of bins)
        else value = 1e8 + Math.floor(rand() * 9e8); // large
        recs.push({
          run_id: runId,
          path_id: pathId,
          probe: p.probe,
          kind: p.kind,
          trial,
          seq: Math.floor(i / 3),
          t_start: 1_700_000_000_000 + i * 1000 + trial * 7,
          t_end: 1_700_000_000_000 + i * 1000 + trial * 7 + 1000,
          metric: p.metric,
          value: failed ? null : value,
          unit: p.unit,
          ok: !failed,
          ...(failed ? { error: 'timeout' } : {}),
          ...(p.kind === 'iperf3' && i > size / 2 ? { flag: 'credit-exhausted' } : {}),
        });
        // a failed sample that still carries a value: never counted
        if (i === 0) recs.push({ ...recs[recs.length - 1], seq: 9999, value: 400, ok: false, error: 'timeout' });
      }
      g += 1;
    }
  }
  return recs;
}

const groupKey = (r: Rec) => `${r.path_id}|${r.probe}|${r.metric}|${r.unit}`;

function goodGroups(recs: Rec[]): Map<string, number[]> {
  const m = new Map<string, number[]>();
  for (const r of recs) {
    if (r.ok !== true || r.value === null) continue;
    const list = m.get(groupKey(r)) ?? [];
    list.push(Number(r.value));
    m.set(groupKey(r), list);
  }
  return m;
}

describe('distribution queries on DuckDB', () => {
  const selected = makeRun(RUN, 1);
  const other = makeRun('other-run', 2);

  const db = duckDbOver('shape', () => [...selected, ...other]);

  it('histogram.sql: the bins and counts of an independent log10 binning, n and mean per group', async () => {
    const rows = (await db.engine.query(loadQuery('histogram'), [RUN], 'histogram')) as Rec[];
    const expected: Rec[] = [];
    const groups = goodGroups(selected);
    for (const key of [...groups.keys()].sort()) {
      const values = groups.get(key)!;
      const [path, probe, metric, unit] = key.split('|');
      const positive = values.filter((v) => v > 0);
      const counts = new Map<number, number>();
      for (const v of positive) {
        const bin = Math.floor(40 * Math.log10(v));
        counts.set(bin, (counts.get(bin) ?? 0) + 1);
      }
      const mean = values.reduce((a, b) => a + b, 0) / values.length;
      for (const bin of [...counts.keys()].sort((a, b) => a - b))
        expected.push({ path, probe, metric, unit, bin, count: counts.get(bin), n: positive.length, mean });
    }
    expect(rows.length).toBe(expected.length);
    rows.forEach((r, i) => {
      const e = expected[i];
      expect({ ...r, lo: undefined, hi: undefined, mean: undefined }).toStrictEqual({
        ...e,
        lo: undefined,
        hi: undefined,
        mean: undefined,
      });
      // Doubles summed or raised in another order: equal to 12 significant digits.
      const rel = (a: unknown, b: number) => Math.abs(Number(a) / b - 1);
      expect(rel(r.mean, Number(e.mean))).toBeLessThan(1e-12);
      expect(rel(r.lo, 10 ** (Number(e.bin) / 40))).toBeLessThan(1e-12);
      expect(Number(r.hi) / Number(r.lo)).toBeCloseTo(10 ** (1 / 40), 12);
    });
    // exact powers of ten land at the start of their bin; zero is left out
    expect(rows.some((r) => r.bin === 40)).toBe(true);
    expect(rows.every((r) => Number(r.lo) > 0)).toBe(true);
  });

  it('cdf.sql: the nearest-rank value at p = 0.01 … 1.00 (+ 0.999 from n = 1000) of an independent sort', async () => {
    const rows = (await db.engine.query(loadQuery('cdf'), [RUN], 'cdf')) as Rec[];
    const expected: Rec[] = [];
    const groups = goodGroups(selected);
    for (const key of [...groups.keys()].sort()) {
      const sorted = [...groups.get(key)!].sort((a, b) => a - b);
      const n = sorted.length;
      const [path, probe, metric, unit] = key.split('|');
      const levels = Array.from({ length: 100 }, (_, i) => (i + 1) * 10);
      if (n >= 1000) levels.push(999);
      levels.sort((a, b) => a - b);
      for (const k of levels) {
        // k·n is an exact integer and IEEE division is correctly rounded, so an integral k·n/1000 stays exact
        const rank = Math.ceil((k * n) / 1000);
        expected.push({ path, probe, metric, unit, n, per_mille: k, p: k / 1000, value: sorted[rank - 1] });
      }
    }
    expect(rows).toStrictEqual(expected);
    // p99.9 only where n ≥ 1000
    const with999 = new Set(rows.filter((r) => r.per_mille === 999).map((r) => Number(r.n)));
    expect(Math.min(...with999)).toBeGreaterThanOrEqual(1000);
    expect(rows.some((r) => Number(r.n) >= 1000)).toBe(true);
  });

  it('series.sql: every successful iperf3 throughput interval per trial, with its time and flag', async () => {
    const rows = (await db.engine.query(loadQuery('series'), [RUN], 'series')) as Rec[];
    const good = selected.filter((r) => r.kind === 'iperf3' && r.ok === true && r.value !== null);
    const start = new Map<string, number>();
    for (const r of good) {
      const k = `${r.path_id}|${r.probe}|${r.trial}`;
      start.set(k, Math.min(start.get(k) ?? Number.POSITIVE_INFINITY, Number(r.t_start)));
    }
    const expected = good
      .map((r) => ({
        path: r.path_id,
        probe: r.probe,
        trial: r.trial,
        metric: r.metric,
        unit: r.unit,
        seq: r.seq,
        t: (Number(r.t_end) - start.get(`${r.path_id}|${r.probe}|${r.trial}`)!) / 1000,
        value: r.value,
        flag: (r.flag as string | undefined) ?? null,
      }))
      .sort(
        (a, b) =>
          String(a.path).localeCompare(String(b.path)) ||
          String(a.probe).localeCompare(String(b.probe)) ||
          Number(a.trial) - Number(b.trial) ||
          Number(a.seq) - Number(b.seq),
      );
    expect(rows).toStrictEqual(expected);
    expect(rows.some((r) => r.flag === 'credit-exhausted')).toBe(true);
  });

  it('return nothing for an unknown run', async () => {
    for (const q of ['histogram', 'cdf', 'series'])
      expect(await db.engine.query(loadQuery(q), ['no-such-run'], q)).toEqual([]);
  });
});
