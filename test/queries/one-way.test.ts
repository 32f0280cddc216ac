/**
 * queries/one_way.sql through the real DuckDB engine: pingpong's one-way delays per (path, probe,
 * metric, unit), each direction's p50 held against nearest rank in JavaScript (core/stats.ts),
 * from the JSONL and from the Parquet copy, with the group's largest clock bound; samples without
 * a bound (clocks not disciplined) and failed ones do not count.
 */
import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { nearestRank } from '../../core/stats.js';
import { DuckDbQueryEngine } from '../../local/duckdb-query.js';
import { loadQuery } from '../../queries/sql.js';
import { prng, tempDataDir, writeSamples } from '../helpers/samples.js';

type Rec = Record<string, unknown>;

/** pingpong rtt_us records of one path: n with one-way delays, one failed, one without a bound. */
function records(runId: string, pathId: string, n: number, seed: number, bound: number): Rec[] {
  const rand = prng(seed);
  const base = {
    run_id: runId,
    path_id: pathId,
    probe: 'pp',
    kind: 'pingpong',
    trial: 1,
    metric: 'rtt_us',
    unit: 'us',
  };
  const out: Rec[] = [];
  for (let i = 0; i < n; i++) {
    const fwd = 300 + Math.round(rand() * 4000) / 100 + (i % 11 === 0 ? 500 : 0);
    const rev = 100 + Math.round(rand() * 2000) / 100 - (i % 13 === 0 ? 150 : 0);
    out.push({
      ...base,
      seq: i,
      t_start: 1000 + i,
      t_end: 1000.5 + i,
      value: fwd + rev + 5,
      ok: true,
      clock: 'pingpong-monotonic-busypoll',
      one_way_fwd_us: fwd,
      one_way_rev_us: rev,
      clock_error_us: bound + (i % 5),
    });
  }
  out.push({ ...base, seq: n, t_start: 1, t_end: 1, value: null, ok: false, error: 'timeout', clock: 'x' });
  out.push({ ...base, seq: n + 1, t_start: 1, t_end: 2, value: 90, ok: true, clock: 'x' });
  return out;
}

const expected = (recs: Rec[]) => {
  const kept = recs.filter((r) => r.ok && typeof r.clock_error_us === 'number');
  const sorted = (k: string) => kept.map((r) => r[k] as number).sort((x, y) => x - y);
  return {
    n: kept.length,
    fwd_p50: nearestRank(sorted('one_way_fwd_us'), 500),
    rev_p50: nearestRank(sorted('one_way_rev_us'), 500),
    clock_error_us: Math.max(...sorted('clock_error_us')),
  };
};

describe('one_way.sql', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  for (const parquet of [false, true]) {
    it(`gives each path's one-way p50s and clock bound, nearest rank, from the ${parquet ? 'Parquet copy' : 'JSONL'}`, async () => {
      const dir = await tempDataDir('one-way');
      dirs.push(dir);
      const a = records('r1', 'A', 1001, 1, 0);
      const b = records('r1', 'B', 38, 2, 120);
      await writeSamples(dir, [...a, ...b, ...records('r2', 'A', 10, 3, 0)], { parquet });
      const engine = await DuckDbQueryEngine.open(dir);
      try {
        const rows = await engine.query(loadQuery('one_way'), ['r1'], 'one-way');
        expect(rows).toEqual([
          { path: 'A', probe: 'pp', metric: 'rtt_us', unit: 'us', ...expected(a) },
          { path: 'B', probe: 'pp', metric: 'rtt_us', unit: 'us', ...expected(b) },
        ]);
      } finally {
        engine.close();
      }
    });
  }
});
