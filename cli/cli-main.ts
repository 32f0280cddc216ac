/**
 * The `pathbench` command line. Each area registers its own subcommands; no command is defined
 * by two areas, so the order below is only the order of the help listing.
 */
import { existsSync, statSync } from 'node:fs';
import { Command } from 'commander';
import { errorMessage } from '../core/errors.js';
import { printable } from '../core/printable.js';
import { registerBench } from './bench.js';
import { registerAws } from './commands/aws.command.js';
import { registerLab } from './commands/lab.command.js';
import { registerParquet } from './commands/parquet.command.js';
import { registerParse } from './commands/parse.command.js';
import { registerPlan } from './commands/plan.command.js';
import { registerPrices } from './commands/prices.command.js';
import { registerReport } from './commands/report.command.js';
import { registerSql, registerTables } from './commands/sql.command.js';
import { registerTestbed } from './commands/testbed.command.js';
import { registerTrend } from './commands/trend.command.js';
import { ExitRequest, exitAfterFlush, exitWith, InputError } from './exit.js';
import { registerLocal } from './local.js';

const program = new Command('pathbench')
  .description('Measure cloud network paths with one Step Functions pipeline, on AWS or locally.')
  .showHelpAfterError()
  // A data directory that is a file: one line and exit 2 before any command reads or writes it.
  .hook('preAction', (_program, action) => {
    const data = action.opts().data;
    if (typeof data === 'string' && existsSync(data) && !statSync(data).isDirectory()) {
      process.stderr.write(`pathbench: --data ${printable(data)} is a file, not a data directory\n`);
      exitWith(2);
    }
  });
registerLocal(program);
registerReport(program);
registerParquet(program);
registerSql(program);
registerTables(program);
registerTrend(program);
registerPlan(program);
registerPrices(program);
registerParse(program);
registerLab(program);
registerAws(program);
registerTestbed(program);
registerBench(program);

program.parseAsync(process.argv).catch((e: unknown) => {
  if (e instanceof ExitRequest) return exitAfterFlush(e.code);
  process.stderr.write(`pathbench: ${printable(errorMessage(e))}\n`);
  return exitAfterFlush(e instanceof InputError ? 2 : 1);
});
