/**
 * queries/percentiles.sql through the real DuckDB engine over real JSONL files, held against the
 * independent sort-in-JavaScript computation in stats.ts — every number must be equal.
 */
import { rm } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { nearestRank, nearestRankIndex, type PercentileRow, summarizeSamples } from '../../core/stats.js';
import { DuckDbQueryEngine } from '../../local/duckdb-query.js';
import { loadQuery } from '../../queries/sql.js';
import { duckDbOver } from '../helpers/duckdb.js';
import { prng, tempDataDir, writeSamples } from '../helpers/samples.js';

type Rec = Record<string, unknown>;

describe('nearestRank (JS reference)', () => {
  it('picks the ceil(p*n)-th value with integer per-mille p', () => {
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(nearestRank(hundred, 500)).toBe(50);
    expect(nearestRank(hundred, 950)).toBe(95);
    expect(nearestRank(hundred, 990)).toBe(99);
    expect(nearestRank(hundred, 999)).toBe(100);
    const thousand = Array.from({ length: 1000 }, (_, i) => i + 1);
    expect(nearestRank(thousand, 999)).toBe(999);
    expect(nearestRank([7], 500)).toBe(7);
    expect(nearestRank([3, 4], 500)).toBe(3);
    expect(nearestRank([], 500)).toBeNull();
  });

  it('computes ranks exactly where a double p would not', () => {
    // 0.07 * 100 is 7.000000000000001 in floating point, whose ceiling is 8; the true rank is 7.
    expect(Math.ceil(0.07 * 100)).toBe(8);
    expect(nearestRankIndex(100, 70)).toBe(7);
    expect(nearestRankIndex(100, 950)).toBe(95);
    expect(nearestRankIndex(101, 950)).toBe(96);
    expect(nearestRankIndex(1, 999)).toBe(1);
    expect(nearestRankIndex(0, 999)).toBe(0);
  });

  it('rejects a p that is not an integer per-mille', () => {
    expect(() => nearestRank([1], 0.95)).toThrow(/per-mille/);
    expect(() => nearestRank([1], 1001)).toThrow(/per-mille/);
  });
});

/** Values of a group, by shape: fractional, negative, heavy ties, integers. */
function valueMaker(rand: () => number, shape: number): () => number {
  switch (shape % 4) {
    case 0:
      return () => (rand() - 0.3) * 1000; // full-precision doubles, some negative
    case 1:
      return () => Math.floor(rand() * 4) * 0.25 + 1; // four distinct values only: heavy ties
    case 2:
      return () => Math.round((rand() * 20 - 10) * 1000) / 1000 || 0.5; // 3 decimals, negative, never -0
    default:
      return () => Math.floor(rand() * 1e9); // large integers
  }
}

const SIZES = [1, 2, 99, 100, 101, 1000, 1001, 3, 37];

function makeRun(runId: string, seed: number): Rec[] {
  const rand = prng(seed);
  const recs: Rec[] = [];
  const paths = ['A', 'B', 'c-1'];
  const probes = [
    { probe: 'tcp-connect', kind: 'tcp-connect', metric: 'connect_rtt_ms', unit: 'ms' },
    { probe: 'iperf-tcp', kind: 'iperf3', metric: 'throughput_bps', unit: 'bit/s' },
    { probe: 'iperf-tcp', kind: 'iperf3', metric: 'retransmits', unit: 'count' },
  ];
  let g = 0;
  for (const pathId of paths) {
    for (const p of probes) {
      const size = SIZES[g % SIZES.length];
      const next = valueMaker(rand, g);
      const flagging = p.metric === 'throughput_bps';
      for (let i = 0; i < size; i++) {
        const trial = 1 + (i % 2);
        const failed = rand() < 0.08;
        const rec: Rec = {
          run_id: runId,
          path_id: pathId,
          probe: p.probe,
          kind: p.kind,
          trial,
          seq: i,
          t_start: 1_700_000_000_000 + i * 1000,
          t_end: 1_700_000_000_000 + i * 1000 + 1000,
          metric: p.metric,
          value: failed ? null : next(),
          unit: p.unit,
          ok: !failed,
          clock: 'tool',
          // extra keys the view must ignore
          streams: 4,
          detail: { interval: i, note: "it's fine" },
        };
        if (failed) rec.error = 'timeout';
        // after a "cliff" half way through, intervals carry a flag
        if (flagging && i >= size / 2) rec.flag = 'credit-exhausted';
        recs.push(rec);
      }
      g += 1;
    }
  }
  return recs;
}

