/**
 * Local QueryEngine: an in-memory DuckDB over the object-store directory, so the same SQL files
 * that run on Athena run here unchanged. Two views, partitioned by path and run (from each file's key) like the
 * Glue tables: `samples` (the Parquet copies, what the queries read) and
 * `samples_jsonl` (the raw JSONL contract).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { errorMessage, QueryFailedError } from '../core/errors.js';
import { keys } from '../core/keys.js';
import type { QueryEngine, QueryParam } from '../functions/ports.js';
import {
  loadQuery,
  queryNames,
  RUN_TABLES,
  type RunTable,
  runTableColumns,
  type SqlColumn,
  samplesColumns,
} from '../queries/sql.js';
import {
  literalValues,
  parseUnload,
  type QueryExecutionCall,
  selectStatementCall,
  unloadParquetCopy,
} from '../queries/unload.js';

/**
 * Rows per row group of a Parquet copy: several per file of a large partition, so a scan can
 * split it; small enough that the writer holds little at once.
 */
export const ROW_GROUP_ROWS = 100_000;

/** The bucket an UNLOAD names locally: this engine's data directory. */
export const LOCAL_BUCKET = 'pathbench-local';
/** Athena's UNLOAD Parquet compressions, as DuckDB's COPY names them. */
const DUCKDB_CODECS: Record<string, string> = { SNAPPY: 'snappy', ZSTD: 'zstd', GZIP: 'gzip', NONE: 'uncompressed' };
/** The workgroup and database a local query call names (nothing checks them; Athena's are the stack's). */
export const LOCAL_WORKGROUP = 'local';
/** SELECT results `execute` keeps for resultRows (a run's summary reads its ten right after they ran). */
export const RESULTS_KEPT = 64;

/**
 * DuckDB connections for the Parquet copies (beside the one the queries use): twice the cores,
 * 2 to 4. A copy of a few samples is ~13 ms of DuckDB's planning on one thread, so copies beside
 * each other fill the cores; a 46-site mesh's rounds here (2 cores) took 26.7, 21.2 and 18.1 ms a
 * pair with 1, 2 and 4 (docs/benchmarks.md, mesh). No more than 4: DuckDB's statements run on
 * Node's thread pool (4 threads unless UV_THREADPOOL_SIZE says otherwise), which the file
 * system's calls share.
 */
export const COPY_CONNECTIONS = Math.min(4, Math.max(2, 2 * availableParallelism()));

/** Which copy connection takes an UNLOAD: by its target prefix, so one partition's copies always the same. */
export function copierOf(statement: string, connections: number): number {
  let target = statement;
  try {
    const u = parseUnload(statement);
    target = `${u.bucket}/${u.prefix}`;
  } catch {
    // Not an UNLOAD: refused in the queue, with the reason.
  }
  let h = 0x811c9dc5;
  for (let i = 0; i < target.length; i++) h = Math.imul(h ^ target.charCodeAt(i), 0x01000193) >>> 0;
  return h % connections;
}

/**
 * Columns a Parquet copy must have to be read as it is: the newest data column (clock_error_us,
 * added with the one-way delays). An older copy's partition is read from its JSONL. Columns a
 * copy has beyond the table's (the rank columns copies carried before) are not read.
 */
const CURRENT_COPY_COLUMNS = ['clock_error_us'];

/** Glue/Hive type names in samples.ddl.sql mapped to DuckDB types. */
const DUCKDB_TYPES: Record<string, string> = {
  string: 'VARCHAR',
  varchar: 'VARCHAR',
  int: 'INTEGER',
  integer: 'INTEGER',
  bigint: 'BIGINT',
  smallint: 'SMALLINT',
  tinyint: 'TINYINT',
  double: 'DOUBLE',
  float: 'FLOAT',
  boolean: 'BOOLEAN',
  timestamp: 'TIMESTAMP',
  date: 'DATE',
};

