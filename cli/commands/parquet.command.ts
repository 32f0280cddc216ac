/**
 * `pathbench parquet RUN_ID`: rewrite the Parquet copy of every path of a run from its JSONL
 * (functions/pipeline/parquet-copy.ts rewriteRunParquetCopies), by the query engine: DuckDB over
 * the data directory, or with `--aws` Athena (workgroup and database `pathbench`). For runs whose copies lack the newest
 * columns (the one-way delays), which read NULL on Athena until then, or copies that were lost;
 * locally such a copy is read from its JSONL meanwhile, so the command only makes those queries
 * faster.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { AthenaClient } from '@aws-sdk/client-athena';
import type { Command } from 'commander';
import { checkRunId } from '../../core/keys.js';
import { printable } from '../../core/printable.js';
import { AthenaQueryEngine } from '../../functions/adapters/aws/athena-query.js';
import { S3ObjectStore } from '../../functions/adapters/aws/s3-store.js';
import { silentLogger } from '../../functions/log.js';
import { rewriteRunParquetCopies } from '../../functions/pipeline/parquet-copy.js';
import type { ObjectStore, QueryEngine } from '../../functions/ports.js';
import { DirStore } from '../../local/dir-store.js';
import { DuckDbQueryEngine } from '../../local/duckdb-query.js';
import { DEFAULT_DATA_DIR } from '../../local/local-driver.js';
import { guarded } from '../aws/aws-errors.js';
import { type ClientsFor, makeClients } from '../aws/clients.js';
import { type CommonFlags, commonOptions, resolveStackConfig } from '../aws/stack-config.js';

export interface ParquetFlags extends CommonFlags {
  data: string;
  aws?: boolean;
}

/** Thrown for input the command refuses (exit code 2, like the other commands' usage errors). */
export class ParquetCliError extends Error {}

/** The Athena workgroup and Glue database the stack creates (infra/constructs/data-lake.ts). */
export const ATHENA_WORKGROUP = 'pathbench';
export const ATHENA_DATABASE = 'pathbench';

/** Store and engine the command works on: the data directory and DuckDB, or the deployed pipeline's bucket and Athena. */
export async function parquetTarget(
  o: ParquetFlags,
  env: Record<string, string | undefined>,
  clientsFor: ClientsFor = makeClients,
): Promise<{ store: ObjectStore; query: QueryEngine; close: () => Promise<void> }> {
  if (o.aws) {
    const cfg = await resolveStackConfig(o, env, clientsFor);
    const query = new AthenaQueryEngine(new AthenaClient({ region: cfg.region }), {
      workgroup: ATHENA_WORKGROUP,
      database: ATHENA_DATABASE,
      bucket: cfg.bucket,
    });
    return { store: new S3ObjectStore(clientsFor(cfg.region).s3, cfg.bucket), query, close: async () => {} };
  }
  const dir = resolve(o.data);
  if (!existsSync(dir)) throw new ParquetCliError(`no data directory ${dir}`);
  const query = await DuckDbQueryEngine.open(dir);
  return { store: new DirStore(dir), query, close: () => query.close() };
}

/** Rewrite the run's copies, one line per path as it is written; returns the exit code. */
export async function rewriteParquetCopies(
  runId: string,
  target: { store: ObjectStore; query: QueryEngine },
  out: (text: string) => void,
): Promise<number> {
  checkRunId(runId);
  out(`rewriting the Parquet copies of run ${runId} in ${target.store.location} from its JSONL\n`);
  const total = await rewriteRunParquetCopies({ ...target, log: silentLogger }, runId, (pathId, r) => {
    out(
      r.rows === 0
        ? `  ${pathId}: no samples, no copy\n`
        : `  ${pathId}: ${r.rows === undefined ? 'written' : `${r.rows} rows`} → ${r.prefix}\n`,
    );
  });
  out(`${total.paths} paths${total.rows === undefined ? '' : `, ${total.rows} rows`}\n`);
  return 0;
}

export function registerParquet(program: Command): void {
  commonOptions(
    program
      .command('parquet')
      .description("rewrite a run's Parquet copies from its JSONL samples")
      .argument('<runId>')
      .option('--data <dir>', 'data directory', DEFAULT_DATA_DIR)
      .option('--aws', "rewrite them in the deployed pipeline's data bucket"),
  ).action((runId: string, o: ParquetFlags) =>
    guarded(async () => {
      const target = await parquetTarget(o, process.env);
      try {
        return await rewriteParquetCopies(runId, target, (t) => process.stdout.write(printable(t)));
      } finally {
        await target.close();
      }
    }),
  );
}
