/**
 * Benchmark: the real queries/percentiles.sql on DuckDB against a plain sort-in-JavaScript
 * computation (core/stats.ts) over the same 10 million synthetic samples, checking
 * that every number agrees exactly; then the same samples as JSONL and as the pipeline's
 * Parquet copies (bytes, write time, the query on each through the local engine) against numpy
 * (scripts/bench/percentiles_numpy.py), and on one group the query's peak memory.
 * Run directly: `npx tsx scripts/bench/percentiles.bench.ts [--n N]`.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { z } from 'zod';
import { keys } from '../../core/keys.js';
import { compareRows, median, type PercentileRow, percentileRow } from '../../core/stats.js';
import { parseDocument } from '../../core/stored-document.js';
import { silentLogger } from '../../functions/log.js';
import { writeParquetCopy } from '../../functions/pipeline/parquet-copy.js';
import { DirStore } from '../../local/dir-store.js';
import { DuckDbQueryEngine, sqlString } from '../../local/duckdb-query.js';
import { loadQuery } from '../../queries/sql.js';

/** A typed array that grows by doubling. */
class Growable<T extends Float64Array | Uint8Array> {
  length = 0;
  constructor(
    private data: T,
    private readonly make: (size: number) => T,
  ) {}

  push(v: number): void {
    if (this.length === this.data.length) {
      const next = this.make(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }

  /** The filled part (a view of the buffer, no copy). */
  view(): T {
    return this.data.subarray(0, this.length) as T;
  }
}

const run = promisify(execFile);
const HERE = path.dirname(fileURLToPath(import.meta.url));
/** Debian's numpy (python3-numpy, .ci/run); another python3 on PATH may carry another numpy. */
const PYTHON = process.env.PATHBENCH_PYTHON ?? '/usr/bin/python3';

const RUN = 'bench';
const COLUMNS = ['path', 'probe', 'kind', 'metric', 'unit', 'subset', 'n', 'failed', 'total', 'loss'] as const;
const FIGURES = ['p50', 'p95', 'p99', 'p999', 'max'] as const;

export interface PercentileBenchResult {
  lines: string[];
  /** Samples generated (all runs). */
  samples: number;
  /** Samples in the selected run. */
  selected: number;
  rows: number;
  generateMs: number;
  sqlMs: number;
  pullMs: number;
  jsMs: number;
  /** jsMs / sqlMs: how many times slower the JS sort is than the SQL (below 1: faster). */
  ratio: number;
  agree: boolean;
  mismatches: string[];
  /** Parquet rows (undefined when skipped with parquet: false). */
  parquet?: ParquetFigures;
}

export interface ParquetFigures {
  jsonlBytes: number;
  parquetBytes: number;
  /** DuckDB COPY … (FORMAT PARQUET) of the same rows, for comparison with the pipeline's writer. */
  duckdbParquetBytes: number;
  writeMs: number;
  sqlJsonlMs: number;
  /** Median of sqlParquetRuns. */
  sqlParquetMs: number;
  /** The query on Parquet, each round (taking turns with numpy). */
  sqlParquetRuns: number[];
  /** numpy's computation alone, values already in memory: median of numpyRuns. */
  numpyMs?: number;
  /** numpy, each round. */
  numpyRuns?: number[];
  /** numpy reading the same values from raw float64 / uint8 files (np.fromfile), before numpyMs. */
  numpyLoadMs?: number;
  numpyVersion?: string;
  /** Peak RSS growth (bytes) of percentiles.sql over one group of `oneGroupSamples` on Parquet, in a child process. */
  oneGroupPeakBytes?: number;
  oneGroupMs?: number;
  oneGroupSamples: number;
}

/**
 * Synthetic samples, generated inside DuckDB from range() with hash() as a deterministic
 * pseudo-random source: 4 paths × 3 probes, ~1 % failed, ~2 % in another run, throughput
 * intervals after a "credit cliff" flagged, latencies with ties, negative and fractional values.
 */
export function generateSql(n: number): string {
  return `
CREATE OR REPLACE TABLE samples AS
WITH src AS (
  SELECT i, i % 12 AS g, i // 12 AS s, hash(i) AS h1, hash(i + ${n}) AS h2 FROM range(${n}) t(i)
),
shaped AS (
  SELECT *,
    g % 4 AS p,
    g // 4 AS k,
    h2 % 100 = 0 AS failed,
    (g // 4) = 1 AND s % 10 >= 7 AS cliff
  FROM src
)
SELECT
  CASE WHEN i % 50 = 49 THEN 'other' ELSE '${RUN}' END AS run_id,
  'path-' || CAST(p AS VARCHAR) AS path_id,
  ['tcp', 'iperf-tcp', 'http'][k + 1] AS probe,
  ['tcp-connect', 'iperf3', 'http'][k + 1] AS kind,
  CAST(s % 3 + 1 AS INTEGER) AS trial,
  CAST(s AS INTEGER) AS seq,
  CAST(s AS DOUBLE) * 1000 AS t_start,
  CAST(s AS DOUBLE) * 1000 + 1000 AS t_end,
  ['connect_rtt_ms', 'throughput_bps', 'http_latency_ms'][k + 1] AS metric,
  CASE
    WHEN failed THEN NULL
    -- latency: 0.2 ms floor, 1 us steps (heavy ties at 10M), a 3 % slow mode
    WHEN k = 0 THEN 0.2 + CAST(h1 % 100000 AS DOUBLE) / 1000 + CASE WHEN h2 % 100 < 3 THEN 10 ELSE 0 END
    -- throughput: ~5 Gbit/s, dropping to ~0.77 Gbit/s after the cliff
    WHEN k = 1 AND cliff THEN 770000000 + CAST(h1 % 1000 AS DOUBLE) * 100000
    WHEN k = 1 THEN 4960000000 - CAST(h1 % 100000 AS DOUBLE) * 10000
    -- http: fractional, some negative (a clock-skewed sample), path-dependent offset
    ELSE CAST(h1 % 2000000 AS DOUBLE) / 1000 - 1 + p
  END AS value,
  ['ms', 'bit/s', 'ms'][k + 1] AS unit,
  NOT failed AS ok,
  CASE WHEN failed THEN 'timeout' END AS error,
  'tool' AS clock,
  CASE WHEN cliff THEN 'credit-exhausted' END AS flag,
  'path-' || CAST(p AS VARCHAR) AS path,
  CASE WHEN i % 50 = 49 THEN 'other' ELSE '${RUN}' END AS run
FROM shaped`;
}

interface GroupData {
  key: { path: string; probe: string; kind: string | null; metric: string; unit: string };
  values: Float64Array;
  /** 1 when ok is true and value is not null */
  good: Uint8Array;
  /** 1 when flag is null */
  unflagged: Uint8Array;
}

async function rowsOf(conn: DuckDBConnection, sql: string, params: string[] = []): Promise<Record<string, unknown>[]> {
  const reader = await conn.runAndReadAll(sql, params.length > 0 ? params : undefined);
  return reader
    .getRowObjectsJS()
    .map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])));
}