/** The DuckDB type for a DDL column type; unknown types are a programming error in the DDL. */
export function duckDbType(hiveType: string): string {
  const t = DUCKDB_TYPES[hiveType.toLowerCase()];
  if (!t) throw new QueryFailedError(`samples.ddl.sql: no DuckDB type for column type ${JSON.stringify(hiveType)}`);
  return t;
}

/** A SQL string literal: single quotes doubled (DuckDB does not treat backslash specially). */
export function sqlString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** A double-quoted SQL identifier. */
function sqlIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The typed, empty select for a view with no files (read_json / read_parquet refuse an empty list). */
function emptySelect(all: SqlColumn[]): string {
  return `SELECT ${all.map((c) => `CAST(NULL AS ${duckDbType(c.type)}) AS ${sqlIdent(c.name)}`).join(', ')} WHERE false`;
}

/**
 * The partition columns (path, run), read from the last directories of each file's name, which
 * are the key's (`…/path=A/run=R/file`). Not DuckDB's hive partitioning: it takes the first
 * `run=` of the whole file name, so a data directory below a directory named `run=…` read every
 * sample as that run's.
 */
function partitionColumnsSql(partitions: SqlColumn[]): string[] {
  const re = `/${partitions.map((c) => `${c.name}=([^/]*)`).join('/')}/[^/]*$`;
  return partitions.map(
    (c, i) =>
      `CAST(regexp_extract(filename, ${sqlString(re)}, ${i + 1}) AS ${duckDbType(c.type)}) AS ${sqlIdent(c.name)}`,
  );
}

/** SELECT over JSONL files with the DDL's column types (nothing depends on DuckDB's sniffing). */
function jsonlSelect(files: string[]): string {
  const { columns, partitions } = samplesColumns();
  const all: SqlColumn[] = [...columns, ...partitions];
  if (files.length === 0) return emptySelect(all);
  // Explicit column types: keys a record has beyond these are ignored, missing ones are NULL,
  // and nothing depends on DuckDB's type sniffing of whichever file it samples first.
  const columnTypes = columns.map((c) => `${sqlString(c.name)}: ${sqlString(duckDbType(c.type))}`).join(', ');
  return [
    `SELECT ${[...columns.map((c) => sqlIdent(c.name)), ...partitionColumnsSql(partitions)].join(', ')} FROM read_json(`,
    `[${files.map(sqlString).join(', ')}],`,
    `format = 'newline_delimited', columns = {${columnTypes}},`,
    `hive_partitioning = false, filename = true)`,
  ].join(' ');
}

/** SELECT over Parquet files (Parquet copies), each column cast to the DDL's type. */
function parquetSelect(files: string[]): string {
  const { columns, partitions } = samplesColumns();
  const stored = columns.map((c) => `CAST(${sqlIdent(c.name)} AS ${duckDbType(c.type)}) AS ${sqlIdent(c.name)}`);
  return [
    `SELECT ${[...stored, ...partitionColumnsSql(partitions)].join(', ')}`,
    `FROM read_parquet([${files.map(sqlString).join(', ')}],`,
    `hive_partitioning = false, filename = true, union_by_name = true)`,
  ].join(' ');
}

/**
 * The `samples_jsonl` view over the given JSONL files (the raw contract). With no files it is an
 * empty view with the same typed columns.
 */
export function samplesViewSql(files: string[], view = 'samples', kind: 'TEMP' | '' = ''): string {
  return `CREATE OR REPLACE ${kind ? `${kind} ` : ''}VIEW ${view} AS ${jsonlSelect(files)}`;
}

/**
 * The `samples` view the queries read: each partition's Parquet file where it has one, and its
 * JSONL where it has none yet (data written before the Parquet copy existed, or a partition
 * whose copy is still being written) — never both, so no row is counted twice. Pass only
 * Parquet files that have the current columns (see DuckDbQueryEngine): an older file's
 * partition is read from its JSONL instead.
 */
