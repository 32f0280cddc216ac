/** A DuckDB engine over a temp data directory of sample records, for one describe block. */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll } from 'vitest';
import { DuckDbQueryEngine } from '../../local/duckdb-query.js';
import { tempDataDir, writeSamples } from './samples.js';

/**
 * Registers beforeAll/afterAll in the calling describe: writes `records()` in the contract's
 * layout (with `parquet`, plus the Parquet copies the `samples` view then reads), opens the engine, and closes and removes both afterwards. Read `dir` and `engine`
 * inside tests (they are set once beforeAll has run).
 */
export function duckDbOver(prefix: string, records: () => Record<string, unknown>[], opts: { parquet?: boolean } = {}) {
  const db = {} as { dir: string; engine: DuckDbQueryEngine };
  beforeAll(async () => {
    db.dir = await tempDataDir(prefix);
    await writeSamples(db.dir, records(), opts);
    db.engine = await DuckDbQueryEngine.open(db.dir);
    // Each partition's Parquet copy is a DuckDB COPY with window functions: seconds on a busy machine.
  }, 120_000);
  afterAll(async () => {
    db.engine?.close();
    if (db.dir) await rm(db.dir, { recursive: true, force: true });
  });
  return db;
}
