/**
 * queries/percentile_windows.sql through the real DuckDB engine over real JSONL files, held
 * against an independent sort in JavaScript: every row (value and the ranks it covers) equal,
 * and every rank the intervals read present.
 */
import { rm } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { INTERVAL_PERCENTILES, neededRanks, rankWindow } from '../../core/confidence.js';
import { nearestRankIndex } from '../../core/stats.js';
import { valueInRuns } from '../../functions/pipeline/comparisons.js';
import { DuckDbQueryEngine } from '../../local/duckdb-query.js';
import { loadQuery } from '../../queries/sql.js';
import { duckDbOver } from '../helpers/duckdb.js';
import { comparisonRun, prng, sortedValues, tempDataDir, writeSamples } from '../helpers/samples.js';

type Rec = Record<string, unknown>;

/** The rows the query should return, from a sort in JavaScript. */
function expectedRows(records: Rec[]): Rec[] {
  const keys = new Map<string, { path: string; probe: string; metric: string; unit: string }>();
  for (const r of records) {
    const g = { path: String(r.path_id), probe: String(r.probe), metric: String(r.metric), unit: String(r.unit) };
    keys.set(JSON.stringify(g), g);
  }
  const rows: Rec[] = [];
  for (const g of keys.values()) {
    const sorted = sortedValues(records, g);
    const n = sorted.length;
    if (n === 0) continue;
    for (const { perMille } of INTERVAL_PERCENTILES) {
      const atRank = nearestRankIndex(n, perMille);
      const half = rankWindow(n, perMille);
      for (let i = 0; i < n; ) {
        let j = i;
        while (j + 1 < n && sorted[j + 1] === sorted[i]) j++;
        const first = i + 1;
        const last = j + 1;
        if (last >= atRank - half && first <= atRank + half)
          rows.push({
            ...g,
            per_mille: perMille,
            n,
            at_rank: atRank,
            half_width: half,
            value: sorted[i],
            first_rank: first,
            last_rank: last,
          });
        i = j + 1;
      }
    }
  }
  const order = (r: Rec) => [r.path, r.probe, r.metric, r.unit].map(String);
  return rows.sort((a, b) => {
    const ka = order(a);
    const kb = order(b);
    for (let i = 0; i < 4; i++) if (ka[i] !== kb[i]) return ka[i] < kb[i] ? -1 : 1;
    return Number(a.per_mille) - Number(b.per_mille) || Number(a.value) - Number(b.value);
  });
}

describe('queries/percentile_windows.sql on DuckDB', () => {
  const records = comparisonRun('run-w', 5);
  const other = comparisonRun('other-run', 6);

  const db = duckDbOver('windows', () => [...records, ...other]);

  it('equals the windows of an independent sort, row for row, for the selected run only', async () => {
    const rows = await db.engine.query(loadQuery('percentile_windows'), ['run-w'], 'windows');
    expect(rows).toStrictEqual(expectedRows(records));
    expect(rows.some((r) => Number(r.last_rank) > Number(r.first_rank))).toBe(true); // ties were exercised
    expect(rows.some((r) => r.path === 'dead')).toBe(false); // no successful sample, no window
  });

  it('holds the value at every rank an interval reads, exactly sorted[rank - 1]', async () => {
    const rows = await db.engine.query(loadQuery('percentile_windows'), ['run-w'], 'windows');
    for (const key of new Set(rows.map((r) => JSON.stringify([r.path, r.probe, r.metric, r.unit])))) {
      const [path, probe, metric, unit] = JSON.parse(key) as string[];
      const runs = rows
        .filter((r) => r.path === path && r.probe === probe && r.metric === metric && r.unit === unit)
        .map((r) => [Number(r.first_rank), Number(r.last_rank), Number(r.value)] as [number, number, number])
        .sort((a, b) => a[0] - b[0]);
      const sorted = sortedValues(records, { path, probe, metric, unit });
      for (const { perMille } of INTERVAL_PERCENTILES)
        for (const rank of neededRanks(sorted.length, perMille)) expect(valueInRuns(runs, rank)).toBe(sorted[rank - 1]);
    }
  });

  it('agrees on random sizes from 1 to 3,000 with negative values and ties', async () => {
    const rand = prng(77);
    const recs: Rec[] = [];
    for (let g = 0; g < 25; g++) {
      const size = 1 + Math.floor(rand() ** 2 * 3000);
      for (let i = 0; i < size; i++)
        recs.push({
          run_id: 'fuzz',
          path_id: `p${g % 4}`,
          probe: `probe${g}`,
          kind: 'http',
          trial: 1,
          seq: i,
          t_start: i,
          t_end: i + 1,
          metric: 'http_latency_ms',
          value: g % 3 === 0 ? Math.floor(rand() * 20) - 5 : (rand() - 0.2) * 100,
          unit: 'ms',
          ok: true,
        });
    }
    const fuzzDir = await tempDataDir('windows-fuzz');
    try {
      await writeSamples(fuzzDir, recs);
      const fuzz = await DuckDbQueryEngine.open(fuzzDir);
      try {
        expect(await fuzz.query(loadQuery('percentile_windows'), ['fuzz'], 'windows')).toStrictEqual(
          expectedRows(recs),
        );
      } finally {
        fuzz.close();
      }
    } finally {
      await rm(fuzzDir, { recursive: true, force: true });
    }
  });
});