/** Pull one run's samples into typed arrays per (path, probe, metric, unit). */
async function pullGroups(conn: DuckDBConnection): Promise<GroupData[]> {
  // Keys only (a few rows); MIN(kind) is taken in JS over the distinct (key, kind) tuples.
  const keyRows = await rowsOf(
    conn,
    'SELECT DISTINCT path, probe, metric, unit, kind FROM samples WHERE run = ? ORDER BY ALL',
    [RUN],
  );
  const groups = new Map<string, GroupData['key']>();
  for (const r of keyRows) {
    const id = JSON.stringify([r.path, r.probe, r.metric, r.unit]);
    const kind = (r.kind as string | null) ?? null;
    const g = groups.get(id);
    if (!g)
      groups.set(id, {
        path: String(r.path),
        probe: String(r.probe),
        metric: String(r.metric),
        unit: String(r.unit),
        kind,
      });
    else if (kind !== null && (g.kind === null || kind < g.kind)) g.kind = kind;
  }
  const out: GroupData[] = [];
  for (const key of groups.values()) {
    const values = new Growable(new Float64Array(1 << 16), (n) => new Float64Array(n));
    const good = new Growable(new Uint8Array(1 << 16), (n) => new Uint8Array(n));
    const unflagged = new Growable(new Uint8Array(1 << 16), (n) => new Uint8Array(n));
    const result = await conn.stream(
      'SELECT value, ok, flag IS NULL AS unflagged FROM samples WHERE run = ? AND path = ? AND probe = ? AND metric = ? AND unit = ?',
      [RUN, key.path, key.probe, key.metric, key.unit],
    );
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      const v = chunk.getColumnVector(0);
      const ok = chunk.getColumnVector(1);
      const uf = chunk.getColumnVector(2);
      for (let i = 0; i < chunk.rowCount; i++) {
        const value = v.getItem(i) as number | null;
        values.push(value ?? Number.NaN);
        good.push(ok.getItem(i) === true && value !== null ? 1 : 0);
        unflagged.push(uf.getItem(i) === true ? 1 : 0);
      }
    }
    out.push({ key, values: values.view(), good: good.view(), unflagged: unflagged.view() });
  }
  return out;
}

