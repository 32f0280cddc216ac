/**
 * the Parquet copy of a partition's samples (functions/pipeline/parquet-copy.ts), written by the
 * real DuckDB engine (queries/parquet_copy.sql): the Parquet rows equal the JSONL rows, the
 * percentiles read from it equal a sort in JavaScript, a rerun replaces instead of appending, the
 * `samples` view never counts a partition twice, and a bad record stops the copy.
 */
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { QueryFailedError } from '../../../core/errors.js';
import { keys } from '../../../core/keys.js';
import { silentLogger } from '../../../functions/log.js';
import { prepareParquetCopy, writeParquetCopy } from '../../../functions/pipeline/parquet-copy.js';
import { DirStore } from '../../../local/dir-store.js';
import { COPY_CONNECTIONS, copierOf, DuckDbQueryEngine, ROW_GROUP_ROWS } from '../../../local/duckdb-query.js';
import { loadQuery, samplesColumns } from '../../../queries/sql.js';
import { prng, tempDataDir, writeSamples } from '../../helpers/samples.js';

type Rec = Record<string, unknown>;

/** Records with every column shape: nulls, missing keys, negatives, big ints, extra keys, quotes. */
function records(runId: string, pathId: string, count: number, seed: number): Rec[] {
  const rand = prng(seed);
  const out: Rec[] = [];
  for (let i = 0; i < count; i++) {
    const failed = rand() < 0.1;
    const rec: Rec = {
      run_id: runId,
      path_id: pathId,
      probe: i % 3 === 0 ? 'iperf-tcp' : 'tcp',
      kind: i % 3 === 0 ? 'iperf3' : 'tcp-connect',
      trial: 1 + (i % 2),
      seq: i % 7 === 0 ? 2 ** 31 - 1 - i : i,
      t_start: 1_700_000_000_000.5 + i,
      t_end: 1_700_000_000_001.25 + i,
      metric: i % 3 === 0 ? 'throughput_bps' : 'connect_rtt_ms',
      value: failed ? null : (rand() - 0.2) * 10 ** Math.floor(rand() * 12),
      unit: i % 3 === 0 ? 'bit/s' : 'ms',
      ok: !failed,
      streams: 4,
      detail: { nested: true },
    };
    // multi-byte UTF-8: the writer decodes the file's bytes line by line
    if (failed) rec.error = 'it\'s a "quoted" timeout — 5 µs, naïve 🙂';
    if (i % 5 !== 0) rec.clock = 'tool';
    if (i % 3 === 0 && i > count / 2) rec.flag = 'credit-exhausted';
    out.push(rec);
  }
  return out;
}

const ORDER = 'ORDER BY path, run, probe, trial, seq, t_start';

/** The pipeline's deps for the copy: the directory store and DuckDB over the same directory. */
async function copyDeps(dir: string, store = new DirStore(dir)) {
  return { store, log: silentLogger, query: await DuckDbQueryEngine.open(dir) };
}

