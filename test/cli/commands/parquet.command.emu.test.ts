/**
 * `pathbench parquet RUN_ID` (cli/commands/parquet.command.ts): a run whose Parquet copies predate the
 * rank columns gets them rewritten from its JSONL, in a data directory and in S3 (s3rver on
 * loopback, the real SDK), and the percentiles read the same as from the JSONL.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rewriteParquetCopies } from '../../../cli/commands/parquet.command.js';
import { keys } from '../../../core/keys.js';
import { S3ObjectStore } from '../../../functions/adapters/aws/s3-store.js';
import { DirStore } from '../../../local/dir-store.js';
import { DuckDbQueryEngine } from '../../../local/duckdb-query.js';
import { loadQuery, RANK_COLUMNS, samplesColumns } from '../../../queries/sql.js';
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
  return rows.map((r) => String(r.name)).filter((n) => n !== 'schema');
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

  it('rewrites a data directory run whose copies lack the rank columns; the figures stay those of the JSONL', async () => {
    const recs = [...records('A', 500, 1), ...records('B', 30, 2)];
    await writeSamples(dir, recs);
    const store = new DirStore(dir);
    await store.put(keys.manifest('r1'), manifest('r1', ['A', 'B', 'C']));
    const engine = await DuckDbQueryEngine.open(dir);
    try {
      const expected = await engine.query(loadQuery('percentiles'), ['r1'], 'percentiles');
      // Copies as an older writer made them: the records' columns only.
      const { columns } = samplesColumns();
      for (const p of ['A', 'B']) {
        const file = path.join(dir, keys.parquetCopy(p, 'r1'));
        await mkdir(path.dirname(file), { recursive: true });
        await engine.query(
          `COPY (SELECT ${columns.map((c) => c.name).join(', ')} FROM samples_jsonl WHERE path = '${p}') TO '${file}' (FORMAT PARQUET)`,
          [],
          'old copy',
        );
      }
      const out: string[] = [];
      expect(await rewriteParquetCopies('r1', store, (t) => out.push(t))).toBe(0);
      expect(out.join('')).toBe(
        [
          `rewriting the Parquet copies of run r1 in ${dir} from its JSONL`,
          `  A: 500 rows, ${(await readFile(path.join(dir, keys.parquetCopy('A', 'r1')))).length} bytes → ${keys.parquetCopy('A', 'r1')}`,
          `  B: 30 rows, ${(await readFile(path.join(dir, keys.parquetCopy('B', 'r1')))).length} bytes → ${keys.parquetCopy('B', 'r1')}`,
          '  C: no samples, no copy',
          '3 paths, 530 rows',
          '',
        ].join('\n'),
      );
      for (const p of ['A', 'B']) {
        const names = await parquetColumns(engine, dir, await readFile(path.join(dir, keys.parquetCopy(p, 'r1'))));
        expect(names.slice(-RANK_COLUMNS.length)).toEqual([...RANK_COLUMNS]);
      }
      expect(await engine.query(loadQuery('percentiles'), ['r1'], 'percentiles')).toStrictEqual(expected);
    } finally {
      engine.close();
    }
  });

  it('rewrites the copies in S3 (s3rver) from the JSONL there', async () => {
    const store = new S3ObjectStore(s3.client, 'pathbench-data');
    const recs = records('A', 200, 3);
    await store.put(
      keys.samples('A', 'r2', 'tcp', 1),
      `${recs.map((r) => JSON.stringify({ ...r, run_id: 'r2' })).join('\n')}\n`,
    );
    await store.put(keys.manifest('r2'), manifest('r2', ['A']));
    await store.put(keys.parquetCopy('A', 'r2'), new Uint8Array([1, 2, 3]));
    const out: string[] = [];
    expect(await rewriteParquetCopies('r2', store, (t) => out.push(t))).toBe(0);
    expect(out[0]).toBe('rewriting the Parquet copies of run r2 in s3://pathbench-data from its JSONL\n');
    expect(out.at(-1)).toBe('1 paths, 200 rows\n');
    const bytes = await store.get(keys.parquetCopy('A', 'r2'));
    const engine = await DuckDbQueryEngine.open(dir);
    try {
      expect((await parquetColumns(engine, dir, bytes ?? new Uint8Array())).slice(-RANK_COLUMNS.length)).toEqual([
        ...RANK_COLUMNS,
      ]);
    } finally {
      engine.close();
    }
  });

  it('refuses a bad run id and names a run without a manifest', async () => {
    const store = new DirStore(dir);
    await expect(rewriteParquetCopies('../x', store, () => {})).rejects.toThrow(/run id/i);
    await expect(rewriteParquetCopies('nope', store, () => {})).rejects.toThrow(/run nope has no manifest/);
  });
});
