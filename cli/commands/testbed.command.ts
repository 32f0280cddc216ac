/**
 * Testbed commands: `pathbench plan from-testbed` (the plan from the testbed's outputs),
 * `pathbench plan az-matrix` and `pathbench destroy --testbed`. The work is in cli/testbed/:
 * reading the deployed outputs, writing the plans, deploying and destroying.
 */
import type { Command } from 'commander';
import { printable } from '../../core/printable.js';
import {
  AZ_MATRIX_PROBES,
  type AzMatrixOptions,
  type AzMatrixProbe,
  DEFAULT_AZ_MATRIX_PROBE,
} from '../../infra/testbed/az-matrix.js';
import { exitWith } from '../exit.js';
import { OutputsFileError, readOutputsFile } from '../outputs-file.js';
import { destroyTestbed } from '../testbed/deploy-testbed.js';
import { readDeployedOutputs } from '../testbed/deployed-outputs.js';
import { TestbedCliError } from '../testbed/testbed-cli-error.js';
import { DEFAULT_PLAN_OUT, readHostsFile, writeAzMatrixPlan, writePlanFromOutputs } from '../testbed/testbed-plans.js';
import { DEFAULT_CLIENT_REGION, DEFAULT_PEER_REGION, DEFAULT_PREFIX } from '../testbed/testbed-stacks.js';

/** Exit code for unusable input or environment (no credentials, missing outputs). */
const EXIT_BAD_INPUT = 2;

function fail(e: unknown): never {
  if (e instanceof TestbedCliError || e instanceof OutputsFileError) {
    process.stderr.write(`pathbench: ${printable(e.message)}\n`);
    exitWith(EXIT_BAD_INPUT);
  }
  throw e;
}

/**
 * Register `plan from-testbed [--outputs FILE] [--out FILE]` and `destroy --testbed` on the
 * program; reuses an existing `plan` or `destroy` command when another module created it.
 */
export function registerTestbed(program: Command): void {
  const plan = program.commands.find((c) => c.name() === 'plan') ?? program.command('plan').description('plan tools');
  plan
    .command('from-testbed')
    .description(
      'write the plan of a testbed from its stacks’ outputs (seed-000 A–E, seed-002 nine ECS paths, seed-004 AZ pairs), and print its cost note',
    )
    .option('--outputs <file>', 'outputs saved by `cdk deploy --outputs-file` (default: read the deployed stacks)')
    .option('--out <file>', 'plan file to write', DEFAULT_PLAN_OUT)
    .option('--client-region <region>', 'client stack region', DEFAULT_CLIENT_REGION)
    .option('--peer-region <region>', 'peer stack region', DEFAULT_PEER_REGION)
    .option('--prefix <name>', 'testbed stack name prefix', DEFAULT_PREFIX)
    .action(async (o: { outputs?: string; out: string; clientRegion: string; peerRegion: string; prefix: string }) => {
      try {
        const outputs = o.outputs
          ? await readOutputsFile(o.outputs)
          : await readDeployedOutputs({ clientRegion: o.clientRegion, peerRegion: o.peerRegion, prefix: o.prefix });
        const { summary, note } = await writePlanFromOutputs(outputs, o.out);
        process.stdout.write(`plan written to ${o.out}${summary ? `: ${summary}` : ''}\n\n${note}\n`);
      } catch (e: unknown) {
        fail(e);
      }
    });

  plan
    .command('az-matrix')
    .description('write an AZ-pair plan: every ordered pair of AZs and the same-AZ references, AZ ids in path ids')
    .option('--outputs <file>', 'the seed-004 testbed outputs saved by `cdk deploy --outputs-file`')
    .option('--hosts <file>', 'a host list: JSON [{ "region", "azId", "instanceId", "ip", "name"? }, …]')
    .option('--out <file>', 'plan file to write', 'plans/az-matrix.json')
    .option('--name <name>', 'plan name', 'az-matrix')
    .option('--probe <kind>', `probe: ${AZ_MATRIX_PROBES.join(' or ')}`, DEFAULT_AZ_MATRIX_PROBE)
    .option('--mode <mode>', 'tcp or udp', 'tcp')
    .option('--duration <seconds>', 'seconds per path (seed 004: 60)', '60')
    .option('--cross-region', 'also pair AZs of different regions (needs a network between them)')
    .option('--unordered', 'each pair in one direction only (halves the paths; symmetric networks)')
    .action(
      async (o: {
        outputs?: string;
        hosts?: string;
        out: string;
        name: string;
        probe: string;
        mode: string;
        duration: string;
        crossRegion?: boolean;
        unordered?: boolean;
      }) => {
        try {
          if (!!o.outputs === !!o.hosts)
            throw new TestbedCliError('give exactly one of --outputs FILE or --hosts FILE');
          if (!(AZ_MATRIX_PROBES as readonly string[]).includes(o.probe))
            throw new TestbedCliError(`--probe: expected ${AZ_MATRIX_PROBES.join(' or ')}, got "${o.probe}"`);
          if (o.mode !== 'tcp' && o.mode !== 'udp')
            throw new TestbedCliError(`--mode: expected tcp or udp, got "${o.mode}"`);
          const duration = Number(o.duration);
          if (!Number.isInteger(duration) || duration < 1 || duration > 3600)
            throw new TestbedCliError(`--duration: expected whole seconds from 1 to 3600, got "${o.duration}"`);
          const opts: AzMatrixOptions = {
            name: o.name,
            probe: o.probe as AzMatrixProbe,
            mode: o.mode,
            durationSeconds: duration,
            crossRegion: o.crossRegion,
            unordered: o.unordered,
          };
          const source = o.outputs
            ? { outputs: await readOutputsFile(o.outputs) }
            : { hosts: await readHostsFile(o.hosts!) };
          const { note } = await writeAzMatrixPlan(source, o.out, opts);
          process.stdout.write(`plan written to ${o.out}\n\n${note}\n`);
        } catch (e: unknown) {
          fail(e);
        }
      },
    );

  if (program.commands.some((c) => c.name() === 'destroy')) return;
  program
    .command('destroy')
    .description('destroy deployed stacks (today: the testbed)')
    .option('--testbed', 'destroy the testbed stacks (not the pipeline)')
    .option('--prefix <name>', 'testbed stack name prefix', DEFAULT_PREFIX)
    .option('-y, --yes', 'do not ask for confirmation')
    .action(async (o: { testbed?: boolean; prefix: string; yes?: boolean }) => {
      if (!o.testbed) fail(new TestbedCliError('say what to destroy: `pathbench destroy --testbed`'));
      process.exitCode = await destroyTestbed({ prefix: o.prefix, yes: o.yes });
    });
}
