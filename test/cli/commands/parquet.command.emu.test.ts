/**
 * `pathbench parquet RUN_ID` (cli/commands/parquet.command.ts): a run whose Parquet copies predate the
 * newest columns (the one-way delays) gets them rewritten from its JSONL by the engine: DuckDB in a data directory (the
 * percentiles read the same as from the JSONL), and in S3 (s3rver on loopback, the real SDK) the
 * old objects removed and Athena (mocked at the SDK) sent the UNLOAD.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  AthenaClient,
  BatchGetQueryExecutionCommand,
  GetQueryExecutionCommand,
  ListQueryExecutionsCommand,
  StartQueryExecutionCommand,
  StopQueryExecutionCommand,
} from '@aws-sdk/client-athena';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rewriteParquetCopies } from '../../../cli/commands/parquet.command.js';
import { keys } from '../../../core/keys.js';
import { AthenaQueryEngine } from '../../../functions/adapters/aws/athena-query.js';
import { S3ObjectStore } from '../../../functions/adapters/aws/s3-store.js';
import { DirStore } from '../../../local/dir-store.js';
import { DuckDbQueryEngine } from '../../../local/duckdb-query.js';
import { loadQuery, samplesColumns } from '../../../queries/sql.js';
import { unloadParquetCopy } from '../../../queries/unload.js';
import { type S3, startS3rver } from '../../helpers/emulators.js';
import { prng, tempDataDir, writeSamples } from '../../helpers/samples.js';

type Rec = Record<string, unknown>;

function records(pathId: string, n: number, seed: number): Rec[] {
  const rand = prng(seed);
  return Array.from({ length: n }, (_, i) => ({
    run_id: 'r1',
    path_id: pathId,
    probe: 'tcp',
    kind: 'tcp-connect',
    trial: 1,
    seq: i,
    metric: 'connect_rtt_ms',
    value: Math.floor(rand() * 50) / 10,
    unit: 'ms',
    ok: rand() > 0.05,
    ...(i % 4 === 0 ? { flag: 'credit-exhausted' } : {}),
  }));
}

/** A finished run's manifest with these paths (what the rewrite reads of it: the path ids). */
function manifest(runId: string, pathIds: string[]): string {
  const paths = pathIds.map((id) => ({ id, label: id, status: 'succeeded', steps: [], probes: [], notes: [] }));
  return JSON.stringify({
    runId,
    planName: 'parquet',
    driver: 'local',
    status: 'succeeded',
    startedAt: '2026-12-01T00:00:00.000Z',
    paths,
    routeChanges: [],
  });
}

/** Names of the columns of a Parquet file (bytes), read by DuckDB. */
async function parquetColumns(engine: DuckDbQueryEngine, dir: string, bytes: Uint8Array): Promise<string[]> {
  const file = path.join(dir, `check-${Math.random().toString(36).slice(2)}.parquet`);
  await writeFile(file, bytes);
  const rows = await engine.query('SELECT name FROM parquet_schema(?)', [file], 'schema');
  await rm(file);
  return rows.map((r) => String(r.name)).filter((n) => n !== 'schema' && n !== 'duckdb_schema');
}

