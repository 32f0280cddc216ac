/** The local DuckDB QueryEngine: the samples view over the object-store directory. */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { QueryFailedError } from '../../core/errors.js';
import { DuckDbQueryEngine, listSampleFiles, sqlString } from '../../local/duckdb-query.js';
import { loadQuery, RUN_TABLES, runTableColumns, samplesColumns } from '../../queries/sql.js';
import { tempDataDir, writeSamples } from '../helpers/samples.js';

const record = (over: Record<string, unknown> = {}) => ({
  run_id: 'r1',
  path_id: 'A',
  probe: 'tcp',
  kind: 'tcp-connect',
  trial: 1,
  seq: 0,
  t_start: 10.5,
  t_end: 11.25,
  metric: 'connect_rtt_ms',
  value: 0.21,
  unit: 'ms',
  ok: true,
  clock: 'app-hrtime',
  ...over,
});

describe('DuckDbQueryEngine', () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f();
  });
  async function open(dir: string): Promise<DuckDbQueryEngine> {
    const engine = await DuckDbQueryEngine.open(dir);
    cleanup.push(() => engine.close());
    return engine;
  }
  async function dataDir(prefix: string): Promise<string> {
    const dir = await tempDataDir(prefix);
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    return dir;
  }

  it('has an empty samples view with typed columns before any file exists', async () => {
    const dir = await dataDir('empty');
    const engine = await open(dir);
    expect(await engine.query('SELECT count(*) AS c FROM samples', [], 'count')).toEqual([{ c: 0 }]);
    const described = await engine.query('DESCRIBE samples', [], 'describe');
    const { columns, partitions } = samplesColumns();
    expect(described.map((r) => r.column_name)).toEqual([...columns, ...partitions].map((c) => c.name));
    const raw = await engine.query('DESCRIBE samples_jsonl', [], 'describe');
    expect(raw.map((r) => r.column_name)).toEqual([...columns, ...partitions].map((c) => c.name));
    expect(described.find((r) => r.column_name === 'value')?.column_type).toBe('DOUBLE');
    expect(described.find((r) => r.column_name === 'trial')?.column_type).toBe('INTEGER');
    expect(await engine.query(loadQuery('percentiles'), ['r1'], 'percentiles')).toEqual([]);
    expect(await engine.query(loadQuery('flags'), ['r1'], 'flags')).toEqual([]);
    // the runs and paths tables and the analysts' views, empty and typed as their DDL says
    for (const table of RUN_TABLES) {
      const cols = await engine.query(`DESCRIBE ${table}`, [], 'describe');
      expect(cols.map((r) => r.column_name)).toEqual(runTableColumns(table).map((c) => c.name));
      expect(await engine.query(`SELECT count(*) AS c FROM ${table}`, [], 'count')).toEqual([{ c: 0 }]);
    }
    expect(await engine.query('SELECT count(*) AS c FROM credit_flagged_intervals', [], 'view')).toEqual([{ c: 0 }]);
  });

  it('reads a run written to the runs and paths tables, typed, and sees a later run without reopening', async () => {
    const dir = await dataDir('tables');
    const engine = await open(dir);
    const write = async (runId: string, paths: string[]) => {
      await mkdir(path.join(dir, 'tables', 'runs'), { recursive: true });
      await mkdir(path.join(dir, 'tables', 'paths'), { recursive: true });
      await writeFile(
        path.join(dir, 'tables', 'runs', `${runId}.json`),
        `${JSON.stringify({ run_id: runId, paths: paths.length, estimate_usd: 0.5 })}\n`,
      );
      await writeFile(
        path.join(dir, 'tables', 'paths', `${runId}.jsonl`),
        paths.map((p) => `${JSON.stringify({ run_id: runId, path_id: p, distance_km: 400 })}\n`).join(''),
      );
    };
    await write('r1', ['A', 'B']);
    expect(await engine.query('SELECT run_id, paths, estimate_usd, plan_name FROM runs', [], 'runs')).toEqual([
      { run_id: 'r1', paths: 2, estimate_usd: 0.5, plan_name: null },
    ]);
    await write('r2', ['A']);
    expect(
      await engine.query(
        'SELECT run_id, count(*) AS n, sum(distance_km) AS km FROM paths GROUP BY run_id ORDER BY run_id',
        [],
        'paths',
      ),
    ).toEqual([
      { run_id: 'r1', n: 2, km: 800 },
      { run_id: 'r2', n: 1, km: 400 },
    ]);
  });

  it('reads the contract layout, partition columns from the key, extra keys ignored', async () => {
    const dir = await dataDir('layout');
    await writeSamples(dir, [
      record({ extra_number: 4, nested: { deep: [1, 2] }, note: "o'clock" }),
      record({ seq: 1, value: null, ok: false, error: 'timeout', trial: 2 }),
      record({ path_id: 'B', run_id: 'r2', seq: 0, value: 3 }),
    ]);
    const engine = await open(dir);
    const rows = await engine.query(
      'SELECT path, run, probe, trial, seq, value, ok, error, flag, t_start FROM samples ORDER BY path, run, trial',
      [],
      'read',
    );
    expect(rows).toEqual([
      {
        path: 'A',
        run: 'r1',
        probe: 'tcp',
        trial: 1,
        seq: 0,
        value: 0.21,
        ok: true,
        error: null,
        flag: null,
        t_start: 10.5,
      },
      {
        path: 'A',
        run: 'r1',
        probe: 'tcp',
        trial: 2,
        seq: 1,
        value: null,
        ok: false,
        error: 'timeout',
        flag: null,
        t_start: 10.5,
      },
      {
        path: 'B',
        run: 'r2',
        probe: 'tcp',
        trial: 1,
        seq: 0,
        value: 3,
        ok: true,
        error: null,
        flag: null,
        t_start: 10.5,
      },
    ]);
    const cols = await engine.query('SELECT * FROM samples LIMIT 1', [], 'star');
    expect(Object.keys(cols[0])).not.toContain('extra_number');
    expect(Object.keys(cols[0])).not.toContain('nested');
  });

  it('binds ? parameters and returns counts as numbers, not bigints', async () => {
    const dir = await dataDir('params');
    await writeSamples(dir, [record(), record({ seq: 1 }), record({ run_id: 'r2' })]);
    const engine = await open(dir);
    const rows = await engine.query('SELECT count(*) AS c, sum(seq) AS s FROM samples WHERE run = ?', ['r1'], 'count');
    expect(rows).toEqual([{ c: 2, s: 1 }]);
    expect(typeof rows[0].c).toBe('number');
    const dec = await engine.query('SELECT CAST(1.25 AS DECIMAL(10,2)) AS d, CAST(7 AS HUGEINT) AS h', [], 'types');
    expect(dec).toEqual([{ d: 1.25, h: 7 }]);
  });

  it('sees files written after it was opened', async () => {
    const dir = await dataDir('refresh');
    const engine = await open(dir);
    expect(await engine.query('SELECT count(*) AS c FROM samples', [], 'count')).toEqual([{ c: 0 }]);
    await writeSamples(dir, [record(), record({ seq: 1 })]);
    await engine.registerPartition('A', 'r1');
    expect(await engine.query('SELECT count(*) AS c FROM samples', [], 'count')).toEqual([{ c: 2 }]);
  });

  it('handles a quote in the data directory path', async () => {
    const parent = await dataDir('quote');
    const dir = path.join(parent, "it's data");
    await writeSamples(dir, [record()]);
    const engine = await open(dir);
    expect(await engine.query('SELECT count(*) AS c FROM samples', [], 'count')).toEqual([{ c: 1 }]);
    expect(sqlString("a'b")).toBe("'a''b'");
  });

  it('takes path and run from the key only, not from directories above the data directory', async () => {
    for (const parquet of [false, true]) {
      const parent = await dataDir(`outer-${parquet}`);
      const dir = path.join(parent, 'run=outer', 'path=outer', 'data');
      await writeSamples(dir, [record(), record({ seq: 1 }), record({ path_id: 'B', run_id: 'r2' })], { parquet });
      const engine = await open(dir);
      const rows = await engine.query(
        'SELECT path, run, count(*) AS c FROM samples GROUP BY path, run ORDER BY path',
        [],
        'count',
      );
      expect(rows, `parquet: ${parquet}`).toEqual([
        { path: 'A', run: 'r1', c: 2 },
        { path: 'B', run: 'r2', c: 1 },
      ]);
      const raw = await engine.query('SELECT DISTINCT run FROM samples_jsonl ORDER BY run', [], 'runs');
      expect(raw).toEqual([{ run: 'r1' }, { run: 'r2' }]);
    }
  });

  it('ignores files outside the path=/run= layout', async () => {
    const dir = await dataDir('stray');
    await writeSamples(dir, [record()]);
    await mkdir(path.join(dir, 'samples', 'junk'), { recursive: true });
    await writeFile(path.join(dir, 'samples', 'junk', 'x.jsonl'), '{"value": "not a number"}\n');
    await writeFile(path.join(dir, 'samples', 'path=A', 'run=r1', 'notes.txt'), 'not json');
    expect((await listSampleFiles(dir)).map((f) => path.relative(dir, f))).toEqual([
      path.join('samples', 'path=A', 'run=r1', 'tcp-1.jsonl'),
    ]);
    const engine = await open(dir);
    expect(await engine.query('SELECT count(*) AS c FROM samples', [], 'count')).toEqual([{ c: 1 }]);
  });

  it('wraps DuckDB errors in QueryFailedError named by the label', async () => {
    const dir = await dataDir('errors');
    const engine = await open(dir);
    const bad = engine.query('SELECT no_such_column FROM samples', [], 'summary-percentiles');
    await expect(bad).rejects.toBeInstanceOf(QueryFailedError);
    await expect(bad).rejects.toThrow(/^summary-percentiles: .*no_such_column/);
    // a malformed record is an error, not silently skipped
    await writeSamples(dir, [record()]);
    await writeFile(path.join(dir, 'samples', 'path=A', 'run=r1', 'bad-1.jsonl'), '{"value": "abc"}\n');
    await expect(engine.query('SELECT sum(value) FROM samples', [], 'sum')).rejects.toThrow(/^sum: /);
    // the engine stays usable after a failure
    await rm(path.join(dir, 'samples', 'path=A', 'run=r1', 'bad-1.jsonl'));
    expect(await engine.query('SELECT count(*) AS c FROM samples', [], 'count')).toEqual([{ c: 1 }]);
  });

  it('runs flags.sql and the credit_flagged_intervals view', async () => {
    const dir = await dataDir('flags');
    const thr = (seq: number, flag?: string, trial = 1) =>
      record({ probe: 'iperf', kind: 'iperf3', metric: 'throughput_bps', unit: 'bit/s', seq, trial, value: 1e9, flag });
    await writeSamples(dir, [
      thr(0),
      thr(1),
      thr(2, 'credit-exhausted'),
      thr(3, 'credit-exhausted'),
      thr(4, 'credit-exhausted'),
      thr(5, 'credit-exhausted', 2),
      thr(7, 'other-flag', 2),
      record(),
      record({ run_id: 'r2', probe: 'iperf', metric: 'throughput_bps', flag: 'credit-exhausted' }),
    ]);
    const engine = await open(dir);
    expect(await engine.query(loadQuery('flags'), ['r1'], 'flags')).toEqual([
      { path: 'A', probe: 'iperf', trial: 1, flag: 'credit-exhausted', first_seq: 2, intervals: 3 },
      { path: 'A', probe: 'iperf', trial: 2, flag: 'credit-exhausted', first_seq: 5, intervals: 1 },
      { path: 'A', probe: 'iperf', trial: 2, flag: 'other-flag', first_seq: 7, intervals: 1 },
    ]);
    await engine.query(loadQuery('views/credit_flagged_intervals'), [], 'create view');
    // idempotent: a second create must not fail
    await engine.query(loadQuery('views/credit_flagged_intervals'), [], 'create view');
    const rows = await engine.query(
      "SELECT trial, seq, credit_exhausted FROM credit_flagged_intervals WHERE run = 'r1' ORDER BY trial, seq",
      [],
      'view',
    );
    expect(rows).toEqual([
      { trial: 1, seq: 0, credit_exhausted: false },
      { trial: 1, seq: 1, credit_exhausted: false },
      { trial: 1, seq: 2, credit_exhausted: true },
      { trial: 1, seq: 3, credit_exhausted: true },
      { trial: 1, seq: 4, credit_exhausted: true },
      { trial: 2, seq: 5, credit_exhausted: true },
      { trial: 2, seq: 7, credit_exhausted: false },
    ]);
  });
});