/** Groups with special shapes: all failed, all flagged, flagged with failures. */
function edgeGroups(runId: string): Rec[] {
  const base = { run_id: runId, path_id: 'edge', trial: 1, t_start: 0, t_end: 1, clock: 'tool' };
  const recs: Rec[] = [];
  for (let i = 0; i < 5; i++) {
    recs.push({
      ...base,
      probe: 'dead',
      kind: 'tcp-connect',
      seq: i,
      metric: 'connect_rtt_ms',
      unit: 'ms',
      // a failed sample may still carry a value (the timeout it hit); it must not become a percentile
      value: i === 0 ? 400 : null,
      ok: false,
      error: 'refused',
    });
    recs.push({
      ...base,
      probe: 'cliff',
      kind: 'iperf3',
      seq: i,
      metric: 'throughput_bps',
      unit: 'bit/s',
      value: 1e9 - i,
      ok: true,
      flag: 'credit-exhausted',
    });
    recs.push({
      ...base,
      probe: 'mixed',
      kind: 'iperf3',
      seq: i,
      metric: 'throughput_bps',
      unit: 'bit/s',
      value: i === 1 ? null : 5e8 + i,
      ok: i !== 1,
      flag: i >= 3 ? 'credit-exhausted' : null,
    });
  }
  return recs;
}

