import { describe, expect, it } from 'vitest';
import { nearestRank } from '../../core/stats.js';
import { buildSummary } from '../../functions/pipeline/summary.js';
import { DirStore } from '../../local/dir-store.js';
import { loadQuery } from '../../queries/sql.js';
import { duckDbOver } from '../helpers/duckdb.js';
import { comparisonRun, sortedValues } from '../helpers/samples.js';

type Rec = Record<string, unknown>;
type Group = { path: string; probe: string; metric: string; unit: string };

/** The rows the query should return, from sorts in JavaScript. */
function expectedRows(records: Rec[]): Rec[] {
  const groups = new Map<string, Group>();
  for (const r of records) {
    const g = { path: String(r.path_id), probe: String(r.probe), metric: String(r.metric), unit: String(r.unit) };
    groups.set(JSON.stringify(g), g);
  }
  const figures = [...groups.values()]
    .map((g) => {
      const s = sortedValues(records, g);
      return { ...g, n: s.length, p50: nearestRank(s, 500), p95: nearestRank(s, 950), p99: nearestRank(s, 990) };
    })
    .filter((f) => f.n > 0);
  const rows: Rec[] = [];
  for (const a of figures)
    for (const b of figures) {
      if (a.probe !== b.probe || a.metric !== b.metric || a.unit !== b.unit) continue;
      const row: Rec = {
        path: a.path,
        baseline: b.path,
        probe: a.probe,
        metric: a.metric,
        unit: a.unit,
        n: a.n,
        baseline_n: b.n,
      };
      for (const p of ['p50', 'p95', 'p99'] as const) {
        const x = a[p] as number;
        const y = b[p] as number;
        Object.assign(row, {
          [p]: x,
          [`baseline_${p}`]: y,
          [`${p}_diff`]: x - y,
          [`${p}_pct`]: y === 0 ? null : (100 * (x - y)) / y,
        });
      }
      rows.push(row);
    }
  const key = (r: Rec) => [r.path, r.baseline, r.probe, r.metric, r.unit].map(String).join('\u0000');
  return rows.sort((x, y) => (key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0));
}

describe('queries/differences.sql on DuckDB', () => {
  const records = comparisonRun('run-d', 8);

  const db = duckDbOver('differences', () => [...records, ...comparisonRun('other-run', 9)]);

  it('equals an independent computation for every ordered pair of paths, itself included', async () => {
    const rows = await db.engine.query(loadQuery('differences'), ['run-d'], 'differences');
    expect(rows).toStrictEqual(expectedRows(records));
    const self = rows.filter((r) => r.path === r.baseline);
    expect(self.length).toBeGreaterThan(0);
    for (const r of self) expect([r.p50_diff, r.p95_diff, r.p99_diff]).toEqual([0, 0, 0]);
    // B ran no iperf3: no pair for it
    expect(rows.some((r) => r.probe === 'iperf3' && (r.path === 'B' || r.baseline === 'B'))).toBe(false);
  });

  it('gives the summary’s differences and percentages exactly', async () => {
    const rows = await db.engine.query(loadQuery('differences'), ['run-d'], 'differences');
    const summary = await buildSummary({ store: new DirStore(db.dir), query: db.engine }, 'run-d');
    const comparisons = summary.comparisons ?? [];
    // no manifest: every other path against the first (by id), comparable units only
    expect(new Set(comparisons.map((c) => `${c.path}-${c.baseline}`))).toEqual(new Set(['B-A', 'C-A', 'single-A']));
    expect(comparisons.some((c) => c.metric === 'retransmits')).toBe(false);
    for (const c of comparisons) {
      const row = rows.find(
        (r) => r.path === c.path && r.baseline === c.baseline && r.probe === c.probe && r.metric === c.metric,
      );
      expect(row, `${c.path} − ${c.baseline} ${c.probe} ${c.metric}`).toBeDefined();
      for (const p of ['p50', 'p95', 'p99'] as const) {
        expect(c[p].diff).toBe(row?.[`${p}_diff`]);
        expect(c[p].pct).toBe(row?.[`${p}_pct`]);
      }
    }
  });
});
