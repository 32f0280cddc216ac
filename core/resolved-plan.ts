/**
 * The resolved plan (`runs/run=<id>/plan.json`: `{ source, resolved }`, written once by
 * ValidatePlan): every path with the defaults merged in, nothing optional left. Also the parts of
 * a path the run's other documents carry (client, target, routes, mesh facts, AZ pair, skipped
 * probes, comparisons, regression settings). Validating a plan as written is core/plan.ts.
 */
import { z } from 'zod';
import { PROBE_KINDS, probeSpecSchema } from '../probes/index.js';
import { port, probeName } from '../probes/probe-fields.js';
import { isValidHost, quoted } from './fields.js';
import { keys } from './keys.js';
import { type DocumentStore, jsonNumber, readStored } from './stored-document.js';
import { forbiddenTarget } from './target-policy.js';

/** The route target keys a plan may use in `via`; exactly one per route. */
export const VIA_KEYS = [
  'vpcPeeringConnectionId',
  'transitGatewayId',
  'gatewayId',
  'natGatewayId',
  'networkInterfaceId',
  'vpcEndpointId',
  'labNextHop',
] as const;
export type ViaKey = (typeof VIA_KEYS)[number];

/** Where a route points: exactly one target (`labNextHop`: local lab only, a next-hop name inside the lab router). */
export const routeViaSchema = z.union([
  z.strictObject({ vpcPeeringConnectionId: z.string() }),
  z.strictObject({ transitGatewayId: z.string() }),
  z.strictObject({ gatewayId: z.string() }),
  z.strictObject({ natGatewayId: z.string() }),
  z.strictObject({ networkInterfaceId: z.string() }),
  z.strictObject({ vpcEndpointId: z.string() }),
  z.strictObject({ labNextHop: z.string() }),
]);
export type RouteVia = z.output<typeof routeViaSchema>;

export const routeEntrySchema = z.object({
  region: z.string(),
  routeTableId: z.string(),
  destination: z.string(),
  via: routeViaSchema,
});
export type RouteEntry = z.output<typeof routeEntrySchema>;

/** A route target as a single "kind:id" string, e.g. "vpcPeeringConnectionId:pcx-1", or "none". */
export type RouteTarget = string;

export type ClientKind = 'ec2-instance' | 'ecs-task';

/**
 * The client a path probes from, resolved. `instanceId` is the client's id in raw keys
 * (`client=<id>`, keys.clientRawPrefix) and in messages: the EC2 instance id, or for a task
 * client (`kind: 'ecs-task'`) its service name — any task of the service may take the probe.
 */
export const clientRefSchema = z.object({
  instanceId: z.string().min(1),
  region: z.string().min(1),
  /** Absent for an EC2 instance (kept so manifests and items of earlier runs read unchanged). */
  kind: z.enum(['ec2-instance', 'ecs-task']).optional(),
  cluster: z.string().min(1).optional(),
  service: z.string().min(1).optional(),
  queueUrl: z.string().min(1).optional(),
});
export type ClientRef = z.output<typeof clientRefSchema>;

/**
 * A path's target: the host (a hostname or an IP literal; it reaches tool command lines) and
 * port. Addresses no measurement needs (multicast, broadcast, link-local with the instance
 * metadata service …) are refused everywhere a target is read (core/target-policy.ts).
 */
export const targetSchema = z.strictObject({
  host: z
    .string()
    .refine(isValidHost, {
      error: (iss) => `expected a hostname or an IPv4/IPv6 address, got ${quoted(iss.input)}`,
      abort: true,
    })
    .superRefine((host, ctx) => {
      const never = forbiddenTarget(host);
      if (never) ctx.addIssue({ code: 'custom', input: host, message: never });
    }),
  port,
});

export const skippedProbeSchema = z.strictObject({
  name: probeName,
  reason: z.string(),
  /** The skipped probe's kind, when known (the agent lists it under that kind in agent.json). */
  kind: z.enum(PROBE_KINDS).optional(),
});
export type SkippedProbe = z.output<typeof skippedProbeSchema>;

/** One end of an AZ pair: the region and the AZ id (AZ ids name the same AZ in every account; AZ names do not). */
export const azEndSchema = z.object({ region: z.string(), azId: z.string() });
export type AzEnd = z.output<typeof azEndSchema>;

/** A path between two AZs (plans from `pathbench plan az-matrix`): carried into the manifest and the summary. */
export const azPairSchema = z.object({ from: azEndSchema, to: azEndSchema });
export type AzPair = z.output<typeof azPairSchema>;

/** A mesh pair: client region `from`, target region `to`, their great-circle distance and the pair's round. */
export const meshFactsSchema = z.object({
  from: z.string(),
  to: z.string(),
  distanceKm: jsonNumber,
  round: z.number(),
});
export type MeshFacts = z.output<typeof meshFactsSchema>;