describe.each([
  ['JSONL', false],
  ['Parquet', true],
])('queries/percentiles.sql on DuckDB over %s', (_format, parquet) => {
  const selected = [...makeRun('run-2024.01.01T00:00', 1), ...edgeGroups('run-2024.01.01T00:00')];
  const other = makeRun('other-run', 2);

  const db = duckDbOver('pct', () => [...selected, ...other], { parquet });

  it('equals the JS computation exactly, for the selected run only', async () => {
    const sqlRows = (await db.engine.query(
      loadQuery('percentiles'),
      ['run-2024.01.01T00:00'],
      'percentiles',
    )) as unknown;
    const jsRows: PercentileRow[] = summarizeSamples(selected as never, { runId: 'run-2024.01.01T00:00' });
    // Every group of the selected run, the other run's data mixed in the same directory ignored.
    expect(jsRows.length).toBe(9 + 3 + 3 + 2);
    expect(sqlRows).toStrictEqual(jsRows);
    // Same key order, same column set as the contract lists.
    expect(Object.keys((sqlRows as Rec[])[0])).toEqual([
      'path',
      'probe',
      'kind',
      'metric',
      'unit',
      'subset',
      'n',
      'failed',
      'total',
      'loss',
      'p50',
      'p95',
      'p99',
      'p999',
      'max',
    ]);
  });

  it('covers the sizes and shapes it claims to', async () => {
    const rows = summarizeSamples(selected as never);
    const totals = new Set(rows.filter((r) => r.subset === 'all').map((r) => r.total));
    for (const size of [1, 2, 99, 100, 101]) expect(totals).toContain(size);
    expect(rows.some((r) => r.failed > 0 && r.n > 0)).toBe(true);
    expect(rows.some((r) => (r.p50 ?? 0) < 0)).toBe(true);
  });

  it('loss counts failed samples and percentiles skip them', async () => {
    const rows = (await db.engine.query(loadQuery('percentiles'), ['run-2024.01.01T00:00'], 'percentiles')) as Rec[];
    const dead = rows.find((r) => r.probe === 'dead');
    expect(dead).toMatchObject({ n: 0, failed: 5, total: 5, loss: 1, p50: null, p999: null, max: null });
    const mixedAll = rows.find((r) => r.probe === 'mixed' && r.subset === 'all');
    expect(mixedAll).toMatchObject({ n: 4, failed: 1, total: 5, loss: 0.2, p50: 5e8 + 2, max: 5e8 + 4 });
  });

  it('adds an unflagged subset only where a flag occurs, even when every row is flagged', async () => {
    const rows = (await db.engine.query(loadQuery('percentiles'), ['run-2024.01.01T00:00'], 'percentiles')) as Rec[];
    const subsets = (probe: string, pathId = 'edge') =>
      rows.filter((r) => r.path === pathId && r.probe === probe).map((r) => `${r.metric}/${r.subset}`);
    expect(subsets('dead')).toEqual(['connect_rtt_ms/all']);
    expect(subsets('cliff')).toEqual(['throughput_bps/all', 'throughput_bps/unflagged']);
    expect(subsets('iperf-tcp', 'A')).toEqual(['retransmits/all', 'throughput_bps/all', 'throughput_bps/unflagged']);
    const cliff = rows.find((r) => r.probe === 'cliff' && r.subset === 'unflagged');
    expect(cliff).toMatchObject({ n: 0, failed: 0, total: 0, loss: null, p50: null, max: null });
    const mixed = rows.find((r) => r.probe === 'mixed' && r.subset === 'unflagged');
    // seq 0..2 unflagged, seq 1 failed: values 5e8 and 5e8 + 2
    expect(mixed).toMatchObject({ n: 2, failed: 1, total: 3, p50: 5e8, p95: 5e8 + 2, max: 5e8 + 2 });
  });

  it('returns no rows for an unknown run', async () => {
    expect(await db.engine.query(loadQuery('percentiles'), ['no-such-run'], 'percentiles')).toEqual([]);
  });

  it('gives both subsets exactly: every flag share, ties across flagged and unflagged, interleavings', async () => {
    // The all and unflagged subsets side by side: shares from none to all flagged, flags at the
    // low or the high end or spread, values shared by flagged and unflagged rows, sizes to 30,011.
    const rand = prng(7);
    const recs: Rec[] = [];
    const shares = [0, 0.001, 0.1, 0.5, 0.9, 0.999, 1];
    const sizes = [1, 2, 3, 10, 257, 4099, 30011];
    let g = 0;
    for (const size of sizes) {
      for (const share of shares) {
        const layout = g % 3; // 0: flags spread, 1: on the lowest values, 2: on the highest values
        const ties = g % 2 === 0;
        const values = Array.from({ length: size }, () =>
          ties ? Math.floor(rand() * 7) : Math.round((rand() - 0.2) * 1e6) / 1e3,
        );
        const order = layout === 0 ? values.map((_, i) => i) : [...values.keys()].sort((a, b) => values[a] - values[b]);
        const flagged = new Set(
          layout === 2 ? order.slice(size - Math.round(size * share)) : order.slice(0, Math.round(size * share)),
        );
        if (layout === 0) {
          flagged.clear();
          for (let i = 0; i < size; i++) if (rand() < share) flagged.add(i);
        }
        for (let i = 0; i < size; i++) {
          const failed = rand() < 0.02;
          recs.push({
            run_id: 'merge',
            path_id: `m${g % 5}`,
            probe: `probe${g}`,
            kind: 'iperf3',
            trial: 1,
            seq: i,
            t_start: i,
            t_end: i + 1,
            metric: 'throughput_bps',
            value: failed ? null : values[i],
            unit: 'bit/s',
            ok: !failed,
            flag: flagged.has(i) ? 'credit-exhausted' : undefined,
          });
        }
        g++;
      }
    }
    // Tight interleavings: values 0..n-1, the odd ones flagged, rows in a shuffled order,
    // n = 2^(t+2) - 3, so each subset's every rank sits between values of the other.
    for (let t = 0; t <= 13; t++) {
      const size = 2 ** (t + 2) - 3;
      const order = Array.from({ length: size }, (_, i) => i).sort(() => rand() - 0.5);
      for (const [seq, v] of order.entries()) {
        recs.push({
          run_id: 'merge',
          path_id: 'tight',
          probe: `tight${t}`,
          kind: 'iperf3',
          trial: 1,
          seq,
          t_start: seq,
          t_end: seq + 1,
          metric: 'throughput_bps',
          value: v,
          unit: 'bit/s',
          ok: true,
          flag: v % 2 === 1 ? 'credit-exhausted' : undefined,
        });
      }
    }
    const dir = await tempDataDir('pct-merge');
    try {
      await writeSamples(dir, recs, { parquet });
      const engine = await DuckDbQueryEngine.open(dir);
      try {
        const sqlRows = await engine.query(loadQuery('percentiles'), ['merge'], 'percentiles');
        const jsRows = summarizeSamples(recs as never);
        expect(sqlRows).toStrictEqual(jsRows);
        // Every group with a flag and an unflagged value has both subsets.
        const both = jsRows.filter(
          (u) =>
            u.subset === 'unflagged' &&
            u.n > 0 &&
            jsRows.some((a) => a.subset === 'all' && a.probe === u.probe && a.path === u.path && a.n > u.n),
        );
        expect(both.length).toBeGreaterThanOrEqual(15);
      } finally {
        engine.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    // Seconds of DuckDB per partition's Parquet copy, and this machine is shared: more than the default.
  }, 120_000);

  it('agrees at every rank boundary: n where k * n / 1000 is a whole number, and its neighbours', async () => {
    // A position's per-mille interval (lo, hi] has k at its edge (k * n / 1000 a whole number)
    // at n a multiple of 2, 20, 100 and 1000: where an off-by-one in the intervals, the rank tests
    // or the WHERE's gate would show. Each n below gets a group without flags and one whose unflagged values number n
    // among 2n (the flagged ones interleaved), so both subsets cross every boundary.
    const rand = prng(13);
    const sizes = new Set<number>();
    for (let n = 1; n <= 60; n++) sizes.add(n);
    for (const m of [100, 200, 300, 500, 1000, 2000, 3000]) for (const d of [-1, 0, 1]) sizes.add(m + d);
    const recs: Rec[] = [];
    const add = (probe: string, seq: number, value: number, flag?: string) =>
      recs.push({
        run_id: 'bounds',
        path_id: 'b',
        probe,
        kind: 'iperf3',
        trial: 1,
        seq,
        t_start: seq,
        t_end: seq + 1,
        metric: 'throughput_bps',
        value,
        unit: 'bit/s',
        ok: true,
        flag,
      });
    for (const n of sizes) {
      // distinct values in a shuffled order, so a figure off by one rank is a different value
      const values = Array.from({ length: n }, (_, i) => i * 2 + 1).sort(() => rand() - 0.5);
      for (const [i, v] of values.entries()) add(`plain${n}`, i, v);
      const both = Array.from({ length: 2 * n }, (_, i) => i).sort(() => rand() - 0.5);
      for (const [i, v] of both.entries()) add(`half${n}`, i, v, v % 2 === 0 ? undefined : 'credit-exhausted');
    }
    const dir = await tempDataDir('pct-bounds');
    try {
      await writeSamples(dir, recs, { parquet });
      const engine = await DuckDbQueryEngine.open(dir);
      try {
        const sqlRows = await engine.query(loadQuery('percentiles'), ['bounds'], 'percentiles');
        const jsRows = summarizeSamples(recs as never);
        expect(sqlRows).toStrictEqual(jsRows);
        expect(sqlRows).toHaveLength(sizes.size * 3);
        expect(sqlRows.every((r) => r.p50 !== null && r.max !== null)).toBe(true);
      } finally {
        engine.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    // Seconds of DuckDB per partition's Parquet copy, and this machine is shared: more than the default.
  }, 120_000);

  it('agrees on many random runs of random sizes', async () => {
    const rand = prng(99);
    const recs: Rec[] = [];
    for (let g = 0; g < 40; g++) {
      const size = 1 + Math.floor(rand() * 300);
      const next = valueMaker(rand, g);
      for (let i = 0; i < size; i++) {
        const failed = rand() < 0.05;
        recs.push({
          run_id: 'fuzz',
          path_id: `p${g % 7}`,
          probe: `probe${g}`,
          kind: 'http',
          trial: 1,
          seq: i,
          t_start: i,
          t_end: i + 1,
          metric: 'http_latency_ms',
          value: failed ? null : next(),
          unit: 'ms',
          ok: !failed,
          flag: g % 5 === 0 && rand() < 0.3 ? 'credit-exhausted' : undefined,
        });
      }
    }
    const fuzzDir = await tempDataDir('pct-fuzz');
    try {
      await writeSamples(fuzzDir, recs, { parquet });
      const fuzz = await DuckDbQueryEngine.open(fuzzDir);
      try {
        const sqlRows = await fuzz.query(loadQuery('percentiles'), ['fuzz'], 'percentiles');
        expect(sqlRows).toStrictEqual(summarizeSamples(recs as never));
        expect(sqlRows.length).toBeGreaterThan(40);
      } finally {
        fuzz.close();
      }
    } finally {
      await rm(fuzzDir, { recursive: true, force: true });
    }
  });
});
