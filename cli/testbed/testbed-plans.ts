/**
 * A testbed's plan from its stacks' outputs, validated and written: seed 000's A–E paths, seed
 * 002's nine service-to-service paths, seed 004's AZ pairs (or an AZ-pair plan from a host list)
 * and the region mesh, each with its cost note.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { errorMessage } from '../../core/errors.js';
import { formatProblems, parsePlan } from '../../core/plan.js';
import {
  AZ_HOSTS_OUTPUT,
  AzMatrixError,
  type AzMatrixOptions,
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
} from '../../infra/testbed/mesh-plan.js';
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
import type { Outputs } from '../outputs-file.js';
import { TestbedCliError } from './testbed-cli-error.js';

/** Where `plan from-testbed` and `deploy --testbed` write the seed-000 plan by default. */
export const DEFAULT_PLAN_OUT = 'plans/tokyo-osaka.json';

/**
 * The plan of whichever testbed wrote `outputs`, written to `outFile`: the mesh testbed's region
 * mesh, seed 002's ECS paths, seed 004's AZ pairs, else seed 000's A–E. Returns the cost note,
 * and for the mesh a one-line summary of its rounds.
 */
export async function writePlanFromOutputs(
  outputs: Outputs,
  outFile: string,
): Promise<{ summary?: string; note: string }> {
  // The mesh testbed lists one host per region: its plan is the region mesh, in rounds.
  if (Object.values(outputs).some((m) => typeof m?.[MESH_HOST_OUTPUT] === 'string'))
    return writeMeshPlan(outputs, outFile);
  // The seed-004 testbed lists hosts by AZ: its plan is the AZ-pair plan.
  const azHosts = Object.values(outputs).some((m) => typeof m?.[AZ_HOSTS_OUTPUT] === 'string');
  // The seed-002 testbed names its ECS cluster: its plan is the nine service-to-service paths.
  return isSeed002Outputs(outputs)
    ? writeSeed002Plan(outputs, outFile)
    : azHosts
      ? writeAzMatrixPlan({ outputs }, outFile)
      : writeTestbedPlan(outputs, outFile);
}

/** The mesh testbed's region mesh plan, in rounds, and its cost note. */
async function writeMeshPlan(outputs: Outputs, outFile: string): Promise<{ summary: string; note: string }> {
  const { plan, layout, hosts } = meshPlanFromOutputs(outputs);
  const checked = parsePlan(plan);
  if (!checked.ok) throw new Error(`the mesh plan is invalid:\n${formatProblems(checked.problems)}`);
  await mkdir(path.dirname(outFile), { recursive: true });
  await writeFile(outFile, `${JSON.stringify(plan, null, 2)}\n`);
  return {
    summary: `${layout.pairs.length} pairs in ${layout.rounds} rounds (lower bound ${layout.lowerBound})`,
    note: meshCostNote(
      hosts.map((h) => h.region),
      MESH_DEFAULT_INSTANCE_TYPE,
    ),
  };
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

/**
 * Build, validate and write the A–E plan from outputs; returns the plan and the cost note.
 * @throws TestbedCliError when outputs are incomplete or the plan fails validation.
 */
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
export async function readHostsFile(file: string): Promise<unknown> {
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
