/**
 * queries/trend.sql through the real DuckDB engine: one row per run and group, p50 and p99 equal
 * to percentiles.sql's for each run, and runs in time order.
 */
import { describe, expect, it } from 'vitest';
import { loadQuery } from '../../queries/sql.js';
import { duckDbOver } from '../helpers/duckdb.js';
import { comparisonRun } from '../helpers/samples.js';

type Rec = Record<string, unknown>;

/** Two runs of the comparison fixture; r-a an hour after r-b (t_start in epoch ms), against their ids' order. */
const later = (r: Rec) => ({ ...r, t_start: Number(r.t_start) + 3_600_000 });
const records = () => [...comparisonRun('r-a', 2).map(later), ...comparisonRun('r-b', 1)];

describe('queries/trend.sql', () => {
  const db = duckDbOver('trend', records);

  it('gives per run the same p50 and p99 as percentiles.sql, in time order', async () => {
    const rows = await db.engine.query(loadQuery('trend'), [], 'trend');
    for (const run of ['r-a', 'r-b']) {
      const per = (await db.engine.query(loadQuery('percentiles'), [run], 'p')).filter(
        (r) => r.subset === 'all' && Number(r.n) > 0,
      );
      const mine = rows.filter((r) => r.run === run);
      expect(mine.length).toBe(per.length);
      for (const p of per) {
        const t = mine.find((r) => r.path === p.path && r.probe === p.probe && r.metric === p.metric);
        expect(t, `${run} ${p.path} ${p.probe} ${p.metric}`).toBeDefined();
        expect([Number(t?.n), t?.p50, t?.p99]).toEqual([Number(p.n), p.p50, p.p99]);
      }
    }
    // in time order, not by run id
    const a = rows.filter((r) => r.path === 'A' && r.probe === 'http');
    expect(a.map((r) => r.run)).toEqual(['r-b', 'r-a']);
    expect(Number(a[0].flagged)).toBe(0);
  });
});
