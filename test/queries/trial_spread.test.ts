import { describe, expect, it } from 'vitest';
import { nearestRank } from '../../core/stats.js';
import { buildSummary } from '../../functions/pipeline/summary.js';
import { DirStore } from '../../local/dir-store.js';
import { loadQuery } from '../../queries/sql.js';
import { duckDbOver } from '../helpers/duckdb.js';
import { comparisonRun, sortedValues } from '../helpers/samples.js';

type Rec = Record<string, unknown>;

/** The rows the query should return, from per-trial sorts in JavaScript. */
function expectedRows(records: Rec[]): Rec[] {
  const groups = new Map<string, { path: string; probe: string; metric: string; unit: string; trials: Set<number> }>();
  for (const r of records) {
    const g = { path: String(r.path_id), probe: String(r.probe), metric: String(r.metric), unit: String(r.unit) };
    const key = JSON.stringify(g);
    if (!groups.has(key)) groups.set(key, { ...g, trials: new Set() });
    groups.get(key)?.trials.add(Number(r.trial));
  }
  const rows: Rec[] = [];
  for (const { trials, ...g } of groups.values()) {
    const per = [...trials]
      .map((trial) => sortedValues(records, { ...g, trial }))
      .filter((s) => s.length > 0)
      .map((s) => ({ p50: nearestRank(s, 500) as number, p99: nearestRank(s, 990) as number }));
    if (per.length < 2) continue;
    const p50s = per.map((t) => t.p50);
    const p99s = per.map((t) => t.p99);
    const spread = (xs: number[]) => {
      const lo = Math.min(...xs);
      return lo > 0 ? (100 * (Math.max(...xs) - lo)) / lo : null;
    };
    rows.push({
      ...g,
      trials: per.length,
      p50_min: Math.min(...p50s),
      p50_max: Math.max(...p50s),
      p50_spread_pct: spread(p50s),
      p99_min: Math.min(...p99s),
      p99_max: Math.max(...p99s),
      p99_spread_pct: spread(p99s),
    });
  }
  const key = (r: Rec) => [r.path, r.probe, r.metric, r.unit].map(String).join('\u0000');
  return rows.sort((x, y) => (key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0));
}

describe('queries/trial_spread.sql on DuckDB', () => {
  const records = comparisonRun('run-t', 10);

  const db = duckDbOver('trial-spread', () => [...records, ...comparisonRun('other-run', 11)]);

  it('equals an independent per-trial computation; single-trial probes have no row', async () => {
    const rows = await db.engine.query(loadQuery('trial_spread'), ['run-t'], 'trial-spread');
    expect(rows).toStrictEqual(expectedRows(records));
    expect(rows.map((r) => `${r.path}/${r.probe}/${r.metric}`)).toEqual([
      'A/http/http_latency_ms',
      'A/iperf3/retransmits',
      'A/iperf3/throughput_bps',
      'B/http/http_latency_ms',
      'C/http/http_latency_ms',
      'C/iperf3/retransmits',
      'C/iperf3/throughput_bps',
    ]);
    // retransmits reach 0 in some trial: no spread relative to 0
    expect(rows.some((r) => r.metric === 'retransmits' && r.p50_spread_pct === null)).toBe(true);
  });

  it('gives the summary’s trial spreads exactly', async () => {
    const rows = await db.engine.query(loadQuery('trial_spread'), ['run-t'], 'trial-spread');
    const summary = await buildSummary({ store: new DirStore(db.dir), query: db.engine }, 'run-t');
    let seen = 0;
    for (const p of summary.paths)
      for (const r of p.results) {
        const row = rows.find((x) => x.path === p.id && x.probe === r.probe && x.metric === r.metric);
        if (!row || row.p50_spread_pct === null || row.p99_spread_pct === null) {
          expect(r.trials).toBeUndefined();
          continue;
        }
        expect(r.trials).toEqual({
          count: row.trials,
          p50_spread_pct: row.p50_spread_pct,
          p99_spread_pct: row.p99_spread_pct,
        });
        seen += 1;
      }
    expect(seen).toBe(rows.filter((r) => r.p50_spread_pct !== null && r.p99_spread_pct !== null).length);
    expect(seen).toBeGreaterThanOrEqual(5);
  });
});
