/**
 * `deployTestbed()` behind `pathbench deploy --testbed` (prints the cost note, runs `cdk deploy`,
 * saves outputs, writes the plan) and `destroyTestbed()` behind `pathbench destroy --testbed`.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { planFromTestbedOutputs, TESTBED_OUTPUTS } from '../../infra/testbed/plan-from-outputs.js';
import { DEFAULT_TESTBED_INVENTORY, fixedMonthlyCost, formatCostNote } from '../../infra/testbed/testbed-cost.js';
import { type CdkRunner, runCdk } from '../cdk.js';
import { ROOT } from '../cli-root.js';
import { type Outputs, readOutputsFile, TESTBED_OUTPUTS_FILE } from '../outputs-file.js';
import { DEFAULT_PLAN_OUT, planRunCost, writeTestbedPlan } from './testbed-plans.js';
import { DEFAULT_CLIENT_REGION, DEFAULT_PEER_REGION, DEFAULT_PREFIX, stackNames } from './testbed-stacks.js';

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