describe('pathbench parquet', () => {
  let dir: string;
  let s3: S3;
  beforeAll(async () => {
    dir = await tempDataDir('parquet-cli');
    s3 = await startS3rver('pathbench-data');
  });
  afterAll(async () => {
    await s3?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('rewrites a data directory run whose copies lack the newest columns; the figures stay those of the JSONL', async () => {
    const recs = [...records('A', 500, 1), ...records('B', 30, 2)];
    await writeSamples(dir, recs);
    const store = new DirStore(dir);
    await store.put(keys.manifest('r1'), manifest('r1', ['A', 'B', 'C']));
    const engine = await DuckDbQueryEngine.open(dir);
    try {
      const expected = await engine.query(loadQuery('percentiles'), ['r1'], 'percentiles');
      // Copies as an older writer made them: without the one-way delays' columns.
      const { columns } = samplesColumns();
      const older = columns.filter((c) => !['one_way_fwd_us', 'one_way_rev_us', 'clock_error_us'].includes(c.name));
      for (const p of ['A', 'B']) {
        const file = path.join(dir, keys.parquetCopy(p, 'r1'));
        await mkdir(path.dirname(file), { recursive: true });
        await engine.query(
          `COPY (SELECT ${older.map((c) => c.name).join(', ')} FROM samples_jsonl WHERE path = '${p}') TO '${file}' (FORMAT PARQUET)`,
          [],
          'old copy',
        );
      }
      const out: string[] = [];
      expect(await rewriteParquetCopies('r1', { store, query: engine }, (t) => out.push(t))).toBe(0);
      expect(out.join('')).toBe(
        [
          `rewriting the Parquet copies of run r1 in ${dir} from its JSONL`,
          `  A: 500 rows → ${keys.parquetPrefix('A', 'r1')}`,
          `  B: 30 rows → ${keys.parquetPrefix('B', 'r1')}`,
          '  C: no samples, no copy',
          '3 paths, 530 rows',
          '',
        ].join('\n'),
      );
      for (const p of ['A', 'B']) {
        const names = await parquetColumns(engine, dir, await readFile(path.join(dir, keys.parquetCopy(p, 'r1'))));
        expect(names).toEqual(columns.map((c) => c.name));
      }
      expect(await engine.query(loadQuery('percentiles'), ['r1'], 'percentiles')).toStrictEqual(expected);
    } finally {
      engine.close();
    }
  });

  it('in S3 (s3rver) removes the old copy, then has Athena UNLOAD the new one from the JSONL table', async () => {
    const store = new S3ObjectStore(s3.client, 'pathbench-data');
    await store.put(keys.manifest('r2'), manifest('r2', ['A']));
    await store.put(keys.parquetCopy('A', 'r2'), new Uint8Array([1, 2, 3]));
    await store.put(`${keys.parquetPrefix('A', 'r2')}20261201_unload_part0.parquet`, new Uint8Array([4]));
    const athena = mockClient(AthenaClient);
    try {
      // A stopped execution's UNLOAD of this partition still runs (q-old), beside another query.
      const unload = unloadParquetCopy('pathbench-data', 'A', 'r2');
      athena.on(ListQueryExecutionsCommand).resolves({ QueryExecutionIds: ['q-old', 'q-other'] });
      athena.on(BatchGetQueryExecutionCommand).resolves({
        QueryExecutions: [
          { QueryExecutionId: 'q-old', Query: unload, Status: { State: 'RUNNING' } },
          { QueryExecutionId: 'q-other', Query: 'SELECT 1', Status: { State: 'RUNNING' } },
        ],
      });
      athena.on(StopQueryExecutionCommand).callsFake(async () => {
        // Stopped before the old copy goes: nothing it writes later can join the new copy.
        expect(await store.list(keys.parquetPrefix('A', 'r2'))).toHaveLength(2);
        return {};
      });
      athena.on(StartQueryExecutionCommand).callsFake(async () => {
        // UNLOAD refuses a location that holds objects: it must be empty when the query starts.
        expect(await store.list(keys.parquetPrefix('A', 'r2'))).toEqual([]);
        return { QueryExecutionId: 'q-unload' };
      });
      athena
        .on(GetQueryExecutionCommand, { QueryExecutionId: 'q-old' })
        .resolves({ QueryExecution: { Status: { State: 'CANCELLED' } } })
        .on(GetQueryExecutionCommand, { QueryExecutionId: 'q-unload' })
        .resolves({ QueryExecution: { Status: { State: 'SUCCEEDED' } } });
      const query = new AthenaQueryEngine(new AthenaClient({ region: 'ap-northeast-1' }), {
        workgroup: 'pathbench',
        database: 'pathbench',
        bucket: 'pathbench-data',
        sleep: async () => {},
      });
      const out: string[] = [];
      expect(await rewriteParquetCopies('r2', { store, query }, (t) => out.push(t))).toBe(0);
      expect(out).toEqual([
        'rewriting the Parquet copies of run r2 in s3://pathbench-data from its JSONL\n',
        `  A: written → ${keys.parquetPrefix('A', 'r2')}\n`,
        '1 paths\n',
      ]);
      expect(athena.commandCalls(StopQueryExecutionCommand).map((c) => c.args[0].input)).toEqual([
        { QueryExecutionId: 'q-old' },
      ]);
      const [start] = athena.commandCalls(StartQueryExecutionCommand).map((c) => c.args[0].input);
      expect(start.QueryString).toBe(unloadParquetCopy('pathbench-data', 'A', 'r2'));
      expect(start.QueryString).toMatch(
        /^UNLOAD \(SELECT\s+run_id, [\s\S]*FROM samples_jsonl\s+WHERE path = 'A' AND run = 'r2'\) TO 's3:\/\/pathbench-data\/parquet\/path=A\/run=r2\/' WITH \(format = 'PARQUET', compression = 'SNAPPY'\)$/,
      );
      expect(start).toMatchObject({ WorkGroup: 'pathbench', QueryExecutionContext: { Database: 'pathbench' } });
    } finally {
      athena.restore();
    }
  });

  it('refuses a bad run id and names a run without a manifest', async () => {
    const store = new DirStore(dir);
    const query = await DuckDbQueryEngine.open(dir);
    try {
      await expect(rewriteParquetCopies('../x', { store, query }, () => {})).rejects.toThrow(/run id/i);
      await expect(rewriteParquetCopies('nope', { store, query }, () => {})).rejects.toThrow(
        /run nope has no manifest/,
      );
    } finally {
      query.close();
    }
  });
});