/** One comparison of a plan's `compare`: `path` − `baseline`, per percentile (summary.comparisons). */
export const pathPairSchema = z.object({ path: z.string(), baseline: z.string() });
export type PathPair = z.output<typeof pathPairSchema>;

/** One within-path ratio of a plan's `ratios`, resolved per path: `probe` ÷ `baseline` (summary.ratios). */
export const probePairSchema = z.object({ path: z.string(), probe: z.string(), baseline: z.string() });
export type ProbePair = z.output<typeof probePairSchema>;

/** The ways of getting from a client to a target the selection table prices (core/cost.ts methodCost). */
export const METHODS = [
  'same-vpc',
  'vpc-peering',
  'transit-gateway',
  'privatelink',
  'nlb',
  'service-connect',
  'lattice',
  'nat-gateway',
  'internet',
  'direct',
] as const;
export type Method = (typeof METHODS)[number];

/**
 * The order a run measures its paths in: as written, reversed, rotated by one more each run, or
 * shuffled (seeded; functions/pipeline/path-order.ts). Rotation and shuffle take the run's index.
 */
export const ORDER_MODES = ['as-written', 'reversed', 'rotated', 'shuffled'] as const;
export type OrderMode = (typeof ORDER_MODES)[number];
export const pathOrderSchema = z.object({ mode: z.enum(ORDER_MODES), seed: z.number().int().optional() });
export type PathOrder = z.output<typeof pathOrderSchema>;

/**
 * What a plan may set of the regression rule: the smallest change called a regression, as a
 * share of the baseline (`minRelative`) and, for time metrics, in milliseconds (`minAbsoluteMs`:
 * the run-to-run noise floor of the plan's hosts).
 */
export const regressionSettingsSchema = z.object({
  minRelative: z.number().optional(),
  minAbsoluteMs: z.number().optional(),
  /** The path every other path is judged against: a shift of it is the whole run's. */
  reference: z.string().optional(),
  /** Every other path's http probes also measure the reference's target, alternating (the probe's `pair`). */
  paired: z.boolean().optional(),
  /** Runs in a row a change must persist before it is called a regression (1: at once). */
  persistence: z.number().int().optional(),
});
export type RegressionSettings = z.output<typeof regressionSettingsSchema>;

/** A path after defaults were merged in: everything the pipeline needs, nothing optional left. */
export const resolvedPathSchema = z.object({
  id: z.string(),
  label: z.string(),
  client: clientRefSchema,
  target: targetSchema,
  routes: z.array(routeEntrySchema),
  probes: z.array(probeSpecSchema),
  /** Probes named in the plan's skipProbes (by name or kind), with the reason. */
  skipped: z.array(skippedProbeSchema),
  reboot: z.boolean(),
  creditWaitSeconds: z.number(),
  /** A mesh pair's facts (`plan mesh`): regions, great-circle distance, round. */
  mesh: meshFactsSchema.optional(),
  /** The AZ pair the path measures, when the plan says (AZ-pair plans). */
  az: azPairSchema.optional(),
  /** How the path gets to its target, when the plan says (else inferred: core/cost.ts pathMethod). */
  method: z.enum(METHODS).optional(),
});
export type ResolvedPath = z.output<typeof resolvedPathSchema>;

export const resolvedPlanSchema = z.object({
  name: z.string(),
  paths: z.array(resolvedPathSchema),
  /** The comparisons to report: the plan's `compare`, or every other path vs the first; absent when there are none. */
  compare: z.array(pathPairSchema).optional(),
  /** Within-path ratios, one per path that has both probes (the plan's `ratios`). */
  ratios: z.array(probePairSchema).optional(),
  /** The order the paths run in; absent: as written. */
  order: pathOrderSchema.optional(),
  /** The plan's own cost ceiling in USD (core/cost.ts). */
  budgetUsd: z.number().optional(),
  /** The plan's own thresholds for regression detection (functions/pipeline/regressions.ts). */
  regression: regressionSettingsSchema.optional(),
});
export type ResolvedPlan = z.output<typeof resolvedPlanSchema>;

/** `runs/run=<id>/plan.json`: the plan as the execution received it (`source`, unchecked) and resolved. */
export const storedPlanSchema = z.object({ source: z.unknown().optional(), resolved: resolvedPlanSchema });
export type StoredPlan = z.output<typeof storedPlanSchema>;

/** The run's resolved plan as ValidatePlan stored it; undefined when there is none. */
export async function readResolvedPlan(store: DocumentStore, runId: string): Promise<ResolvedPlan | undefined> {
  return (await readStored(store, keys.plan(runId), storedPlanSchema, 'resolved plan'))?.resolved;
}
