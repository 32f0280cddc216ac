/**
 * Testbed commands: `pathbench plan from-testbed` (A–E plan from the testbed's outputs),
 * `pathbench destroy --testbed`, and `deployTestbed()` behind `pathbench deploy --testbed`
 * (prints the cost note, runs `cdk deploy`, saves outputs, writes the plan).
 *
 * Deployed outputs are read from the SSM parameter each testbed stack writes
 * (`/pathbench/testbed/outputs/<stack>`), because the project ships the SSM client and not the
 * CloudFormation one; a saved `cdk deploy --outputs-file` works without any AWS access.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import type { Command } from 'commander';
import { errorMessage } from '../../core/errors.js';
import { formatProblems, parsePlan } from '../../core/plan.js';
import { printable } from '../../core/printable.js';
import {
  AZ_HOSTS_OUTPUT,
  AZ_MATRIX_PROBES,
  AzMatrixError,
  type AzMatrixOptions,
  type AzMatrixProbe,
  azMatrixPlan,
  DEFAULT_AZ_MATRIX_PROBE,
  hostsFromOutputs,
  parseHostList,
} from '../../infra/testbed/az-matrix.js';
import {
  MESH_DEFAULT_INSTANCE_TYPE,
  MESH_HOST_OUTPUT,
  meshCostNote,
  meshPlanFromOutputs,
} from '../../infra/testbed/mesh-testbed.js';
import {
  planFromTestbedOutputs,
  TESTBED_OUTPUTS,
  TestbedOutputsError,
  type TestbedPlanJson,
} from '../../infra/testbed/plan-from-outputs.js';
import { isSeed002Outputs, seed002CostNote, seed002Plan } from '../../infra/testbed/seed002-plan.js';
import {
  DEFAULT_TESTBED_INVENTORY,
  fixedMonthlyCost,
  formatCostNote,
  INSTANCE_BURST_GBPS,
  type RunTransferCost,
  runTransferCost,
  TESTBED_INTER_REGION_RATES,
} from '../../infra/testbed/testbed-cost.js';
import { type CdkRunner, runCdk } from '../cdk.js';
import { ROOT } from '../cli-root.js';
import { exitWith } from '../exit.js';
import { type Outputs, OutputsFileError, readOutputsFile, TESTBED_OUTPUTS_FILE } from '../outputs-file.js';

/** Exit code for unusable input or environment (no credentials, missing outputs). */
const EXIT_BAD_INPUT = 2;
const DEFAULT_PLAN_OUT = 'plans/tokyo-osaka.json';

// Kept in step with infra/testbed (TESTBED_DEFAULTS, testbedStackNames, outputsParameterName);
// the CLI does not import the CDK app so that it starts without loading aws-cdk-lib.
const DEFAULT_PREFIX = 'PathbenchTestbed';
const DEFAULT_CLIENT_REGION = 'ap-northeast-1';
const DEFAULT_PEER_REGION = 'ap-northeast-3';
const stackNames = (prefix: string) => ({
  peer: `${prefix}Peer`,
  client: `${prefix}Client`,
  peerRoutes: `${prefix}PeerRoutes`,
});
const outputsParameter = (stack: string) => `/pathbench/testbed/outputs/${stack}`;

/** A failure the user can fix; printed as one line, exit code 2. */
export class TestbedCliError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TestbedCliError';
  }
}

function isCredentialsError(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  return (
    e.name === 'CredentialsProviderError' ||
    /credential/i.test(e.message) ||
    e.name === 'ExpiredTokenException' ||
    e.name === 'UnrecognizedClientException'
  );
}

/**
 * Read the deployed testbed outputs (client stack in the client region, peer stack in the peer
 * region) from their SSM parameters, in the `cdk deploy --outputs-file` shape.
 * @throws TestbedCliError for missing credentials or a stack that is not deployed.
 */
