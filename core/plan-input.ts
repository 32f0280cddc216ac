/**
 * The plan as written (`plans/*.json`, docs/data.md "Plan file"): its zod schema, each field with
 * a message that says what was expected and what was received. Every object is strict, so a typo
 * ("targte") is a problem, not a silent default. Rules across fields are core/plan-checks.ts,
 * resolving defaults core/plan-resolve.ts, the entry points core/plan.ts.
 */
import { z } from 'zod';
import { probeInputSchema } from '../probes/index.js';
import { intIn, matching, quoted, safeId, typeName } from './fields.js';
import { firstUnprintable } from './printable.js';
import { METHODS, ORDER_MODES, type RouteVia, targetSchema, VIA_KEYS, type ViaKey } from './resolved-plan.js';

/** Plan names may contain spaces (they are shown, not used as keys). */
export const PLAN_NAME = /^[A-Za-z0-9][A-Za-z0-9 _.-]{0,99}$/;

const MAX_LABEL = 200;
const MAX_REASON = 500;

/** Cloud ids (and lab next-hop addresses) for AWS calls and `ip` commands: dots, but no spaces or shell syntax. */
const CLOUD_ID = /^[A-Za-z0-9._-]+$/;
const MAX_CLOUD_ID = 128;
const cloudId = matching(
  CLOUD_ID,
  `a non-empty id (letters, digits, ".", "_", "-", at most ${MAX_CLOUD_ID} characters)`,
  MAX_CLOUD_ID,
);

// ---------------------------------------------------------------------------------------------
// Field validators that are more than a regex.

/** Why an IPv4 CIDR is not acceptable, or undefined when it is. Host bits must be zero. */
export function cidrProblem(cidr: string): string | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(cidr);
  const expected = `expected an IPv4 CIDR such as "10.1.0.0/16", got ${quoted(cidr)}`;
  if (!m) return expected;
  const parts = m.slice(1, 5);
  if (parts.some((p) => (p.length > 1 && p.startsWith('0')) || Number(p) > 255)) return expected;
  const prefix = Number(m[5]);
  if (prefix > 32 || (m[5].length > 1 && m[5].startsWith('0'))) return expected;
  const addr = parts.reduce((acc, p) => acc * 256 + Number(p), 0);
  const size = 2 ** (32 - prefix);
  const network = Math.floor(addr / size) * size;
  if (network !== addr) {
    const octets = [24, 16, 8, 0].map((s) => Math.floor(network / 2 ** s) % 256);
    return `host bits are set in ${quoted(cidr)} (did you mean "${octets.join('.')}/${prefix}"?)`;
  }
  return undefined;
}

/**
 * An EC2 instance reached through SSM (the default client kind). Its id names objects
 * (`client=<id>`, core/keys.ts), so it is a safe id, as EC2's `i-…` ids are.
 */
const instanceClientSchema = z.strictObject({
  kind: z.literal('ec2-instance').optional(),
  instanceId: safeId,
  region: cloudId,
});

/** SQS queue URLs: https on AWS; http on loopback for the local driver's queue (local/local-queue.ts). */
const QUEUE_URL =
  /^(https:\/\/sqs\.[a-z0-9-]+\.amazonaws\.com(\.cn)?|http:\/\/(127\.0\.0\.1|localhost):\d{1,5})\/\d{12}\/[A-Za-z0-9_-]{1,80}$/;

/**
 * A long-running task of an ECS service that receives probe specs from its own SQS queue
 * (docs/aws.md, "Clients inside an ECS task"). Service Connect only exists inside tasks of a
 * service, so a path through it must start in one.
 */
const taskClientSchema = z.strictObject({
  kind: z.literal('ecs-task'),
  cluster: cloudId,
  // The service name stands for the client in object keys (core/ecs-client.ts): a safe id.
  service: safeId,
  queueUrl: matching(
    QUEUE_URL,
    'an SQS queue URL such as "https://sqs.ap-northeast-1.amazonaws.com/123456789012/pathbench-client-svc"',
    512,
  ).optional(),
  region: cloudId,
});