export function parquetViewSql(parquetFiles: string[], jsonlFiles: string[]): string {
  const covered = new Set(parquetFiles.map((f) => path.dirname(f).split(path.sep).slice(-2).join('/')));
  const rest = jsonlFiles.filter((f) => !covered.has(path.dirname(f).split(path.sep).slice(-2).join('/')));
  const parts: string[] = [];
  if (parquetFiles.length > 0) parts.push(parquetSelect(parquetFiles));
  if (rest.length > 0 || parts.length === 0) parts.push(jsonlSelect(rest));
  return `CREATE OR REPLACE VIEW samples AS ${parts.join(' UNION ALL ')}`;
}

/**
 * The `runs` or `paths` view over its objects (tables/<table>/<run id>.json[l]), with the DDL's
 * column types; empty and typed with no files.
 */
export function runTableViewSql(table: RunTable, files: string[]): string {
  const columns = runTableColumns(table);
  if (files.length === 0) return `CREATE OR REPLACE VIEW ${table} AS ${emptySelect(columns)}`;
  const columnTypes = columns.map((c) => `${sqlString(c.name)}: ${sqlString(duckDbType(c.type))}`).join(', ');
  return [
    `CREATE OR REPLACE VIEW ${table} AS SELECT ${columns.map((c) => sqlIdent(c.name)).join(', ')} FROM read_json(`,
    `[${files.map(sqlString).join(', ')}],`,
    `format = 'newline_delimited', columns = {${columnTypes}}, hive_partitioning = false)`,
  ].join(' ');
}

