/**
 * `pathbench report RUN_ID`: the summary of a run. Locally (the default, `--local`) it is
 * recomputed from the samples in the data directory; with `--aws` it is the summary the
 * pipeline wrote to the data bucket. One command, and its action picks the side from the flags.
 */
import type { Command } from 'commander';
import { printable } from '../../core/printable.js';
import { DEFAULT_DATA_DIR } from '../../local/local-driver.js';
import { guarded } from '../aws/aws-errors.js';
import { reportAws } from '../aws/aws-summary.js';
import { type CommonFlags, commonOptions } from '../aws/stack-config.js';
import { exitAfterFlush } from '../exit.js';
import { reportLocal } from '../local.js';

export interface ReportFlags extends CommonFlags {
  local?: boolean;
  data: string;
  json?: boolean;
  aws?: boolean;
}

/** What the command runs on each side; each exits the process with its own code. */
export interface ReportActions {
  local: (runId: string, o: ReportFlags) => Promise<void>;
  aws: (runId: string, o: ReportFlags) => Promise<void>;
}

const reportActions: ReportActions = {
  local: async (runId, o) => exitAfterFlush(await reportLocal(runId, o)),
  aws: (runId, o) => guarded(() => reportAws(runId, o, process.env, (t) => process.stdout.write(printable(t)))),
};

/** Register `report`: `--aws` reads the AWS run's summary from S3, else the local data directory. */
export function registerReport(program: Command, actions: ReportActions = reportActions): void {
  commonOptions(
    program
      .command('report')
      .description('recompute a run summary from the samples in a data directory (same SQL)')
      .argument('<runId>')
      .option('--local', 'read the local data directory (the default here)', true)
      .option('--data <dir>', 'data directory', DEFAULT_DATA_DIR)
      .option('--json', 'print the summary JSON')
      .option('--aws', 'read the summary of an AWS run from S3'),
  ).action((runId: string, o: ReportFlags) => (o.aws ? actions.aws(runId, o) : actions.local(runId, o)));
}