/** The straightforward JS computation: select, sort (stats.ts), read ranks. */
function computeInJs(groups: GroupData[]): PercentileRow[] {
  const rows: PercentileRow[] = [];
  for (const g of groups) {
    const total = g.values.length;
    let n = 0;
    let unflaggedTotal = 0;
    let unflaggedGood = 0;
    for (let i = 0; i < total; i++) {
      n += g.good[i];
      unflaggedTotal += g.unflagged[i];
      unflaggedGood += g.good[i] & g.unflagged[i];
    }
    const all = new Float64Array(n);
    const clean = new Float64Array(unflaggedGood);
    for (let i = 0, a = 0, c = 0; i < total; i++) {
      if (g.good[i] === 1) {
        all[a++] = g.values[i];
        if (g.unflagged[i] === 1) clean[c++] = g.values[i];
      }
    }
    rows.push(percentileRow({ ...g.key, subset: 'all' }, all, total));
    if (unflaggedTotal < total) rows.push(percentileRow({ ...g.key, subset: 'unflagged' }, clean, unflaggedTotal));
  }
  return rows.sort(compareRows);
}

function compare(sqlRows: Record<string, unknown>[], jsRows: PercentileRow[]): string[] {
  const problems: string[] = [];
  if (sqlRows.length !== jsRows.length) problems.push(`row count: sql ${sqlRows.length}, js ${jsRows.length}`);
  for (let i = 0; i < Math.min(sqlRows.length, jsRows.length); i++) {
    const s = sqlRows[i];
    const j = jsRows[i] as unknown as Record<string, unknown>;
    for (const c of [...COLUMNS, ...FIGURES]) {
      if (!Object.is(s[c], j[c])) {
        problems.push(`${j.path}/${j.probe}/${j.metric}/${j.subset} ${c}: sql ${String(s[c])} js ${String(j[c])}`);
      }
    }
  }
  return problems;
}

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) total += (await stat(path.join(e.parentPath, e.name))).size;
  }
  return total;
}

/**
 * The run's samples (both runs) as JSONL in the contract's layout, one file per path, run, probe
 * and trial (samples/path=<p>/run=<r>/<probe>-<trial>.jsonl), written by DuckDB.
 */
async function writeJsonl(conn: DuckDBConnection, dir: string): Promise<string[][]> {
  const parts = (await rowsOf(conn, 'SELECT DISTINCT path, run, probe, trial FROM samples ORDER BY ALL')) as {
    path: string;
    run: string;
    probe: string;
    trial: number;
  }[];
  for (const p of parts) {
    const file = path.join(dir, keys.samples(p.path, p.run, p.probe, p.trial));
    await mkdir(path.dirname(file), { recursive: true });
    await conn.run(
      `COPY (SELECT * EXCLUDE (path, run) FROM samples WHERE path = ${sqlString(p.path)} AND run = ${sqlString(p.run)} AND probe = ${sqlString(p.probe)} AND trial = ${p.trial}) TO ${sqlString(file)} (FORMAT JSON)`,
    );
  }
  const partitions = new Map(parts.map((p) => [JSON.stringify([p.path, p.run]), [p.path, p.run]]));
  return [...partitions.values()];
}

/** The groups as numpy's input files: groups.json, and per group raw float64 / uint8 arrays. */
async function writeNumpyInput(groups: GroupData[], dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'groups.json'), JSON.stringify(groups.map((g) => g.key)));
  for (const [i, g] of groups.entries()) {
    await writeFile(path.join(dir, `${i}.values`), g.values);
    await writeFile(path.join(dir, `${i}.good`), g.good);
    await writeFile(path.join(dir, `${i}.unflagged`), g.unflagged);
  }
}

/** One row as percentiles_numpy.py prints it: the row of queries/percentiles.sql (an absent figure is null). */
const numpyRowSchema = z.object({
  path: z.string(),
  probe: z.string(),
  kind: z.string().nullable().default(null),
  metric: z.string(),
  unit: z.string(),
  subset: z.enum(['all', 'unflagged']),
  n: z.number(),
  failed: z.number(),
  total: z.number(),
  loss: z.number().nullable().default(null),
  p50: z.number().nullable().default(null),
  p95: z.number().nullable().default(null),
  p99: z.number().nullable().default(null),
  p999: z.number().nullable().default(null),
  max: z.number().nullable().default(null),
}) satisfies z.ZodType<PercentileRow>;
const numpyOutputSchema = z.object({
  ms: z.number(),
  load_ms: z.number(),
  numpy: z.string(),
  rows: z.array(numpyRowSchema),
});