describe('writeParquetCopy', () => {
  let dir: string;
  let engine: DuckDbQueryEngine | undefined;
  beforeEach(async () => {
    dir = await tempDataDir('parquet-copy');
  });
  afterEach(async () => {
    await engine?.close();
    engine = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('gives the same rows, column by column, as the JSONL it was built from', async () => {
    await writeSamples(dir, [
      ...records('r1', 'A', 2500, 1),
      ...records('r1', 'B', 40, 2),
      ...records('r2', 'A', 7, 3),
    ]);
    const deps = await copyDeps(dir);
    engine = deps.query;
    for (const [pathId, runId] of [
      ['A', 'r1'],
      ['B', 'r1'],
      ['A', 'r2'],
    ]) {
      expect((await writeParquetCopy(deps, { pathId, runId })).prefix).toBe(keys.parquetPrefix(pathId, runId));
    }
    const { columns, partitions } = samplesColumns();
    const list = [...columns, ...partitions].map((c) => c.name).join(', ');
    const fromJsonl = await engine.query(`SELECT ${list} FROM samples_jsonl ${ORDER}`, [], 'jsonl');
    const fromParquet = await engine.query(`SELECT ${list} FROM samples ${ORDER}`, [], 'parquet');
    expect(fromJsonl.length).toBe(2547);
    expect(fromParquet).toStrictEqual(fromJsonl);
    // The samples view really reads the Parquet files (not the JSONL it falls back to).
    const sources = await engine.query(
      "SELECT count(*) AS n FROM read_parquet(? || '/parquet/*/*/samples.parquet', hive_partitioning = true)",
      [dir],
      'files',
    );
    expect(sources).toEqual([{ n: 2547 }]);
  });

  it('rewrites the same key on a retry or rerun and never duplicates rows', async () => {
    await writeSamples(dir, records('r1', 'A', 300, 4));
    const deps = await copyDeps(dir);
    const { store } = deps;
    engine = deps.query;
    const first = await writeParquetCopy(deps, { pathId: 'A', runId: 'r1' });
    const again = await writeParquetCopy(deps, { pathId: 'A', runId: 'r1' });
    expect(again).toEqual(first);
    expect(first).toEqual({ prefix: keys.parquetPrefix('A', 'r1'), rows: 300 });
    expect(await store.list('parquet/')).toEqual([keys.parquetCopy('A', 'r1')]);
    // No temporary file is left beside the copy.
    expect(await readdir(path.join(dir, keys.parquetPrefix('A', 'r1')))).toEqual(['samples.parquet']);
    expect(await engine.query('SELECT count(*) AS n FROM samples', [], 'n')).toEqual([{ n: 300 }]);

    // A retried collect that rewrote one JSONL file with more lines: the copy follows, once.
    await writeSamples(dir, [...records('r1', 'A', 300, 4), ...records('r1', 'A', 10, 5)]);
    const third = await writeParquetCopy(deps, { pathId: 'A', runId: 'r1' });
    expect(third.rows).toBe(310);
    expect(await engine.query('SELECT count(*) AS n FROM samples', [], 'n')).toEqual([{ n: 310 }]);
    expect(await engine.query('SELECT count(*) AS n FROM samples_jsonl', [], 'n')).toEqual([{ n: 310 }]);
  });

  it('reads a partition from its JSONL until its Parquet copy exists, never from both', async () => {
    await writeSamples(dir, [...records('r1', 'A', 50, 6), ...records('r1', 'B', 20, 7)]);
    const deps = await copyDeps(dir);
    engine = deps.query;
    await writeParquetCopy(deps, { pathId: 'A', runId: 'r1' });
    const counts = await engine.query('SELECT path, count(*) AS n FROM samples GROUP BY path ORDER BY path', [], 'n');
    expect(counts).toEqual([
      { path: 'A', n: 50 },
      { path: 'B', n: 20 },
    ]);
    const pct = loadQuery('percentiles');
    const before = await engine.query(pct, ['r1'], 'percentiles');
    await writeParquetCopy(deps, { pathId: 'B', runId: 'r1' });
    expect(await engine.query(pct, ['r1'], 'percentiles')).toStrictEqual(before);
  });

  it('removes a stale copy when the partition has no samples', async () => {
    const deps = await copyDeps(dir);
    engine = deps.query;
    const key = keys.parquetCopy('A', 'r1');
    await deps.store.put(key, new Uint8Array([1, 2, 3]));
    expect(await writeParquetCopy(deps, { pathId: 'A', runId: 'r1' })).toEqual({
      prefix: keys.parquetPrefix('A', 'r1'),
      rows: 0,
    });
    await expect(stat(path.join(dir, key))).rejects.toThrow(/ENOENT/);
  });

  it('writes several row groups for a large partition and keeps every row', async () => {
    const n = ROW_GROUP_ROWS * 2 + 17;
    const lines = Array.from({ length: n }, (_, i) =>
      JSON.stringify({
        run_id: 'r',
        path_id: 'P',
        probe: 'x',
        kind: 'sockperf',
        trial: 1,
        seq: i,
        value: i / 8,
        ok: true,
      }),
    );
    await new DirStore(dir).put(keys.samples('P', 'r', 'x', 1), `${lines.join('\n')}\n`);
    const deps = await copyDeps(dir);
    engine = deps.query;
    await writeParquetCopy(deps, { pathId: 'P', runId: 'r' });
    const [row] = await engine.query('SELECT count(*) AS n, sum(seq) AS s, max(value) AS m FROM samples', [], 'n');
    expect(row).toEqual({ n, s: (n * (n - 1)) / 2, m: (n - 1) / 8 });
    const groups = await engine.query(
      "SELECT count(DISTINCT row_group_id) AS g FROM parquet_metadata(? || '/parquet/path=P/run=r/samples.parquet')",
      [dir],
      'meta',
    );
    expect(groups[0].g as number).toBeGreaterThanOrEqual(2);
  });

  it("gives each group's exact nearest-rank figures from the copy as from the JSONL, and as a sort in JavaScript: ties, flags, failures and missing group keys included", async () => {
    const rand = prng(21);
    const recs: Rec[] = [];
    for (let i = 0; i < 3000; i++) {
      const failed = rand() < 0.07;
      const probe = ['a', 'b', 'c'][i % 3];
      recs.push({
        run_id: 'r1',
        path_id: i % 5 === 0 ? 'B' : 'A',
        probe,
        kind: 'tcp-connect',
        trial: 1 + (i % 2),
        seq: i,
        metric: i % 7 === 0 ? 'other' : 'rtt',
        // probe a: heavy ties; b: distinct doubles, some negative; c: a missing unit, one value
        value: failed ? null : probe === 'a' ? Math.floor(rand() * 6) / 2 : probe === 'b' ? rand() * 100 - 20 : 7,
        ...(probe === 'c' ? {} : { unit: 'ms' }),
        ok: failed ? (i % 2 === 0 ? false : undefined) : true,
        ...(rand() < 0.2 ? { flag: 'credit-exhausted' } : {}),
      });
    }
    // A flagged group with no unflagged value, a group with no successful value at all, and a
    // failed row that carries a value (it counts as failed: ok is false).
    recs.push({ run_id: 'r1', path_id: 'A', probe: 'd', trial: 1, seq: 0, value: 1, ok: true, flag: 'x' });
    recs.push({ run_id: 'r1', path_id: 'A', probe: 'e', trial: 1, seq: 0, value: null, ok: false });
    recs.push({
      run_id: 'r1',
      path_id: 'A',
      probe: 'a',
      metric: 'rtt',
      unit: 'ms',
      trial: 1,
      seq: 9,
      value: -99,
      ok: false,
    });
    await writeSamples(dir, recs);
    engine = await DuckDbQueryEngine.open(dir);
    const pct = loadQuery('percentiles');
    // No Parquet copy yet: the samples view reads the JSONL.
    const fromJsonl = await engine.query(pct, ['r1'], 'percentiles');
    for (const pathId of ['A', 'B'])
      await writeParquetCopy({ store: new DirStore(dir), log: silentLogger, query: engine }, { pathId, runId: 'r1' });
    const fromCopy = await engine.query(pct, ['r1'], 'percentiles');
    expect(fromCopy).toStrictEqual(fromJsonl);
    // The definition, computed here: per group and subset, sort the successful values and read
    // position ceil(k n / 1000); the unflagged subset only where the group has a flagged row.
    const key = (r: Rec) => [r.path_id, r.probe ?? null, r.metric ?? null, r.unit ?? null];
    const groups = new Map<string, Rec[]>();
    for (const r of recs) {
      const k = JSON.stringify(key(r));
      groups.set(k, [...(groups.get(k) ?? []), r]);
    }
    const figures = (rows: Rec[]) => {
      const sorted = rows
        .filter((r) => r.ok === true && r.value !== null)
        .map((r) => r.value as number)
        .sort((x, y) => x - y);
      const n = sorted.length;
      const at = (k: number) => (n === 0 ? null : sorted[Math.ceil((k * n) / 1000) - 1]);
      return { n, total: rows.length, p50: at(500), p95: at(950), p99: at(990), p999: at(999), max: at(1000) };
    };
    const expected: Rec[] = [];
    for (const [k, rows] of groups) {
      const [path, probe, metric, unit] = JSON.parse(k);
      expected.push({ path, probe, metric, unit, subset: 'all', ...figures(rows) });
      if (rows.some((r) => r.flag !== undefined))
        expected.push({
          path,
          probe,
          metric,
          unit,
          subset: 'unflagged',
          ...figures(rows.filter((r) => r.flag === undefined)),
        });
    }
    const got = fromCopy.map((r) => ({
      path: r.path,
      probe: r.probe,
      metric: r.metric,
      unit: r.unit,
      subset: r.subset,
      n: r.n,
      total: r.total,
      p50: r.p50,
      p95: r.p95,
      p99: r.p99,
      p999: r.p999,
      max: r.max,
    }));
    const byKey = (x: Rec) => JSON.stringify([x.path, x.probe, x.metric, x.unit, x.subset]);
    const sort = (rows: Rec[]) => [...rows].sort((x, y) => (byKey(x) < byKey(y) ? -1 : 1));
    expect(sort(got)).toEqual(sort(expected));
    // The tie-heavy group really is tie-heavy, and the flagged-only and failed-only groups are there.
    expect(new Set(recs.filter((r) => r.probe === 'a' && r.ok === true).map((r) => r.value)).size).toBe(6);
    expect(got.find((r) => r.probe === 'd' && r.subset === 'unflagged')).toMatchObject({ n: 0, total: 0, p50: null });
    expect(got.find((r) => r.probe === 'e')).toMatchObject({ n: 0, total: 1, p50: null, max: null });
  });

  it('reads a copy an earlier writer made with its rank columns as it is: the extra columns are not read', async () => {
    await writeSamples(dir, records('r1', 'A', 400, 8));
    engine = await DuckDbQueryEngine.open(dir);
    const pct = loadQuery('percentiles');
    const expected = await engine.query(pct, ['r1'], 'percentiles');
    expect(expected.every((r) => r.n === 0 || r.p50 !== null)).toBe(true);
    // That writer's file: the records' columns, then ten rank columns (two of them here, with
    // figures no query may use), written with DuckDB itself; its rows are all but one.
    const file = path.join(dir, keys.parquetCopy('A', 'r1'));
    await mkdir(path.dirname(file), { recursive: true });
    const { columns } = samplesColumns();
    await engine.query(
      `COPY (SELECT ${columns.map((c) => c.name).join(', ')}, CAST(-1 AS BIGINT) AS value_rank, CAST(0 AS BIGINT) AS value_permille_hi FROM samples_jsonl WHERE seq <> 1) TO '${file}' (FORMAT PARQUET)`,
      [],
      'copy',
    );
    const read = await engine.query(pct, ['r1'], 'percentiles');
    expect(read.reduce((t, r) => t + (r.subset === 'all' ? (r.total as number) : 0), 0)).toBe(399);
    const described = await engine.query('DESCRIBE samples', [], 'describe');
    expect(described.map((r) => r.column_name)).not.toContain('value_rank');
    // Rewritten by today's writer, the copy has the records' columns only, and the figures are the JSONL's.
    await writeParquetCopy(
      { store: new DirStore(dir), log: silentLogger, query: engine },
      { pathId: 'A', runId: 'r1' },
    );
    const names = await engine.query(
      'SELECT name FROM parquet_schema(?) WHERE name <> ?',
      [file, 'duckdb_schema'],
      'schema',
    );
    expect(names.map((r) => r.name)).toEqual(columns.map((c) => c.name));
    expect(await engine.query(pct, ['r1'], 'percentiles')).toStrictEqual(expected);
  });

  it("reads only its own partition's JSONL: another run's unreadable line does not stop it", async () => {
    await writeSamples(dir, records('r1', 'A', 50, 11));
    const deps = await copyDeps(dir);
    engine = deps.query;
    // The whole table cannot be read now, but the copy of r1 reads only r1's files (DuckDB
    // prunes the view's files by the partition the WHERE names: they come from the file names).
    await deps.store.put(keys.samples('A', 'r2', 'bad', 1), '{"run_id":"r2","seq":"not a number","ok":true}\n');
    await writeParquetCopy(deps, { pathId: 'A', runId: 'r1' });
    const [row] = await engine.query(
      'SELECT count(*) AS n FROM read_parquet(?)',
      [path.join(dir, keys.parquetCopy('A', 'r1'))],
      'n',
    );
    expect(row).toEqual({ n: 50 });
    // The other run's copy fails on its own line.
    await expect(writeParquetCopy(deps, { pathId: 'A', runId: 'r2' })).rejects.toThrow(
      /^parquet copy A r2: .*not a number/,
    );
    await expect(engine.query('SELECT max(seq) AS s FROM samples_jsonl', [], 'all')).rejects.toThrow(/not a number/);
  });

  it('stops at a wrongly typed field, keeps the old copy out of the table and leaves no file', async () => {
    await writeSamples(dir, records('r1', 'A', 20, 10));
    const deps = await copyDeps(dir);
    engine = deps.query;
    await writeParquetCopy(deps, { pathId: 'A', runId: 'r1' });
    await deps.store.put(keys.samples('A', 'r1', 'bad', 1), '{"run_id":"r1","seq":"not a number","ok":true}\n');
    const err = await writeParquetCopy(deps, { pathId: 'A', runId: 'r1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QueryFailedError);
    expect((err as Error).message).toMatch(/^parquet copy A r1: .*not a number/);
    // The old copy was removed first: the partition is read from its JSONL, whose bad line the
    // query names too; nothing half-written is left under the prefix.
    expect(await deps.store.list(keys.parquetPrefix('A', 'r1'))).toEqual([]);
  });
  it('copies partitions side by side on its copy connections, each its own rows, while a query reads them all', async () => {
    const paths = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'];
    const sizes = paths.map((_, i) => 20 + 7 * i);
    await writeSamples(
      dir,
      paths.flatMap((p, i) => records('r1', p, sizes[i], 20 + i)),
    );
    const deps = await copyDeps(dir);
    engine = deps.query;
    const calls = await Promise.all(paths.map((p) => prepareParquetCopy(deps, { pathId: p, runId: 'r1' })));
    // The eight copies are spread over more than one connection (the test would not test the
    // side-by-side copies otherwise).
    expect(new Set(calls.map((c) => copierOf(c.QueryString, COPY_CONNECTIONS))).size).toBeGreaterThan(1);
    const total = sizes.reduce((a, b) => a + b, 0);
    const [query, ...copies] = await Promise.all([
      // The query's `samples_jsonl` is every partition: a copy's view of its partition is its
      // connection's own.
      engine.query('SELECT count(*) AS n FROM samples_jsonl', [], 'all'),
      ...calls.map((c) => engine?.execute(c)),
    ]);
    expect(query).toEqual([{ n: total }]);
    expect(copies.map((c) => c?.rows)).toEqual(sizes);
    for (const [i, p] of paths.entries()) {
      const [row] = await engine.query(
        'SELECT count(*) AS n, min(path_id) AS lo, max(path_id) AS hi FROM read_parquet(?)',
        [path.join(dir, keys.parquetCopy(p, 'r1'))],
        p,
      );
      expect(row).toEqual({ n: sizes[i], lo: p, hi: p });
    }
    expect(await engine.query('SELECT count(*) AS n FROM samples', [], 'n')).toEqual([{ n: total }]);
    expect(await engine.query('SELECT count(*) AS n FROM samples_jsonl', [], 'n')).toEqual([{ n: total }]);
  });

  it('runs two copies of one partition one after the other, as Athena refuses the second (its location is not empty)', async () => {
    await writeSamples(dir, records('r1', 'A', 40, 30));
    const deps = await copyDeps(dir);
    engine = deps.query;
    const call = await prepareParquetCopy(deps, { pathId: 'A', runId: 'r1' });
    const both = await Promise.allSettled([engine.execute(call), engine.execute(call)]);
    expect(both.map((b) => b.status)).toEqual(['fulfilled', 'rejected']);
    expect(both[0].status === 'fulfilled' && both[0].value.rows).toBe(40);
    expect(both[1].status === 'rejected' && String(both[1].reason)).toMatch(/HIVE_PATH_ALREADY_EXISTS/);
    expect(await readdir(path.join(dir, keys.parquetPrefix('A', 'r1')))).toEqual(['samples.parquet']);
  });

  it('closes once the copies under way have ended, each written whole, and refuses the rest', async () => {
    await writeSamples(dir, [...records('r1', 'A', 40_000, 40), ...records('r1', 'B', 50, 41)]);
    const deps = await copyDeps(dir);
    engine = deps.query;
    const calls = await Promise.all(['A', 'B'].map((p) => prepareParquetCopy(deps, { pathId: p, runId: 'r1' })));
    const copies = calls.map((c) => deps.query.execute(c));
    for (const c of copies) c.catch(() => undefined);
    // What a stopped run's driver does: A's copy is under way (its temporary file is there), the
    // engine is closed.
    const dirA = path.join(dir, keys.parquetPrefix('A', 'r1'));
    for (let i = 0; i < 2000; i++) {
      if ((await readdir(dirA).catch(() => [] as string[])).some((f) => f.endsWith('.tmp'))) break;
      await new Promise((r) => setTimeout(r, 2));
    }
    expect((await readdir(dirA)).some((f) => f.endsWith('.tmp'))).toBe(true);
    await deps.query.close();
    // A's copy ended whole before the connections closed.
    expect((await copies[0]).rows).toBe(40_000);
    expect(await readdir(dirA)).toEqual(['samples.parquet']);
    const check = await DuckDBInstance.create(':memory:');
    const c = await check.connect();
    const reader = await c.runAndReadAll(
      `SELECT count(*) AS n FROM read_parquet('${path.join(dirA, 'samples.parquet')}')`,
    );
    expect(Number(reader.getRowObjectsJS()[0].n)).toBe(40_000);
    c.closeSync();
    check.closeSync();
    // B's copy either ran whole beside it or was refused, leaving nothing.
    const b = await Promise.allSettled([copies[1]]);
    const filesB = await readdir(path.join(dir, keys.parquetPrefix('B', 'r1'))).catch(() => [] as string[]);
    if (b[0].status === 'fulfilled') expect([b[0].value.rows, filesB]).toEqual([50, ['samples.parquet']]);
    else expect([String(b[0].reason), filesB]).toEqual([expect.stringMatching(/the engine is closed/), []]);
    await expect(deps.query.query('SELECT 1', [], 'after close')).rejects.toThrow(/after close: the engine is closed/);
    await expect(deps.query.execute(calls[0])).rejects.toThrow(/the engine is closed/);
    // Closing again is the same close.
    await deps.query.close();
  });
});