export async function readDeployedOutputs(opts: {
  clientRegion: string;
  peerRegion: string;
  prefix?: string;
  ssmFor?: (region: string) => SSMClient;
}): Promise<Outputs> {
  const names = stackNames(opts.prefix ?? DEFAULT_PREFIX);
  const ssmFor = opts.ssmFor ?? ((region: string) => new SSMClient({ region }));
  const out: Outputs = {};
  for (const [stack, region] of [
    [names.peer, opts.peerRegion],
    [names.client, opts.clientRegion],
  ] as const) {
    const name = outputsParameter(stack);
    try {
      const res = await ssmFor(region).send(new GetParameterCommand({ Name: name }));
      const value: unknown = JSON.parse(res.Parameter?.Value ?? '{}');
      if (typeof value !== 'object' || value === null) throw new Error('not a JSON object');
      out[stack] = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'),
      );
    } catch (e: unknown) {
      if (isCredentialsError(e))
        throw new TestbedCliError(
          `no usable AWS credentials (${errorMessage(e)}); configure a profile, or pass --outputs FILE saved by \`cdk deploy --outputs-file\``,
          { cause: e },
        );
      if (e instanceof Error && e.name === 'ParameterNotFound')
        throw new TestbedCliError(`${stack} is not deployed in ${region} (no SSM parameter ${name})`, { cause: e });
      throw new TestbedCliError(`cannot read ${name} in ${region}: ${errorMessage(e)}`, { cause: e });
    }
  }
  return out;
}

/** Upper bound of one run's inter-region transfer for a testbed plan. */
export function planRunCost(plan: TestbedPlanJson, instanceType: string): RunTransferCost | undefined {
  const parsed = parsePlan(plan);
  if (!parsed.ok) return undefined;
  return runTransferCost(parsed.plan, {
    interRegion: TESTBED_INTER_REGION_RATES,
    bandwidthGbps: INSTANCE_BURST_GBPS[instanceType] ?? 12.5,
  });
}

/**
 * Build, validate and write the A–E plan from outputs; returns the plan and the cost note.
 * @throws TestbedCliError when outputs are incomplete or the plan fails validation.
 */
/** The seed-002 nine-path plan from its testbed's outputs (infra/testbed/seed002-plan.ts), and its cost note. */
export async function writeSeed002Plan(outputs: Outputs, outFile: string): Promise<{ note: string }> {
  await writeGeneratedPlan(() => seed002Plan(outputs), outFile);
  return { note: seed002CostNote() };
}

/**
 * Build a plan from testbed outputs, validate it and write it: incomplete outputs and an invalid
 * plan are TestbedCliErrors (one message each), nothing is written then.
 */
async function writeGeneratedPlan<T>(build: () => T, outFile: string): Promise<T> {
  let plan: T;
  try {
    plan = build();
  } catch (e: unknown) {
    if (e instanceof TestbedOutputsError) throw new TestbedCliError(e.message, { cause: e });
    throw e;
  }
  const parsed = parsePlan(plan);
  if (!parsed.ok) throw new TestbedCliError(`generated plan is invalid\n${formatProblems(parsed.problems)}`);
  const target = path.resolve(outFile);
  await mkdir(path.dirname(target), { recursive: true });
  await writeFile(target, `${JSON.stringify(plan, null, 2)}\n`);
  return plan;
}

export async function writeTestbedPlan(
  outputs: Outputs,
  outFile: string,
): Promise<{ plan: TestbedPlanJson; note: string }> {
  const plan: TestbedPlanJson = await writeGeneratedPlan(() => planFromTestbedOutputs(outputs), outFile);
  const instanceType =
    Object.values(outputs)
      .map((o) => o[TESTBED_OUTPUTS.instanceType])
      .find((v) => v !== undefined) ?? DEFAULT_TESTBED_INVENTORY.instanceType;
  const note = formatCostNote(
    fixedMonthlyCost({ ...DEFAULT_TESTBED_INVENTORY, instanceType }),
    planRunCost(plan, instanceType),
  );
  return { plan, note };
}

/** A host list file's JSON. @throws TestbedCliError when it cannot be read or parsed. */
async function readHostsFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e: unknown) {
    throw new TestbedCliError(`cannot read host list ${file} (${errorMessage(e).replace(/, \w+ '.*'$/, '')})`);
  }
  try {
    return JSON.parse(text);
  } catch (e: unknown) {
    throw new TestbedCliError(`host list ${file} is not valid JSON (${errorMessage(e)})`);
  }
}

