/**
 * The Parquet copy's one statement (queries/unload.ts): the UNLOAD Athena runs, read back by the
 * parser the local engine uses, and the local engine taking only that statement, where Athena
 * would write it, and refusing what Athena refuses.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { keys } from '../../core/keys.js';
import { DirStore } from '../../local/dir-store.js';
import { DuckDbQueryEngine, LOCAL_BUCKET } from '../../local/duckdb-query.js';
import { loadQuery } from '../../queries/sql.js';
import { parseUnload, unloadParquetCopy } from '../../queries/unload.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** A local engine over a new data directory, removed after the test. */
async function openEngine(): Promise<{ engine: DuckDbQueryEngine; store: DirStore }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'pb-unload-'));
  const engine = await DuckDbQueryEngine.open(dir);
  cleanups.push(async () => {
    engine.close();
    await rm(dir, { recursive: true, force: true });
  });
  return { engine, store: new DirStore(dir) };
}

/** One tcp-connect sample record of run r1 as a JSONL line. */
const sampleLine = (pathId: string, seq: number, value = seq + 1) =>
  JSON.stringify({
    run_id: 'r1',
    path_id: pathId,
    probe: 'p',
    kind: 'tcp-connect',
    trial: 1,
    seq,
    t_start: 1796083200 + seq,
    t_end: 1796083200.001 + seq,
    metric: 'connect_rtt_ms',
    value,
    unit: 'ms',
    ok: true,
  });

describe('the Parquet copy statement', () => {
  it('reads back its own UNLOAD: the SELECT of parquet_copy.sql, the bucket, the prefix and options', () => {
    const u = parseUnload(unloadParquetCopy('pathbench-data', 'A', 'r1'));
    expect(u).toEqual({
      select: loadQuery('parquet_copy', { path: 'A', run: 'r1' }),
      bucket: 'pathbench-data',
      prefix: keys.parquetPrefix('A', 'r1'),
      format: 'PARQUET',
      compression: 'SNAPPY',
    });
  });

  it('refuses any other statement, with the reason', () => {
    expect(() => parseUnload('SELECT 1')).toThrow(/not an UNLOAD/);
    expect(() => parseUnload("UNLOAD (SELECT 1) TO 's3://b/p/' WITH (format = PARQUET)")).toThrow(
      /option not understood: format = PARQUET/,
    );
  });

  it('runs on DuckDB as the copy of a partition of the local bucket only, into an empty location (or as a SELECT)', async () => {
    const { engine, store } = await openEngine();
    await store.put(keys.samples('A', 'r1', 'p', 1), `${[3, 1, 2].map((v, i) => sampleLine('A', i, v)).join('\n')}\n`);
    const call = engine.copyCall('A', 'r1');
    expect(call.QueryString).toBe(unloadParquetCopy(LOCAL_BUCKET, 'A', 'r1'));
    await expect(engine.execute({ ...call, QueryString: 'DROP TABLE samples' })).rejects.toThrow(
      /runs a SELECT or the Parquet copy's UNLOAD: not an UNLOAD/,
    );
    // A SELECT (a summary query) runs, its rows kept under its execution id.
    const selected = await engine.execute({
      ...engine.selectCall('SELECT count(*) AS n FROM samples WHERE run = ?', ['r1']),
    });
    expect(selected.rows).toBe(1);
    expect(await engine.resultRows(selected.queryExecutionId)).toEqual([{ n: 3 }]);
    await expect(
      engine.execute({ ...call, QueryString: unloadParquetCopy('someone-elses-bucket', 'A', 'r1') }),
    ).rejects.toThrow(/writes only s3:\/\/pathbench-local\/parquet/);
    expect(await engine.execute(call)).toMatchObject({ rows: 3, queryExecutionId: expect.any(String) });
    expect(await store.list('parquet/')).toEqual([keys.parquetCopy('A', 'r1')]);
    // The copy holds the records as they are: three rows, the values the JSONL has.
    const rows = await engine.query('SELECT seq, value FROM samples WHERE path = ? ORDER BY seq', ['A'], 'copy');
    expect(rows).toEqual([
      { seq: 0, value: 3 },
      { seq: 1, value: 1 },
      { seq: 2, value: 2 },
    ]);
    await expect(engine.execute(call)).rejects.toThrow(/HIVE_PATH_ALREADY_EXISTS/);
    // A partition without samples gets no copy.
    expect((await engine.execute(engine.copyCall('B', 'r1'))).rows).toBe(0);
    expect(await store.list('parquet/path=B/')).toEqual([]);
  });

  it("copies each partition on DuckDB from that partition's files alone; the queries after see every partition", async () => {
    const { engine, store } = await openEngine();
    const raw = 'SELECT path, count(*) AS n FROM samples_jsonl GROUP BY path ORDER BY path';
    await store.put(keys.samples('A', 'r1', 'p', 1), `${sampleLine('A', 0)}\n${sampleLine('A', 1)}\n`);
    await store.put(keys.samples('B', 'r1', 'p', 1), `${sampleLine('B', 0)}\n`);
    expect(await engine.query(raw, [], 'raw')).toEqual([
      { path: 'A', n: 2 },
      { path: 'B', n: 1 },
    ]);
    expect((await engine.execute(engine.copyCall('A', 'r1'))).rows).toBe(2);
    // No file changed since the query before the copy: the view the copy narrowed is still redefined.
    expect(await engine.query(raw, [], 'raw')).toEqual([
      { path: 'A', n: 2 },
      { path: 'B', n: 1 },
    ]);
    // Written after A's copy: B's copy and the queries after it see it.
    await store.put(keys.samples('B', 'r1', 'p', 2), `${sampleLine('B', 5)}\n`);
    expect((await engine.execute(engine.copyCall('B', 'r1'))).rows).toBe(2);
    const all = 'SELECT path, count(*) AS n, max(seq) AS top FROM samples GROUP BY path ORDER BY path';
    expect(await engine.query(all, [], 'all')).toEqual([
      { path: 'A', n: 2, top: 1 },
      { path: 'B', n: 2, top: 5 },
    ]);
  });
});