/** numpy on the groups in `dir` (values already in memory; only the computation is timed). */
async function numpyPercentiles(
  dir: string,
): Promise<{ ms: number; loadMs: number; version: string; rows: PercentileRow[] }> {
  const { stdout } = await run(PYTHON, [path.join(HERE, 'percentiles_numpy.py'), dir], { maxBuffer: 1 << 26 });
  const out = parseDocument('percentiles_numpy.py output', stdout, numpyOutputSchema, 'numpy result');
  return { ms: out.ms, loadMs: out.load_ms, version: out.numpy, rows: out.rows.sort(compareRows) };
}

/**
 * percentiles.sql over one group of n samples in Parquet (written here by a streaming COPY),
 * queried in a child process: its peak RSS growth and time.
 */
async function oneGroupMemory(
  conn: DuckDBConnection,
  n: number,
  dir: string,
): Promise<{ peakBytes: number; ms: number }> {
  const file = path.join(dir, 'path=one', 'run=bench', 'samples.parquet');
  await mkdir(path.dirname(file), { recursive: true });
  // Latency-like values with ties and a 3 % slow mode; ~1 % failed.
  await conn.run(`COPY (
    SELECT 'bench' AS run_id, 'one' AS path_id, 'sockperf' AS probe, 'sockperf' AS kind, 1 AS trial,
      CAST(i AS INTEGER) AS seq, CAST(i AS DOUBLE) AS t_start, CAST(i AS DOUBLE) + 1 AS t_end, 'rtt_us' AS metric,
      CASE WHEN hash(i + ${n}) % 100 = 0 THEN NULL
        ELSE 20 + CAST(hash(i) % 100000 AS DOUBLE) / 1000 + CASE WHEN hash(i + ${n}) % 100 < 3 THEN 500 ELSE 0 END
      END AS value,
      'us' AS unit, hash(i + ${n}) % 100 <> 0 AS ok, CAST(NULL AS VARCHAR) AS error, 'tool' AS clock,
      CAST(NULL AS VARCHAR) AS flag
    FROM range(${n}) t(i)) TO ${sqlString(file)} (FORMAT PARQUET)`);
  return oneGroupChild(n, dir);
}

/** What the one-group child (percentiles-one-group.bench.ts) prints as its last line. */
const oneGroupSchema = z.object({ peakBytes: z.number(), ms: z.number() });

/** Run scripts/bench/percentiles-one-group.bench.ts on n samples: its peak RSS growth and time. */
async function oneGroupChild(n: number, dir: string): Promise<{ peakBytes: number; ms: number }> {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', path.join(HERE, 'percentiles-one-group.bench.ts'), String(n), dir],
    { maxBuffer: 1 << 20 },
  );
  return parseDocument(
    'percentiles-one-group.bench.ts output',
    stdout.trim().split('\n').at(-1) ?? '',
    oneGroupSchema,
    'result',
  );
}

const fmt = (x: number) => x.toLocaleString('en-US', { maximumFractionDigits: 0 });

/** SQL and JS disagreed; the message carries the whole printout, mismatches included. */
export class BenchMismatchError extends Error {
  constructor(readonly result: PercentileBenchResult) {
    super(result.lines.join('\n'));
    this.name = 'BenchMismatchError';
  }
}

/**
 * Generate `n` (default 10,000,000) samples in DuckDB, time queries/percentiles.sql on them,
 * pull the same run into typed arrays, time the sort-in-JS computation, and compare every figure.
 * A disagreement throws BenchMismatchError (so `pathbench bench` exits non-zero) unless
 * `throwOnMismatch` is false, in which case `agree` and `mismatches` say so.
 */
