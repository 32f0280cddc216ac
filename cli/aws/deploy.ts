/** `pathbench deploy [--testbed] [--allow-plan FILE…]`: the pipeline stack with cdk, saving its outputs for the other commands. */
import { isIP } from 'node:net';
import path from 'node:path';
import { errorMessage } from '../../core/errors.js';
import type { ResolvedPlan } from '../../core/resolved-plan.js';
import { type AllowedRoute, viaTarget } from '../../core/route-policy.js';
import { runCdk } from '../cdk.js';
import { ROOT } from '../cli-root.js';
import { PIPELINE_OUTPUTS_FILE } from '../outputs-file.js';
import { loadPlanFile } from '../plan-file.js';
import { AwsCliError } from './aws-errors.js';
import { DEFAULT_STACK } from './stack-config.js';

export interface DeployFlags {
  testbed?: boolean;
  yes?: boolean;
  stack?: string;
  /** Plans whose route swaps, targets and clients the stack allows (context allowedRoutes, allowedTargets, clientInstanceIds). */
  allowPlan?: string[];
}

/** The plan the testbed deploy writes (cli/testbed/testbed-plans.ts DEFAULT_PLAN_OUT); --testbed allows it. */
const TESTBED_PLAN = path.resolve(ROOT, 'plans/tokyo-osaka.json');

/**
 * The stack configuration that allows exactly what the plans do: every route a path swaps, with
 * the targets the plans point it at, every host a path probes (an address as its /32 or /128, a
 * hostname by name), and every client instance (it may upload raw output only under its own
 * prefix). Nothing else is allowed (docs/aws.md "Who can change which route", "Who can be a target").
 */
export function allowFromPlans(plans: readonly ResolvedPlan[]): {
  allowedRoutes: AllowedRoute[];
  allowedTargets: string[];
  clientInstanceIds: string[];
} {
  const routes = new Map<string, AllowedRoute>();
  const clients = new Set<string>();
  const targets = new Set<string>();
  for (const plan of plans) {
    for (const path of plan.paths) {
      clients.add(path.client.instanceId);
      const host = path.target.host;
      targets.add(isIP(host) === 0 ? host : `${host}/${isIP(host) === 4 ? 32 : 128}`);
      for (const r of path.routes) {
        const key = `${r.region} ${r.routeTableId} ${r.destination}`;
        const entry = routes.get(key) ?? {
          region: r.region,
          routeTableId: r.routeTableId,
          destination: r.destination,
          targets: [],
        };
        const target = viaTarget(r.via);
        if (!entry.targets.includes(target)) entry.targets.push(target);
        routes.set(key, entry);
      }
    }
  }
  return {
    allowedRoutes: [...routes.values()],
    allowedTargets: [...targets].sort(),
    clientInstanceIds: [...clients].sort(),
  };
}

/** `-c` arguments for cdk from the plan files; a plan that does not validate stops the deploy, naming the file. */
export async function allowContextArgs(files: readonly string[]): Promise<string[]> {
  if (files.length === 0) return [];
  const plans: ResolvedPlan[] = [];
  for (const file of files) {
    const r = await loadPlanFile(file);
    if (!r.ok) throw new AwsCliError(`--allow-plan ${file}: the plan is invalid:\n  ${r.problems.join('\n  ')}`);
    plans.push(r.plan);
  }
  const { allowedRoutes, allowedTargets, clientInstanceIds } = allowFromPlans(plans);
  return [
    '-c',
    `allowedRoutes=${JSON.stringify(allowedRoutes)}`,
    '-c',
    `allowedTargets=${JSON.stringify(allowedTargets)}`,
    ...(clientInstanceIds.length ? ['-c', `clientInstanceIds=${clientInstanceIds.join(',')}`] : []),
  ];
}

/** Deploy the testbed first when asked (stop if that fails), then the pipeline stack; resolves with cdk's exit code. */
export async function deploy(o: DeployFlags, run: (args: string[]) => Promise<number> = runCdk): Promise<number> {
  const allow = [...(o.allowPlan ?? [])];
  if (o.testbed) {
    let deployTestbed: ((opts: { yes?: boolean }) => Promise<number>) | undefined;
    try {
      ({ deployTestbed } = await import('../testbed/deploy-testbed.js'));
    } catch (e) {
      throw new AwsCliError(
        `--testbed is not available: cli/testbed/deploy-testbed.ts failed to load (${errorMessage(e)})`,
      );
    }
    const code = await deployTestbed({ yes: o.yes });
    if (code !== 0) return code;
    // The testbed's plan swaps routes between peering and TGW: the stack must allow those swaps.
    if (!allow.includes(TESTBED_PLAN)) allow.push(TESTBED_PLAN);
  }
  return run([
    'deploy',
    o.stack ?? DEFAULT_STACK,
    ...(await allowContextArgs(allow)),
    '--outputs-file',
    PIPELINE_OUTPUTS_FILE,
    ...(o.yes ? ['--require-approval', 'never'] : []),
  ]);
}
