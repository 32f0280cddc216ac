/**
 * AWS commands: `pathbench deploy [--testbed]`, `pathbench start` and `pathbench status`
 * (`pathbench report RUN_ID --aws` is in ./report.ts). The jobs behind them are in cli/aws/.
 * Missing credentials or region: one line on stderr, exit 2.
 */
import type { Command } from 'commander';
import { printable } from '../../core/printable.js';
import { guarded } from '../aws/aws-errors.js';
import { type DeployFlags, deploy } from '../aws/deploy.js';
import { runStatus, type StartFlags, startRun } from '../aws/execution.js';
import { type CommonFlags, commonOptions, DEFAULT_STACK } from '../aws/stack-config.js';
import { SETTINGS_OPTIONS } from '../run-settings.js';

/** Summaries and statuses show labels, notes and errors: nothing in them may act on the terminal. */
const stdout = (text: string) => process.stdout.write(printable(text));

/** Register deploy / start / status. */
export function registerAws(program: Command): void {
  program
    .command('deploy')
    .description('deploy the pipeline stack with cdk (and the seed-000 testbed with --testbed, whose plan it allows)')
    .option('--testbed', 'also deploy the Tokyo/Osaka testbed (costs money; prints an estimate first)')
    .option('--yes', 'do not ask for approval of security changes')
    .option('--stack <name>', 'pipeline stack name', DEFAULT_STACK)
    .option(
      '--allow-plan <file...>',
      "allow exactly these plans' route swaps and clients (stack context allowedRoutes, clientInstanceIds)",
    )
    .action((o: DeployFlags) => guarded(() => deploy(o)));

  const start = program.command('start');
  for (const [flag, help] of SETTINGS_OPTIONS) start.option(flag, help);
  commonOptions(
    start
      .description('start a run on AWS (the plan is validated locally first)')
      .option('--plan <file>', 'plan JSON file')
      .option('--plan-name <name>', 'named plan in SSM Parameter Store (/pathbench/plans/<name>)')
      .option('--mesh', 'run the named plan on the mesh state machine (a plan file with mesh pairs always does)')
      .option('--run-id <id>', 'run id = execution name (default: time-based)')
      .option('--follow', 'show progress until the run ends, then the summary'),
  ).action((o: StartFlags) => guarded(() => startRun(o, process.env, stdout)));

  commonOptions(program.command('status').description('status of an AWS run').argument('<runId>')).action(
    (runId: string, o: CommonFlags) => guarded(() => runStatus(runId, o, process.env, stdout)),
  );
}
