/**
 * The Parquet copy of a path's samples: after collect, the query engine itself rewrites the
 * (path, run) partition's Parquet copy from all its JSONL files (queries/parquet_copy.sql: the
 * records with the rank columns queries/percentiles.sql reads). DuckDB writes it locally
 * (COPY … TO … (FORMAT PARQUET), local/duckdb-query.ts), Athena on AWS (UNLOAD,
 * functions/adapters/aws/athena-query.ts): no JavaScript holds the rows, so no path has a size
 * ceiling from a Lambda's memory. The copy is rebuilt whole each time, after the old one is
 * removed, so a retried collect or a rerun never duplicates rows: the JSONL stays the raw
 * contract, the Parquet copy is derived from it.
 */
import { keys } from '../../core/keys.js';
import type { Deps } from '../ports.js';
import { loadManifest } from './manifest.js';

export interface ParquetCopyResult {
  /** The prefix the copy lives under (parquet/path=<p>/run=<id>/). */
  prefix: string;
  /** Rows written, when the engine says (DuckDB does; Athena's UNLOAD does not). */
  rows?: number;
}

/**
 * Write (or rewrite) the partition's Parquet copy from all its JSONL files. Idempotent: the old
 * copy's objects are removed first (Athena's UNLOAD writes only into an empty location), then the
 * engine writes the new one. A partition without samples is left without a copy.
 */
export async function writeParquetCopy(
  deps: Pick<Deps, 'store' | 'log' | 'query'>,
  ref: { runId: string; pathId: string },
): Promise<ParquetCopyResult> {
  const prefix = keys.parquetPrefix(ref.pathId, ref.runId);
  for (const key of await deps.store.list(prefix)) await deps.store.delete(key);
  const { rows } = await deps.query.copyToParquet(ref.pathId, ref.runId);
  deps.log.info('Parquet copy written', { ...ref, prefix, rows });
  return rows === undefined ? { prefix } : { prefix, rows };
}

/**
 * Rewrite the Parquet copy of every path of a run from its JSONL (`pathbench parquet`): for a
 * run collected before the copies carried the rank columns, or a copy that was lost. The paths
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