export async function benchPercentiles(
  opts: { n?: number; throwOnMismatch?: boolean; parquet?: boolean; oneGroup?: number; rounds?: number } = {},
): Promise<PercentileBenchResult> {
  const samples = opts.n ?? 10_000_000;
  if (!Number.isInteger(samples) || samples < 1) throw new RangeError(`n must be a positive integer, got ${samples}`);
  const rounds = opts.rounds ?? 3;
  if (!Number.isInteger(rounds) || rounds < 1) throw new RangeError(`rounds must be a positive integer, got ${rounds}`);
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  try {
    let t = performance.now();
    await conn.run(generateSql(samples));
    const generateMs = performance.now() - t;
    const [{ c: selected }] = await rowsOf(conn, 'SELECT count(*) AS c FROM samples WHERE run = ?', [RUN]);
    t = performance.now();
    const sqlRows = await rowsOf(conn, loadQuery('percentiles'), [RUN]);
    const sqlMs = performance.now() - t;

    t = performance.now();
    const groups = await pullGroups(conn);
    const pullMs = performance.now() - t;

    t = performance.now();
    const jsRows = computeInJs(groups);
    const jsMs = performance.now() - t;

    const mismatches = compare(sqlRows, jsRows);

    // Parquet rows: the same samples as JSONL files and as the pipeline's Parquet copies, the
    // query through the local engine on each, and numpy on the same values.
    let parquet: ParquetFigures | undefined;
    if (opts.parquet !== false) {
      const dir = await mkdtemp(path.join(tmpdir(), 'pathbench-bench-parquet-'));
      try {
        const partitions = await writeJsonl(conn, path.join(dir, 'data'));
        const jsonlBytes = await dirBytes(path.join(dir, 'data', 'samples'));
        await conn.run(
          `COPY samples TO ${sqlString(path.join(dir, 'duckdb'))} (FORMAT PARQUET, PARTITION_BY (path, run))`,
        );
        const duckdbParquetBytes = await dirBytes(path.join(dir, 'duckdb'));
        const engine = await DuckDbQueryEngine.open(path.join(dir, 'data'));
        try {
          t = performance.now();
          const onJsonl = await engine.query(loadQuery('percentiles'), [RUN], 'percentiles');
          const sqlJsonlMs = performance.now() - t;
          mismatches.push(...compare(onJsonl, jsRows).map((m) => `JSONL ${m}`));

          const store = new DirStore(path.join(dir, 'data'));
          t = performance.now();
          for (const [pathId, runId] of partitions) {
            await writeParquetCopy({ store, log: silentLogger, query: engine }, { pathId, runId });
          }
          const writeMs = performance.now() - t;
          const parquetBytes = await dirBytes(path.join(dir, 'data', 'parquet'));

          // The query on Parquet and numpy take turns, `rounds` times, so a slow minute of this
          // shared machine slows both sides alike; the medians and every round's ratio are printed.
          const numpyDir = path.join(dir, 'numpy');
          await writeNumpyInput(groups, numpyDir);
          let numpyOk = true;
          const sqlParquetRuns: number[] = [];
          const numpyRuns: number[] = [];
          const numpyLoadRuns: number[] = [];
          let numpyVersion: string | undefined;
          for (let round = 0; round < rounds; round++) {
            t = performance.now();
            const onParquet = await engine.query(loadQuery('percentiles'), [RUN], 'percentiles');
            sqlParquetRuns.push(performance.now() - t);
            if (round === 0) mismatches.push(...compare(onParquet, jsRows).map((m) => `Parquet ${m}`));
            if (!numpyOk) continue;
            const numpy = await numpyPercentiles(numpyDir).catch((e: Error) => {
              process.stderr.write(`bench: numpy rows skipped (${PYTHON}: ${e.message.split('\n')[0]})\n`);
              return undefined;
            });
            if (!numpy) {
              numpyOk = false;
              continue;
            }
            numpyRuns.push(numpy.ms);
            numpyLoadRuns.push(numpy.loadMs);
            numpyVersion = numpy.version;
            if (round === 0) mismatches.push(...compare(numpy.rows as never, jsRows).map((m) => `numpy ${m}`));
          }
          const sqlParquetMs = median(sqlParquetRuns);
          const oneGroupSamples = opts.oneGroup ?? samples;
          const one = await oneGroupMemory(conn, oneGroupSamples, path.join(dir, 'one-group'));
          parquet = {
            jsonlBytes,
            parquetBytes,
            duckdbParquetBytes,
            writeMs,
            sqlJsonlMs,
            sqlParquetMs,
            sqlParquetRuns,
            numpyMs: numpyOk ? median(numpyRuns) : undefined,
            numpyRuns: numpyOk ? numpyRuns : undefined,
            numpyLoadMs: numpyOk ? median(numpyLoadRuns) : undefined,
            numpyVersion,
            oneGroupPeakBytes: one.peakBytes,
            oneGroupMs: one.ms,
            oneGroupSamples,
          };
        } finally {
          await engine.close();
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
    const agree = mismatches.length === 0;
    const ratio = jsMs / sqlMs;
    const rows: [string, string][] = [
      ['samples generated', fmt(samples)],
      ['samples in run', fmt(Number(selected))],
      ['result rows', fmt(jsRows.length)],
      ['generate in DuckDB (ms)', fmt(generateMs)],
      ['percentiles.sql, DuckDB (ms)', fmt(sqlMs)],
      ['pull into typed arrays (ms)', fmt(pullMs)],
      ['sort in JS, stats.ts (ms)', fmt(jsMs)],
      ['JS / SQL', `${ratio.toFixed(2)}x`],
    ];
    if (parquet) {
      const c = parquet;
      const mb = (b: number) => (b / 1e6).toLocaleString('en-US', { maximumFractionDigits: 1 });
      rows.push(
        ['samples as JSONL (MB)', mb(c.jsonlBytes)],
        ["same as Parquet, the pipeline's copy (MB)", mb(c.parquetBytes)],
        ['Parquet / JSONL bytes', `${(c.parquetBytes / c.jsonlBytes).toFixed(3)}x`],
        ['same as Parquet, DuckDB COPY (MB)', mb(c.duckdbParquetBytes)],
        ["write the pipeline's Parquet copy (ms)", fmt(c.writeMs)],
        ["write the pipeline's Parquet copy (lines/s)", fmt((samples / c.writeMs) * 1000)],
        ['percentiles.sql on JSONL (ms)', fmt(c.sqlJsonlMs)],
        [`percentiles.sql on Parquet (ms, median of ${c.sqlParquetRuns.length})`, fmt(c.sqlParquetMs)],
      );
      if (c.numpyMs !== undefined) {
        rows.push(
          [`numpy ${c.numpyVersion}, same values in memory (ms, median of ${c.numpyRuns?.length})`, fmt(c.numpyMs)],
          ['Parquet SQL / numpy (medians)', `${(c.sqlParquetMs / c.numpyMs).toFixed(2)}x`],
          [
            'Parquet SQL / numpy, each round',
            c.sqlParquetRuns.map((ms, i) => `${(ms / (c.numpyRuns?.[i] ?? Number.NaN)).toFixed(2)}x`).join(' '),
          ],
          ['JSONL SQL / numpy', `${(c.sqlJsonlMs / c.numpyMs).toFixed(2)}x`],
        );
        if (c.numpyLoadMs !== undefined) {
          const fromDisk = c.numpyMs + c.numpyLoadMs;
          rows.push(
            ['numpy incl. reading raw float64 files (ms)', fmt(fromDisk)],
            ['Parquet SQL / numpy incl. reading', `${(c.sqlParquetMs / fromDisk).toFixed(2)}x`],
          );
        }
      }
      if (c.oneGroupPeakBytes !== undefined && c.oneGroupMs !== undefined) {
        rows.push(
          [`one group of ${fmt(c.oneGroupSamples)}, Parquet SQL (ms)`, fmt(c.oneGroupMs)],
          [`one group of ${fmt(c.oneGroupSamples)}, peak RSS growth (MB)`, mb(c.oneGroupPeakBytes)],
        );
      }
    }
    const width = Math.max(...rows.map(([k]) => k.length));
    const valueWidth = Math.max(...rows.map(([, v]) => v.length));
    const lines = [
      'percentile benchmark (exact nearest rank, integer ranks)',
      ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v.padStart(valueWidth)}`),
      agree ? 'agree: yes' : `agree: NO (${mismatches.length} mismatches)`,
      ...mismatches.slice(0, 50).map((m) => `  mismatch ${m}`),
    ];
    const result: PercentileBenchResult = {
      lines,
      samples,
      selected: Number(selected),
      rows: jsRows.length,
      generateMs,
      sqlMs,
      pullMs,
      jsMs,
      ratio,
      agree,
      mismatches,
      parquet,
    };
    if (!agree && opts.throwOnMismatch !== false) throw new BenchMismatchError(result);
    return result;
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

function argN(argv: string[]): number | undefined {
  const i = argv.indexOf('--n');
  return i >= 0 ? Number(argv[i + 1]) : undefined;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const result = await benchPercentiles({ n: argN(process.argv.slice(2)), throwOnMismatch: false });
  for (const line of result.lines) console.log(line);
  if (!result.agree) process.exitCode = 1;
}
