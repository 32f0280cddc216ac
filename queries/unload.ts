/**
 * The statement that writes a path's Parquet copy, as one text for both engines: Athena runs it
 * when the state machine's CopyToParquet state starts it (`athena:startQueryExecution.sync`),
 * the local runner's resolver of that integration runs the same text on DuckDB
 * (local/duckdb-query.ts `unload`). It is an UNLOAD of queries/parquet_copy.sql's SELECT into
 * the partition's parquet/ prefix.
 */
import { z } from 'zod';
import { QueryFailedError } from '../core/errors.js';
import { keys } from '../core/keys.js';
import { loadQuery } from './sql.js';

/** The Parameters of a StartQueryExecution call, named as Athena's API (and so the state's Parameters) name them. */
export interface QueryExecutionCall {
  QueryString: string;
  WorkGroup: string;
  QueryExecutionContext: { Database: string };
  /** The `?` parameters as SQL literals (sqlLiteral), in order; absent when there are none (Athena refuses an empty list). */
  ExecutionParameters?: string[];
}

/** A StartQueryExecution call as a state's Parameters deliver it (the local resolver checks it). */
export const queryExecutionCall = z.object({
  QueryString: z.string().min(1),
  WorkGroup: z.string().min(1),
  QueryExecutionContext: z.object({ Database: z.string().min(1) }),
  ExecutionParameters: z.array(z.string()).min(1).optional(),
});

/** Text we quote as an SQL literal (ids, labels, ISO times, metric names): nothing that can end the quotes. */
const SQL_LITERAL_TEXT = /^[A-Za-z0-9 _.:,/+-]{0,256}$/;

/** Render one `?` parameter as an SQL literal (Athena's ExecutionParameters); rejects anything outside the safe pattern. */
export function sqlLiteral(p: string | number): string {
  if (typeof p === 'number') {
    if (!Number.isFinite(p)) throw new QueryFailedError(`query parameter is not a finite number: ${p}`);
    return String(p);
  }
  if (typeof p !== 'string' || !SQL_LITERAL_TEXT.test(p)) {
    throw new QueryFailedError(`query parameter is not a safe string: ${JSON.stringify(p)}`);
  }
  return `'${p}'`;
}

/** A SELECT from queries/ as a StartQueryExecution call in `workgroup` and `database`: its `?` parameters as literals. */
export function selectStatementCall(
  sql: string,
  params: readonly (string | number)[],
  workgroup: string,
  database: string,
): QueryExecutionCall {
  return {
    QueryString: sql,
    WorkGroup: workgroup,
    QueryExecutionContext: { Database: database },
    ...(params.length > 0 ? { ExecutionParameters: params.map(sqlLiteral) } : {}),
  };
}

/** The `?` parameters back from their literals (the local engine binds them); the inverse of sqlLiteral. */
export function literalValues(literals: readonly string[] = []): (string | number)[] {
  return literals.map((l) => {
    const quoted = /^'([^']*)'$/.exec(l);
    if (quoted && SQL_LITERAL_TEXT.test(quoted[1])) return quoted[1];
    const n = Number(l);
    if (l.trim() !== '' && Number.isFinite(n) && /^[-+0-9.eE]+$/.test(l)) return n;
    throw new QueryFailedError(`execution parameter is not a literal this engine binds: ${JSON.stringify(l)}`);
  });
}

/** Parquet compression of the copy, on both engines. */
export const COPY_COMPRESSION = 'SNAPPY';

/** UNLOAD (queries/parquet_copy.sql for (path, run)) TO the partition's parquet/ prefix in `bucket`. */
export function unloadParquetCopy(bucket: string, pathId: string, runId: string): string {
  const select = loadQuery('parquet_copy', { path: pathId, run: runId });
  return (
    `UNLOAD (${select}) TO 's3://${bucket}/${keys.parquetPrefix(pathId, runId)}' ` +
    `WITH (format = 'PARQUET', compression = '${COPY_COMPRESSION}')`
  );
}

export interface ParsedUnload {
  select: string;
  bucket: string;
  /** The key prefix written into (ends with `/`). */
  prefix: string;
  format: string;
  compression: string;
}

const UNLOAD = /^UNLOAD \(([\s\S]+)\) TO 's3:\/\/([a-z0-9.-]+)\/([^']*\/)' WITH \(([^()]*)\)$/;
const OPTION = /^\s*(\w+)\s*=\s*'([^']*)'\s*$/;

/**
 * Read an UNLOAD statement of the shape unloadParquetCopy writes (the one statement the local
 * engine runs for the Athena integration). Anything else is refused with the reason.
 */
export function parseUnload(statement: string): ParsedUnload {
  const m = UNLOAD.exec(statement.trim());
  if (!m) throw new QueryFailedError("not an UNLOAD (…) TO 's3://bucket/prefix/' WITH (…) statement");
  const options: Record<string, string> = {};
  for (const part of m[4].split(',')) {
    const o = OPTION.exec(part);
    if (!o) throw new QueryFailedError(`UNLOAD option not understood: ${part.trim()}`);
    options[o[1].toLowerCase()] = o[2];
  }
  return {
    select: m[1],
    bucket: m[2],
    prefix: m[3],
    format: (options.format ?? '').toUpperCase(),
    compression: (options.compression ?? 'NONE').toUpperCase(),
  };
}