/** Every `<dataDir>/tables/<table>/*.json` or `*.jsonl` (one per run), sorted. */
export async function listRunTableFiles(dataDir: string, table: RunTable): Promise<string[]> {
  let entries: import('node:fs').Dirent[];
  try {
    entries = await readdir(path.join(dataDir, 'tables', table), { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return entries
    .filter((e) => e.isFile() && /\.jsonl?$/.test(e.name))
    .map((e) => path.join(dataDir, 'tables', table, e.name))
    .sort();
}

async function subdirs(dir: string, prefix: string): Promise<string[]> {
  let entries: import('node:fs').Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return entries
    .filter((e) => e.isDirectory() && e.name.startsWith(prefix) && e.name.length > prefix.length)
    .map((e) => path.join(dir, e.name))
    .sort();
}

/** Every `<dataDir>/samples/path=*\/run=*\/*.jsonl`, sorted. */
export async function listSampleFiles(dataDir: string): Promise<string[]> {
  const files: string[] = [];
  for (const pathDir of await subdirs(path.join(dataDir, 'samples'), 'path=')) {
    for (const runDir of await subdirs(pathDir, 'run=')) {
      const entries = await readdir(runDir, { withFileTypes: true });
      for (const e of entries) {
        if (e.isFile() && e.name.endsWith('.jsonl')) files.push(path.join(runDir, e.name));
      }
    }
  }
  return files.sort();
}

/** Every `<dataDir>/parquet/path=*\/run=*\/samples.parquet` (the Parquet copies), sorted. */
export async function listParquetCopies(dataDir: string): Promise<string[]> {
  const files: string[] = [];
  for (const pathDir of await subdirs(path.join(dataDir, 'parquet'), 'path=')) {
    for (const runDir of await subdirs(pathDir, 'run=')) {
      const entries = await readdir(runDir, { withFileTypes: true });
      for (const e of entries) if (e.isFile() && e.name === 'samples.parquet') files.push(path.join(runDir, e.name));
    }
  }
  return files.sort();
}

/** DuckDB hands back BIGINT/HUGEINT as bigint; callers want plain numbers (counts stay far below 2^53). */
function plain(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object' && !(value instanceof Date) && !(value instanceof Uint8Array)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}

/** QueryEngine over a local object-store directory (same key layout as S3). */
export class DuckDbQueryEngine implements QueryEngine {
  /** Serializes queries: each one replaces the view and then reads it. */
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
    /** Absolute path of the object-store directory. */
    readonly dataDir: string,
    /**
     * The Parquet copies' own connections, each with its own queue: a copy reads its partition
     * through a TEMP view `samples_jsonl` (a temp view is the connection's own and hides the main
     * one), so copies run beside each other and beside the queries (COPY_CONNECTIONS).
     */
    private readonly copiers: { connection?: DuckDBConnection; queue: Promise<unknown> }[],
  ) {}

  /** Set by close(): no statement is started after it. */
  private closing: Promise<void> | undefined;

  /** Open an in-memory DuckDB over `dataDir` (the local object store, e.g. `.pathbench/`). */
  static async open(dataDir: string): Promise<DuckDbQueryEngine> {
    const dir = path.resolve(dataDir);
    // File names are passed to read_json, which expands glob patterns; refuse rather than misread.
    if (/[*?[\]{}]/.test(dir)) throw new QueryFailedError(`data directory path has glob characters: ${dir}`);
    // Rows in no promised order, as Athena gives them (every query in queries/ orders what it
    // returns): the Parquet copy is then written by every thread at once (docs/benchmarks.md,
    // collect).
    const instance = await DuckDBInstance.create(':memory:', { preserve_insertion_order: 'false' });
    // The copy connections are made by the first copy each takes (report, trend and sql copy nothing).
    const copiers = Array.from({ length: COPY_CONNECTIONS }, () => ({ queue: Promise.resolve() as Promise<unknown> }));
    const engine = new DuckDbQueryEngine(instance, await instance.connect(), dir, copiers);
    try {
      await engine.refreshView('open');
    } catch (e) {
      await engine.close();
      throw e;
    }
    return engine;
  }

  /** Per Parquet file (by path, size and mtime): whether it has the current columns. */
  private readonly current = new Map<string, { stamp: string; current: boolean }>();

  /**
   * The Parquet files that have the latest data columns (CURRENT_COPY_COLUMNS). A file written
   * before them lacks some (its partition is then read from its JSONL until `pathbench parquet`
   * rewrites it). Footers are read once per file version, all new ones in one query.
   */
  private async currentFiles(files: string[]): Promise<string[]> {
    const stamps = await Promise.all(
      files.map(async (f) => {
        const st = await stat(f);
        return `${st.size}:${st.mtimeMs}`;
      }),
    );
    const unknown = files.flatMap((f, i) =>
      this.current.get(f)?.stamp === stamps[i] ? [] : [{ f, stamp: stamps[i] }],
    );
    if (unknown.length > 0) {
      const reader = await this.connection.runAndReadAll(
        `SELECT file_name FROM parquet_schema([${unknown.map((u) => sqlString(u.f)).join(', ')}]) WHERE name IN (${CURRENT_COPY_COLUMNS.map(sqlString).join(', ')}) GROUP BY file_name HAVING count(DISTINCT name) = ${CURRENT_COPY_COLUMNS.length}`,
      );
      const have = new Set(reader.getRowObjectsJS().map((r) => String(r.file_name)));
      for (const u of unknown) this.current.set(u.f, { stamp: u.stamp, current: have.has(u.f) });
    }
    return files.filter((f) => this.current.get(f)?.current);
  }

  /** The views' last definitions: redefined only when the files behind them change. */
  private views: Record<string, string> = {};

  private async refreshView(label: string): Promise<void> {
    try {
      const jsonl = await listSampleFiles(this.dataDir);
      const parquet = await this.currentFiles(await listParquetCopies(this.dataDir));
      const next: Record<string, string> = {
        samples_jsonl: samplesViewSql(jsonl, 'samples_jsonl'),
        samples: parquetViewSql(parquet, jsonl),
      };
      for (const table of RUN_TABLES)
        next[table] = runTableViewSql(table, await listRunTableFiles(this.dataDir, table));
      // The analysts' views over those (queries/views/; on AWS they are named queries to run once).
      for (const name of queryNames().filter((n) => n.startsWith('views/'))) next[name] = loadQuery(name);
      // A file rewritten in place needs no new view: DuckDB reads the files when a query runs.
      for (const [name, sql] of Object.entries(next)) if (this.views[name] !== sql) await this.connection.run(sql);
      this.views = next;
    } catch (e) {
      this.views = {};
      throw new QueryFailedError(`${label}: cannot define the samples view: ${errorMessage(e)}`, { cause: e });
    }
  }

  /**
   * `samples_jsonl` over one partition's files alone, for its copy (which reads only that
   * partition), as a TEMP view of the copier's connection: listing every partition and
   * redefining the views over all their files at each copy made a mesh's cost per pair grow
   * with the pairs already measured.
   */
  private async partitionView(connection: DuckDBConnection, pathId: string, runId: string, label: string) {
    const dir = path.join(this.dataDir, ...keys.samplesPrefix(pathId, runId).split('/'));
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    const files = entries
      .filter((e) => e.isFile() && e.name.endsWith('.jsonl'))
      .map((e) => path.join(dir, e.name))
      .sort();
    try {
      await connection.run(samplesViewSql(files, 'samples_jsonl', 'TEMP'));
    } catch (e) {
      throw new QueryFailedError(`${label}: cannot define the samples view: ${errorMessage(e)}`, { cause: e });
    }
  }

  /** Run one statement with positional `?` parameters; rows as plain objects (bigints as numbers). */
  query(sql: string, params: QueryParam[], label: string): Promise<Record<string, unknown>[]> {
    const run = async () => {
      if (this.closing) throw new QueryFailedError(`${label}: the engine is closed`);
      // Re-list the files every time so samples written since the last query are seen.
      await this.refreshView(label);
      try {
        const reader = await this.connection.runAndReadAll(sql, params.length > 0 ? params : undefined);
        return reader.getRowObjectsJS().map((row) => plain(row) as Record<string, unknown>);
      } catch (e) {
        // First line only: DuckDB appends a multi-line excerpt of the SQL, which stays in `cause`.
        throw new QueryFailedError(`${label}: ${errorMessage(e).split('\n')[0]}`, { cause: e });
      }
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** The copy's UNLOAD (queries/unload.ts), into the local bucket: this data directory. */
  copyCall(pathId: string, runId: string): QueryExecutionCall {
    return {
      QueryString: unloadParquetCopy(LOCAL_BUCKET, pathId, runId),
      WorkGroup: LOCAL_WORKGROUP,
      QueryExecutionContext: { Database: LOCAL_WORKGROUP },
    };
  }

  /** A SELECT from queries/ with its parameters as literals, as the local resolver takes it. */
  selectCall(sql: string, params: QueryParam[]): QueryExecutionCall {
    return selectStatementCall(sql, params, LOCAL_WORKGROUP, LOCAL_WORKGROUP);
  }

  /** Rows of the SELECTs `execute` ran, by execution id, the latest RESULTS_KEPT (Athena keeps them in S3). */
  private readonly results = new Map<string, Record<string, unknown>[]>();

  /** The rows of a SELECT this engine ran by `execute`. */
  async resultRows(queryExecutionId: string): Promise<Record<string, unknown>[]> {
    const rows = this.results.get(queryExecutionId);
    if (!rows)
      throw new QueryFailedError(
        `query execution ${queryExecutionId}: no results here (not run by this engine, or older than its last ${RESULTS_KEPT})`,
      );
    return rows;
  }

  /**
   * A StartQueryExecution call run to its end (the local resolver of
   * `athena:startQueryExecution.sync` and every in-process copy come here): a SELECT (selectCall)
   * is run with its parameters and its rows kept for resultRows; otherwise it must be the Parquet
   * copy's UNLOAD (unload below).
   */
  async execute(call: QueryExecutionCall): Promise<{ rows: number; queryExecutionId: string }> {
    const queryExecutionId = randomUUID();
    if (!/^\s*(SELECT|WITH)\b/i.test(call.QueryString)) return { ...(await this.unload(call)), queryExecutionId };
    const rows = await this.query(call.QueryString, literalValues(call.ExecutionParameters), 'query execution');
    this.results.set(queryExecutionId, rows);
    for (const old of this.results.keys()) {
      if (this.results.size <= RESULTS_KEPT) break;
      this.results.delete(old);
    }
    return { rows: rows.length, queryExecutionId };
  }

  /**
   * Athena's UNLOAD on DuckDB: the SELECT is
   * copied to `samples.parquet` under the prefix in this data directory, as Athena would write
   * it, and refused like Athena when the prefix already holds objects. The file is written
   * beside its final name and renamed, so no reader sees half a copy; none is left for no rows.
   */
  private unload(call: QueryExecutionCall): Promise<{ rows: number }> {
    const label = `UNLOAD ${call.QueryString.slice(-120)}`;
    const run = async () => {
      if (this.closing) throw new QueryFailedError(`${label}: the engine is closed`);
      let unload: ReturnType<typeof parseUnload>;
      try {
        unload = parseUnload(call.QueryString);
      } catch (e) {
        throw new QueryFailedError(`the local engine runs a SELECT or the Parquet copy's UNLOAD: ${errorMessage(e)}`);
      }
      const m = /^parquet\/path=([^/]+)\/run=([^/]+)\/$/.exec(unload.prefix);
      if (unload.bucket !== LOCAL_BUCKET || !m)
        throw new QueryFailedError(
          `UNLOAD to s3://${unload.bucket}/${unload.prefix}: the local engine writes only s3://${LOCAL_BUCKET}/parquet/path=<p>/run=<id>/`,
        );
      if (unload.format !== 'PARQUET') throw new QueryFailedError(`UNLOAD format ${unload.format}: only PARQUET`);
      const codec = DUCKDB_CODECS[unload.compression];
      if (!codec)
        throw new QueryFailedError(
          `UNLOAD compression ${unload.compression}: one of ${Object.keys(DUCKDB_CODECS).join(', ')}`,
        );
      const file = path.join(this.dataDir, ...keys.parquetCopy(m[1], m[2]).split('/'));
      const dir = path.dirname(file);
      const present = await readdir(dir).catch(() => [] as string[]);
      if (present.some((f) => !f.endsWith('.tmp')))
        throw new QueryFailedError(`HIVE_PATH_ALREADY_EXISTS: s3://${unload.bucket}/${unload.prefix} is not empty`);
      copier.connection ??= await this.instance.connect();
      const connection = copier.connection;
      await this.partitionView(connection, m[1], m[2], label);
      await mkdir(dir, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      try {
        const reader = await connection.runAndReadAll(
          `COPY (${unload.select}) TO ${sqlString(tmp)} (FORMAT PARQUET, COMPRESSION ${codec}, ROW_GROUP_SIZE ${ROW_GROUP_ROWS})`,
        );
        const rows = Number(reader.getRowObjectsJS()[0]?.Count ?? 0);
        if (rows === 0) await rm(tmp, { force: true });
        else await rename(tmp, file);
        return { rows };
      } catch (e) {
        await rm(tmp, { force: true });
        throw new QueryFailedError(`parquet copy ${m[1]} ${m[2]}: ${errorMessage(e).split('\n')[0]}`, { cause: e });
      }
    };
    // One partition's copies on one connection, one at a time: the emptiness check and the
    // rename above are then never raced by a copy of the same partition.
    const copier = this.copiers[copierOf(call.QueryString, this.copiers.length)];
    const result = copier.queue.then(run, run);
    copier.queue = result.catch(() => undefined);
    return result;
  }

  /** Statements run one at a time in each queue: none of the call is under way once all drain. */
  async settle(_call: QueryExecutionCall): Promise<number> {
    await Promise.all([this.queue, ...this.copiers.map((c) => c.queue)]);
    return 0;
  }

  /** Hive partitioning discovers path=/run= directories by itself; nothing to register. */
  async registerPartition(_pathId: string, _runId: string): Promise<void> {}

  /**
   * Release the connections and the database once the statements under way have ended: a copy
   * under way (a stopped run's CopyToParquet) finishes or fails whole, its temporary file renamed
   * or removed, rather than losing its connection mid-statement. Statements not yet started are
   * refused.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.all([this.queue, ...this.copiers.map((c) => c.queue)]);
      for (const c of this.copiers) c.connection?.closeSync();
      this.connection.closeSync();
      this.instance.closeSync();
    })();
    return this.closing;
  }
}