const clientSchema = z.union([instanceClientSchema, taskClientSchema], {
  error: () =>
    'expected { "instanceId", "region" } (an EC2 instance) or { "kind": "ecs-task", "cluster", "service", "region", "queueUrl"? } (a task of an ECS service)',
});

/**
 * The highest mesh round number: far above what a mesh's parent execution can hold (about
 * 3,000 rounds of history, functions/pipeline/limits.ts), low enough that laying out the rounds
 * costs nothing before the limits judge them.
 */
export const MAX_MESH_ROUND = 9_999;

/** A mesh pair's facts (`plan mesh`): client and target regions, great-circle distance, round. */
const meshSchema = z.strictObject({
  from: cloudId,
  to: cloudId,
  distanceKm: z.number().nonnegative(),
  round: intIn(0, MAX_MESH_ROUND),
});

const viaSchema = z
  .strictObject({
    vpcPeeringConnectionId: cloudId.optional(),
    transitGatewayId: cloudId.optional(),
    gatewayId: cloudId.optional(),
    natGatewayId: cloudId.optional(),
    networkInterfaceId: cloudId.optional(),
    vpcEndpointId: cloudId.optional(),
    labNextHop: cloudId.optional(),
  })
  .refine((v) => VIA_KEYS.filter((k) => v[k] !== undefined).length === 1, {
    error: (iss) => {
      const given = VIA_KEYS.filter((k) => (iss.input as Record<string, unknown>)[k] !== undefined);
      const got = given.length === 0 ? 'none' : `${given.length} (${given.join(', ')})`;
      return `expected exactly one target (${VIA_KEYS.join(', ')}), got ${got}`;
    },
  })
  .transform((v): RouteVia => {
    const key = VIA_KEYS.find((k) => v[k] !== undefined)!;
    return toVia(key, v[key]!);
  });

function toVia(key: ViaKey, id: string): RouteVia {
  switch (key) {
    case 'vpcPeeringConnectionId':
      return { vpcPeeringConnectionId: id };
    case 'transitGatewayId':
      return { transitGatewayId: id };
    case 'gatewayId':
      return { gatewayId: id };
    case 'natGatewayId':
      return { natGatewayId: id };
    case 'networkInterfaceId':
      return { networkInterfaceId: id };
    case 'vpcEndpointId':
      return { vpcEndpointId: id };
    case 'labNextHop':
      return { labNextHop: id };
  }
}

const routeSchema = z.strictObject({
  region: cloudId,
  routeTableId: cloudId,
  destination: z.string().superRefine((s, ctx) => {
    const problem = cidrProblem(s);
    if (problem) ctx.addIssue({ code: 'custom', message: problem, input: s });
  }),
  via: viaSchema,
});

/**
 * Free text that reaches terminals, Markdown, CSV and HTML (labels, skip reasons): non-empty,
 * bounded, and plain — no control characters (terminal escapes), no bidi overrides or other
 * invisible format characters (text that reads differently from what it is).
 */
function plainText(what: string, max: number) {
  return z.string().superRefine((s, ctx) => {
    const bad = firstUnprintable(s);
    if (bad)
      ctx.addIssue({
        code: 'custom',
        input: s,
        message: `expected ${what} of plain text, got ${bad}: a control, bidirectional or invisible formatting character`,
      });
    else if (s.trim().length === 0 || s.length > max)
      ctx.addIssue({ code: 'custom', input: s, message: `expected a non-empty ${what} (at most ${max} characters)` });
  });
}

const skipSchema = z.strictObject({
  probe: z.string().min(1, { error: 'expected a probe name or kind, got an empty string' }),
  reason: plainText('reason', MAX_REASON),
});

const labelSchema = plainText('label', MAX_LABEL);

const reboot = z.boolean();
const creditWaitSeconds = intIn(0, 86_400);

const defaultsSchema = z.strictObject({
  reboot: reboot.optional(),
  creditWaitSeconds: creditWaitSeconds.optional(),
  probes: z.array(probeInputSchema).optional(),
  client: clientSchema.optional(),
});

