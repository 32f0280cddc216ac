/**
 * The Parquet copy of a path's samples: after collect, the query engine itself rewrites the
 * (path, run) partition's Parquet copy from all its JSONL files (queries/parquet_copy.sql: the
 * records as they are; queries/percentiles.sql ranks them at query time), with one UNLOAD statement
 * (queries/unload.ts): Athena on AWS, DuckDB locally (local/duckdb-query.ts). In a run the state
 * machine's CopyToParquet state starts it and waits (statemachine/measurement.asl.json): no
 * JavaScript holds the rows and no Lambda waits on the engine, so no path has a size ceiling
 * from a Lambda's memory or time. The copy is rebuilt whole each time, after the old one is
 * removed, so a retried collect or a rerun never duplicates rows: the JSONL stays the raw
 * contract, the Parquet copy is derived from it.
 */
import { keys } from '../../core/keys.js';
import type { QueryExecutionCall } from '../../queries/unload.js';
import type { Deps } from '../ports.js';
import { loadManifest } from './manifest.js';

export interface ParquetCopyResult {
  /** The prefix the copy lives under (parquet/path=<p>/run=<id>/). */
  prefix: string;
  /** Rows written, when the engine says (DuckDB does; Athena's UNLOAD does not). */
  rows?: number;
}

/**
 * Make way for the partition's copy and say how to write it: the old copy's objects are removed
 * (Athena's UNLOAD writes only into an empty location), and the engine's StartQueryExecution
 * call for the new one is returned. The state machine runs that call as its CopyToParquet state;
 * writeParquetCopy runs it in-process.
 */
export async function prepareParquetCopy(
  deps: Pick<Deps, 'store' | 'query'>,
  ref: { runId: string; pathId: string },
): Promise<QueryExecutionCall> {
  const call = deps.query.copyCall(ref.pathId, ref.runId);
  for (const key of await deps.store.list(keys.parquetPrefix(ref.pathId, ref.runId))) await deps.store.delete(key);
  return call;
}

/**
 * Write (or rewrite) the partition's Parquet copy from all its JSONL files, in-process: the CLI's
 * `pathbench parquet`, the sweep of an abandoned run. Idempotent: the old copy goes first. A
 * partition without samples is left without a copy.
 */
export async function writeParquetCopy(
  deps: Pick<Deps, 'store' | 'log' | 'query'>,
  ref: { runId: string; pathId: string },
): Promise<ParquetCopyResult> {
  const prefix = keys.parquetPrefix(ref.pathId, ref.runId);
  // A stopped execution's UNLOAD of this partition may still run (QueryEngine.settle): stopped
  // and ended before the prefix is emptied, it cannot add its rows to this copy's.
  const stopped = await deps.query.settle(deps.query.copyCall(ref.pathId, ref.runId));
  if (stopped > 0) deps.log.warn('stopped a copy of this partition still running', { ...ref, stopped });
  const { rows } = await deps.query.execute(await prepareParquetCopy(deps, ref));
  deps.log.info('Parquet copy written', { ...ref, prefix, rows });
  return rows === undefined ? { prefix } : { prefix, rows };
}

/**
 * Rewrite the Parquet copy of every path of a run from its JSONL (`pathbench parquet`): for a
 * run whose copies lack the newest columns (the one-way delays), or a copy that was lost. The paths
 * are the run manifest's; each copy is replaced whole, as after a collect, so it is safe to
 * repeat. `onPath` hears each path's result as it is written.
 */
export async function rewriteRunParquetCopies(
  deps: Pick<Deps, 'store' | 'log' | 'query'>,
  runId: string,
  onPath: (pathId: string, out: ParquetCopyResult) => void = () => {},
): Promise<{ paths: number; rows?: number }> {
  const manifest = await loadManifest(deps.store, runId);
  let rows: number | undefined = 0;
  for (const p of manifest.paths) {
    const out = await writeParquetCopy(deps, { runId, pathId: p.id });
    rows = rows === undefined || out.rows === undefined ? undefined : rows + out.rows;
    onPath(p.id, out);
  }
  return rows === undefined ? { paths: manifest.paths.length } : { paths: manifest.paths.length, rows };
}
