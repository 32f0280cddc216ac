/**
 * queries/host_part.sql through the real DuckDB engine: the client's own part of each round trip
 * (host_us) per (path, probe, metric, unit), held against nearest-rank in JavaScript
 * (core/stats.ts), from the JSONL and from the Parquet copy; and a copy written before host_us
 * existed is read from its JSONL, not as if no sample carried it.
 */
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nearestRank } from '../../core/stats.js';
import { DuckDbQueryEngine } from '../../local/duckdb-query.js';
import { loadQuery } from '../../queries/sql.js';
import { prng, tempDataDir, writeSamples } from '../helpers/samples.js';

type Rec = Record<string, unknown>;

/** tcp-connect records of one path: n successful with host_us, some failed, some app-clock only. */
function records(runId: string, pathId: string, n: number, seed: number): Rec[] {
  const rand = prng(seed);
  const out: Rec[] = [];
  for (let i = 0; i < n; i++) {
    const base = { run_id: runId, path_id: pathId, probe: 'tcp', kind: 'tcp-connect', trial: 1, seq: i };
    const t = { t_start: 1000 + i, t_end: 1000 + i + 0.001, metric: 'connect_rtt_ms', unit: 'ms' };
    out.push({
      ...base,
      ...t,
      value: 0.2 + rand() * 0.01,
      ok: true,
      clock: 'kernel-tcpi_rtt',
      ts_source: 'kernel-sw',
      host_us: Math.round(rand() * 4000) / 100 + (i % 7 === 0 ? 200 : 0),
    });
  }
  // A failed attempt (no host part) and an app-clock one (ts_source user, no host_us) do not count.
  out.push({
    run_id: runId,
    path_id: pathId,
    probe: 'tcp',
    kind: 'tcp-connect',
    trial: 1,
    seq: n,
    t_start: 1,
    t_end: 2,
    metric: 'connect_rtt_ms',
    unit: 'ms',
    value: null,
    ok: false,
    error: 'timeout',
    clock: 'kernel-tcpi_rtt',
    ts_source: 'kernel-sw',
  });
  out.push({
    run_id: runId,
    path_id: pathId,
    probe: 'app',
    kind: 'tcp-connect',
    trial: 1,
    seq: 0,
    t_start: 1,
    t_end: 2,
    metric: 'connect_rtt_ms',
    unit: 'ms',
    value: 0.3,
    ok: true,
    clock: 'app-hrtime',
    ts_source: 'user',
  });
  return out;
}

const expected = (recs: Rec[]) => {
  const host = recs
    .filter((r) => r.ok && typeof r.host_us === 'number')
    .map((r) => r.host_us as number)
    .sort((x, y) => x - y);
  return { n: host.length, p50: nearestRank(host, 500), p99: nearestRank(host, 990) };
};

describe('host_part.sql', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  for (const parquet of [false, true]) {
    it(`gives each path's host part, nearest rank, from the ${parquet ? 'Parquet copy' : 'JSONL'}`, async () => {
      const dir = await tempDataDir('host-part');
      dirs.push(dir);
      const a = records('r1', 'A', 1001, 1);
      const b = records('r1', 'B', 37, 2);
      await writeSamples(dir, [...a, ...b, ...records('r2', 'A', 10, 3)], { parquet });
      const engine = await DuckDbQueryEngine.open(dir);
      try {
        const rows = await engine.query(loadQuery('host_part'), ['r1'], 'host');
        expect(rows).toEqual([
          { path: 'A', probe: 'tcp', metric: 'connect_rtt_ms', unit: 'ms', ...expected(a), ts_source: 'kernel-sw' },
          { path: 'B', probe: 'tcp', metric: 'connect_rtt_ms', unit: 'ms', ...expected(b), ts_source: 'kernel-sw' },
        ]);
      } finally {
        engine.close();
      }
    });
  }

  it('reads a partition whose copy predates host_us from its JSONL', async () => {
    const dir = await tempDataDir('host-part-old');
    dirs.push(dir);
    const a = records('r1', 'A', 50, 4);
    await writeSamples(dir, a);
    // A copy as an older version wrote it: no ts_source or host_us.
    const engine = await DuckDbQueryEngine.open(dir);
    try {
      const file = path.join(dir, 'parquet', 'path=A', 'run=r1', 'samples.parquet');
      await mkdir(path.dirname(file), { recursive: true });
      const old = loadQuery('parquet_copy', { path: 'A', run: 'r1' }).replace(
        /, ts_source, host_us, one_way_fwd_us, one_way_rev_us, clock_error_us/g,
        '',
      );
      await engine.query(`COPY (${old}) TO '${file}' (FORMAT PARQUET)`, [], 'old copy');
      const rows = await engine.query(loadQuery('host_part'), ['r1'], 'host');
      expect(rows).toEqual([
        { path: 'A', probe: 'tcp', metric: 'connect_rtt_ms', unit: 'ms', ...expected(a), ts_source: 'kernel-sw' },
      ]);
      const pct = await engine.query(loadQuery('percentiles'), ['r1'], 'percentiles');
      expect(pct.find((r) => r.probe === 'tcp' && r.subset === 'all')?.n).toBe(50);
    } finally {
      engine.close();
    }
  });
});