/** One end of an AZ pair: a region and an AZ id such as "apne1-az1" (AZ names differ per account, AZ ids do not). */
const azEndInputSchema = z.strictObject({
  region: cloudId,
  azId: matching(
    /^[a-z]{2,}[0-9]*-az[0-9]+$/,
    'an AZ id such as "apne1-az1" (not an AZ name such as "ap-northeast-1a")',
    32,
  ),
});
/** The AZ pair a path measures (AZ-pair plans): carried into the manifest and the summary. */
const azPairInputSchema = z.strictObject({ from: azEndInputSchema, to: azEndInputSchema });

const pathSchema = z.strictObject({
  id: safeId,
  label: labelSchema.optional(),
  client: clientSchema.optional(),
  target: targetSchema,
  routes: z.array(routeSchema).optional(),
  probes: z.array(probeInputSchema).optional(),
  skipProbes: z.array(skipSchema).optional(),
  reboot: reboot.optional(),
  creditWaitSeconds: creditWaitSeconds.optional(),
  mesh: meshSchema.optional(),
  az: azPairInputSchema.optional(),
  method: z.enum(METHODS, { error: () => `expected one of ${METHODS.join(', ')}` }).optional(),
});

/** One comparison: `path` − `baseline` (both path ids of the plan; a path may be its own baseline). */
const compareSchema = z.strictObject({ path: safeId, baseline: safeId });

/** One ratio: `probe` ÷ `baseline`, two probes (or matrix cells) of one path; without `path`, of every path that has both. */
const ratioInputSchema = z.strictObject({ path: safeId.optional(), probe: safeId, baseline: safeId });

/** The plan as written (before defaults are merged into paths). */
export const planInputSchema = z.strictObject({
  name: matching(
    PLAN_NAME,
    'a plan name (1–100 letters, digits, spaces, "_", ".", "-", starting with a letter or digit)',
  ),
  defaults: defaultsSchema.optional(),
  paths: z.array(pathSchema).min(1, { error: 'at least one path is required' }),
  /** Comparisons to report; without it every other path is compared with the first. */
  compare: z.array(compareSchema).optional(),
  /** Within-path ratios to report (summary.ratios); names are probe names after matrix cells are expanded. */
  ratios: z.array(ratioInputSchema).optional(),
  /** The order paths run in, per run: as written (default), reversed, rotated or shuffled (with `orderSeed`). */
  order: z.enum(ORDER_MODES, { error: () => `expected one of ${ORDER_MODES.join(', ')}` }).optional(),
  /** The seed of a shuffled order (any integer; the run's index varies the order from run to run). */
  orderSeed: z.number().int({ error: 'expected an integer' }).optional(),
  /** The most this plan's run may cost (USD, the estimate of core/cost.ts); over it is refused. */
  budgetUsd: z
    .number({
      error: (iss) =>
        typeof iss.input === 'number'
          ? `expected a finite positive amount in USD, got ${iss.input}`
          : `expected a positive amount in USD, got ${typeName(iss.input)}`,
    })
    .positive({ error: 'expected a positive amount in USD' })
    .optional(),
  /** The plan's own regression thresholds (functions/pipeline/regressions.ts); unset: the rule's defaults. */
  regression: z
    .strictObject({
      minRelative: z
        .number()
        .min(0, { error: 'expected a share between 0 and 1' })
        .max(1, { error: 'expected a share between 0 and 1' })
        .optional(),
      minAbsoluteMs: z
        .number()
        .min(0, { error: 'expected milliseconds ≥ 0' })
        .max(60_000, { error: 'expected milliseconds ≤ 60000' })
        .optional(),
      /** A path of the plan whose shift is taken for the whole run's (a same-AZ path, as seed 004 has). */
      reference: safeId.optional(),
      /**
       * Measure the reference inside every other path's http probe: the probe alternates one
       * request to its own target with one to the reference path's, on the same client, and each
       * path is judged by its difference from the reference measured in the same moments.
       * Needs `reference`.
       */
      paired: z.boolean().optional(),
      /** Runs in a row a change must persist before it is called a regression (1: at once). */
      persistence: intIn(1, 5).optional(),
    })
    .optional(),
});
export type PlanInput = z.output<typeof planInputSchema>;
