/**
 * The CDK app: the pipeline stack always; a testbed when the context value `testbed` names one:
 * `seed-000` (or "true", the seed 000 topology), `seed-002`, `seed-004` or `mesh`. Every bundle a
 * stack uploads (the agent, the ECS worker, each Lambda's) is built during synth when missing or
 * stale, so a clean tree synthesizes with no build step.
 * Context: scheduleExpression, scheduleEnabled, schedulePlanName, scheduleMachine (measurement,
 * or mesh for a mesh plan), clientRoleArns and
 * clientInstanceIds (comma separated), meshRegions (comma separated: the agent's document and
 * bundle in each, infra/agent-region-stack.ts), allowedRoutes (JSON: [{ region, routeTableId,
 * destination, targets: ["kind:id", …] }], docs/aws.md), allowedTargets (JSON: ["10.1.0.0/16",
 * "host.example", …]), budgetUsd and clientInstanceType (the
 * cost guard's stack default), clientQueueArns (comma separated; default: queues named
 * pathbench-client-* of the stack's account and region).
 */
import { App } from 'aws-cdk-lib';
import { parseAllowedRoutes } from '../core/route-policy.js';
import { parseAllowedTargets } from '../core/target-policy.js';
import { addAgentRegions, parseMeshRegions } from './agent-region-stack.js';
import type { ScheduleMachine } from './constructs/schedule.js';
import { PipelineStack } from './pipeline-stack.js';
import { addTestbed } from './testbed/index.js';
import { addMeshTestbed } from './testbed/mesh-testbed.js';
import { addSeed002Testbed } from './testbed/seed002.js';
import { addSeed004Testbed } from './testbed/seed004.js';

const app = new App();
const ctx = (key: string): string | undefined => {
  const v: unknown = app.node.tryGetContext(key);
  return v === undefined || v === null || v === '' ? undefined : String(v);
};
/** `-c allowedRoutes='[…]'` arrives as a string, cdk.json context as JSON already. */
function allowedRoutesContext(): string | undefined {
  const v: unknown = app.node.tryGetContext('allowedRoutes');
  if (v === undefined || v === null || v === '') return undefined;
  return typeof v === 'string' ? v : JSON.stringify(v);
}
/** `-c allowedTargets='[…]'` arrives as a string, cdk.json context as JSON already; checked by the stack. */
function allowedTargetsContext(): readonly string[] | undefined {
  const v: unknown = app.node.tryGetContext('allowedTargets');
  if (v === undefined || v === null || v === '') return undefined;
  return parseAllowedTargets(typeof v === 'string' ? v : JSON.stringify(v), 'context allowedTargets').entries;
}
/** Context scheduleMachine: which state machine the stack's schedule starts. */
function scheduleMachine(v: string | undefined): ScheduleMachine | undefined {
  if (v === undefined || v === 'measurement' || v === 'mesh') return v;
  throw new Error(`context scheduleMachine: expected measurement or mesh, got ${JSON.stringify(v)}`);
}
const env = { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION };

// The agent's other regions (context meshRegions, comma separated): one agent region stack each.
const agentRegions = parseMeshRegions(ctx('meshRegions'), env.region);
const pipeline = new PipelineStack(app, ctx('stackName') ?? 'Pathbench', {
  env,
  description: 'pathbench: network path measurement pipeline',
  scheduleExpression: ctx('scheduleExpression'),
  scheduleEnabled: ctx('scheduleEnabled') === 'true',
  schedulePlanName: ctx('schedulePlanName'),
  scheduleMachine: scheduleMachine(ctx('scheduleMachine')),
  clientRoleArns: ctx('clientRoleArns')?.split(',').filter(Boolean),
  clientInstanceIds: ctx('clientInstanceIds')?.split(',').filter(Boolean),
  alarmEmail: ctx('alarmEmail'),
  allowedRoutes: parseAllowedRoutes(allowedRoutesContext(), 'context allowedRoutes'),
  allowedTargets: allowedTargetsContext(),
  budgetUsd: ctx('budgetUsd') === undefined ? undefined : Number(ctx('budgetUsd')),
  clientInstanceType: ctx('clientInstanceType'),
  clientQueueArns: ctx('clientQueueArns')?.split(',').filter(Boolean),
  agentRegions,
});
addAgentRegions(app, pipeline, agentRegions);

if (ctx('testbed') === 'seed-002') {
  // Seed 002's ECS service-to-service testbed, probed from a client service task (infra/testbed/seed002.ts).
  addSeed002Testbed(app);
} else if (ctx('testbed') === 'mesh') {
  // The mesh testbed: one small host per region of meshRegions (infra/testbed/mesh-testbed.ts).
  addMeshTestbed(app, ctx('meshRegions'));
} else if (ctx('testbed') === 'seed-004') {
  // Seed 004's AZ-pair testbed: 3 AZs × 2 regions + a same-AZ reference host each (infra/testbed/seed004.ts).
  addSeed004Testbed(app);
} else if (ctx('testbed') === 'true' || ctx('testbed') === 'seed-000') {
  // Settings come from context (testbed*); the pipeline bucket's name is a deploy-time value in
  // another stack, so the testbed takes it from context `testbedPipelineBucket`.
  addTestbed(app);
}