/** Probe kinds the plan schema knows today (a pingpong plan is written, but cannot be validated here until it does). */
const knownKind = (kind: string) =>
  parsePlan({
    name: 'k',
    defaults: { client: { instanceId: 'i', region: 'r' }, probes: [{ kind }] },
    paths: [{ id: 'x', target: { host: '192.0.2.1', port: 1 } }],
  }).ok;

/**
 * Build, validate and write an AZ-pair plan from hosts (a testbed's outputs or a host list);
 * returns a one-paragraph note (paths, pairs, probe). A probe kind the plan schema does not know
 * yet is written with a warning in the note instead of failing.
 * @throws TestbedCliError for bad hosts or a plan that fails validation.
 */
export async function writeAzMatrixPlan(
  source: { outputs: Outputs } | { hosts: unknown },
  outFile: string,
  opts: AzMatrixOptions = {},
): Promise<{ plan: ReturnType<typeof azMatrixPlan>; note: string }> {
  let plan: ReturnType<typeof azMatrixPlan>;
  try {
    const hosts = 'outputs' in source ? hostsFromOutputs(source.outputs) : parseHostList(source.hosts);
    plan = azMatrixPlan(hosts, opts);
  } catch (e: unknown) {
    if (e instanceof AzMatrixError) throw new TestbedCliError(e.message, { cause: e });
    throw e;
  }
  const kind = opts.probe ?? DEFAULT_AZ_MATRIX_PROBE;
  const known = knownKind(kind);
  if (known) {
    const parsed = parsePlan(plan);
    if (!parsed.ok) throw new TestbedCliError(`generated plan is invalid\n${formatProblems(parsed.problems)}`);
  }
  const target = path.resolve(outFile);
  await mkdir(path.dirname(target), { recursive: true });
  await writeFile(target, `${JSON.stringify(plan, null, 2)}\n`);
  const cross = plan.paths.filter((p) => p.az.from.azId !== p.az.to.azId).length;
  const secs = plan.paths.length * (opts.durationSeconds ?? 60);
  const note = [
    `${plan.paths.length} paths: ${cross} ${opts.unordered ? '' : 'ordered '}cross-AZ pairs and ${plan.paths.length - cross} same-AZ references, probe ${kind} (${opts.mode ?? 'tcp'}, ${opts.durationSeconds ?? 60} s each; about ${Math.ceil(secs / 60)} min of probing).`,
    ...(known
      ? []
      : [`warning: this pathbench does not know probe kind "${kind}" yet; the plan was written but not validated.`]),
  ].join('\n');
  return { plan, note };
}

/** Placeholder outputs (documentation addresses) to size a run before anything is deployed. */
function placeholderOutputs(): Outputs {
  const k = TESTBED_OUTPUTS;
  return {
    placeholder: {
      [k.clientInstanceId]: 'i-pending',
      [k.clientRegion]: DEFAULT_CLIENT_REGION,
      [k.sameAzPeerIp]: '192.0.2.1',
      [k.crossAzPeerIp]: '192.0.2.2',
      [k.clientVpcCidr]: '10.0.0.0/16',
      [k.clientRouteTableId]: 'rtb-pending',
      [k.clientTransitGatewayId]: 'tgw-pending',
      [k.vpcPeeringConnectionId]: 'pcx-pending',
      [k.privateLinkDnsName]: 'vpce.example.com',
      [k.peerRegion]: DEFAULT_PEER_REGION,
      [k.peerTargetIp]: '192.0.2.3',
      [k.peerVpcCidr]: '10.1.0.0/16',
      [k.peerRouteTableId]: 'rtb-pending',
      [k.peerTransitGatewayId]: 'tgw-pending',
    },
  };
}

export interface DeployTestbedOptions {
  /** Where cdk saves the outputs (default .pathbench/testbed-outputs.json). */
  outputsFile?: string;
  /** Where the A–E plan goes after a successful deploy (default plans/tokyo-osaka.json; false = skip). */
  planOut?: string | false;
  /** Extra `-c key=value` context (e.g. testbedClientRegion). */
  context?: Record<string, string>;
  /** Pass `--require-approval never` (non-interactive). */
  yes?: boolean;
  instanceType?: string;
  run?: CdkRunner;
  log?: (text: string) => void;
}

