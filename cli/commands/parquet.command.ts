/**
 * `pathbench parquet RUN_ID`: rewrite the Parquet copy of every path of a run from its JSONL
 * (functions/pipeline/parquet-copy.ts rewriteRunParquetCopies). For runs collected before the copies
 * carried the rank columns, whose percentiles read NULL on Athena until then; locally such a
 * copy is read from its JSONL meanwhile, so the command only makes those queries faster.
 * Locally (the default) in the data directory; with `--aws` in the data bucket.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { checkRunId } from '../../core/keys.js';
import { printable } from '../../core/printable.js';
import { S3ObjectStore } from '../../functions/adapters/aws/s3-store.js';
import { silentLogger } from '../../functions/log.js';
import { rewriteRunParquetCopies } from '../../functions/pipeline/parquet-copy.js';
import type { ObjectStore } from '../../functions/ports.js';
import { DirStore } from '../../local/dir-store.js';
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

/** The store the command works on: the data directory, or the deployed pipeline's bucket. */
export async function parquetStore(
  o: ParquetFlags,
  env: Record<string, string | undefined>,
  clientsFor: ClientsFor = makeClients,
): Promise<ObjectStore> {
  if (o.aws) {
    const cfg = await resolveStackConfig(o, env, clientsFor);
    return new S3ObjectStore(clientsFor(cfg.region).s3, cfg.bucket);
  }
  const dir = resolve(o.data);
  if (!existsSync(dir)) throw new ParquetCliError(`no data directory ${dir}`);
  return new DirStore(dir);
}

/** Rewrite the run's copies, one line per path as it is written; returns the exit code. */
export async function rewriteParquetCopies(
  runId: string,
  store: ObjectStore,
  out: (text: string) => void,
): Promise<number> {
  checkRunId(runId);
  out(`rewriting the Parquet copies of run ${runId} in ${store.location} from its JSONL\n`);
  const total = await rewriteRunParquetCopies({ store, log: silentLogger }, runId, (pathId, r) => {
    out(
      r.rows === 0
        ? `  ${pathId}: no samples, no copy\n`
        : `  ${pathId}: ${r.rows} rows, ${r.bytes} bytes → ${r.key}\n`,
    );
  });
  out(`${total.paths} paths, ${total.rows} rows\n`);
  return 0;
}

export function registerParquet(program: Command): void {
  commonOptions(
    program
      .command('parquet')
      .description("rewrite a run's Parquet copies (with their rank columns) from its JSONL samples")
      .argument('<runId>')
      .option('--data <dir>', 'data directory', DEFAULT_DATA_DIR)
      .option('--aws', "rewrite them in the deployed pipeline's data bucket"),
  ).action((runId: string, o: ParquetFlags) =>
    guarded(async () =>
      rewriteParquetCopies(runId, await parquetStore(o, process.env), (t) => process.stdout.write(printable(t))),
    ),
  );
}