/**
 * Print the cost note, then `npx cdk deploy -c testbed=true --all --outputs-file …`, then write
 * the plan from the saved outputs. Resolves with cdk's exit code.
 */
export async function deployTestbed(opts: DeployTestbedOptions = {}): Promise<number> {
  const log = opts.log ?? ((t: string) => process.stdout.write(`${t}\n`));
  const instanceType = opts.instanceType ?? opts.context?.testbedInstanceType ?? DEFAULT_TESTBED_INVENTORY.instanceType;
  const sizing = planFromTestbedOutputs(placeholderOutputs());
  log(
    formatCostNote(fixedMonthlyCost({ ...DEFAULT_TESTBED_INVENTORY, instanceType }), planRunCost(sizing, instanceType)),
  );
  const outputsFile = path.resolve(ROOT, opts.outputsFile ?? TESTBED_OUTPUTS_FILE);
  await mkdir(path.dirname(outputsFile), { recursive: true });
  const context = { ...opts.context, ...(opts.instanceType ? { testbedInstanceType: opts.instanceType } : {}) };
  const args = [
    'deploy',
    '-c',
    'testbed=true',
    ...Object.entries(context).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
    '--all',
    '--outputs-file',
    outputsFile,
    ...(opts.yes ? ['--require-approval', 'never'] : []),
  ];
  const code = await (opts.run ?? runCdk)(args);
  if (code !== 0 || opts.planOut === false) return code;
  const { note } = await writeTestbedPlan(
    await readOutputsFile(outputsFile),
    path.resolve(ROOT, opts.planOut ?? DEFAULT_PLAN_OUT),
  );
  log(`plan written to ${opts.planOut ?? DEFAULT_PLAN_OUT}\n${note}`);
  return 0;
}

/** `cdk destroy` of the testbed stacks only (never the pipeline), routes stack first. */
export async function destroyTestbed(opts: { prefix?: string; yes?: boolean; run?: CdkRunner } = {}): Promise<number> {
  const n = stackNames(opts.prefix ?? DEFAULT_PREFIX);
  const args = ['destroy', '-c', 'testbed=true', n.peerRoutes, n.client, n.peer, ...(opts.yes ? ['--force'] : [])];
  return (opts.run ?? runCdk)(args);
}

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
        // The mesh testbed lists one host per region: its plan is the region mesh, in rounds.
        if (Object.values(outputs).some((m) => typeof m?.[MESH_HOST_OUTPUT] === 'string')) {
          const { plan, layout, hosts } = meshPlanFromOutputs(outputs);
          const checked = parsePlan(plan);
          if (!checked.ok) throw new Error(`the mesh plan is invalid:\n${formatProblems(checked.problems)}`);
          await mkdir(path.dirname(o.out), { recursive: true });
          await writeFile(o.out, `${JSON.stringify(plan, null, 2)}\n`);
          process.stdout.write(
            `plan written to ${o.out}: ${layout.pairs.length} pairs in ${layout.rounds} rounds (lower bound ${layout.lowerBound})\n\n${meshCostNote(
              hosts.map((h) => h.region),
              MESH_DEFAULT_INSTANCE_TYPE,
            )}\n`,
          );
          return;
        }
        // The seed-004 testbed lists hosts by AZ: its plan is the AZ-pair plan.
        const azHosts = Object.values(outputs).some((m) => typeof m?.[AZ_HOSTS_OUTPUT] === 'string');
        // The seed-002 testbed names its ECS cluster: its plan is the nine service-to-service paths.
        const { note } = isSeed002Outputs(outputs)
          ? await writeSeed002Plan(outputs, o.out)
          : azHosts
            ? await writeAzMatrixPlan({ outputs }, o.out)
            : await writeTestbedPlan(outputs, o.out);
        process.stdout.write(`plan written to ${o.out}\n\n${note}\n`);
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
