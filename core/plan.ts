/**
 * The plan model: validates a plan (parsed JSON) with zod, reports every problem at once as
 * "dotted.path[i]: what is wrong", and resolves defaults into a ResolvedPlan whose paths carry
 * everything the pipeline needs. Pure: reading a plan file is cli/plan-file.ts.
 */
import { z } from 'zod';
import { type MatrixAxes, matrixCells } from '../probes/http/http.schema.js';
import { PROBE_KINDS, type ProbeInput, type ProbeKind, type ProbeSpec, probeInputSchema } from '../probes/index.js';
import { IPERF3_UDP_DEFAULT_BITRATE } from '../probes/iperf3/iperf3.schema.js';
import { type PlanClient, resolveClient } from './ecs-client.js';
import { PlanInvalidError } from './errors.js';
import { type Issue, intIn, matching, quoted, SAFE_ID, safeId, shown, typeName } from './fields.js';
import {
  type AgentSpec,
  agentSpecSchema,
  type PathPair,
  type PlanResult,
  type ResolvedPath,
  type ResolvedPlan,
  type RouteVia,
  type SkippedProbe,
  targetSchema,
} from './model.js';
import { firstUnprintable, printable } from './printable.js';

export { isValidHost } from './fields.js';

/** Plan names may contain spaces (they are shown, not used as keys). */
export const PLAN_NAME = /^[A-Za-z0-9][A-Za-z0-9 _.-]{0,99}$/;

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

// ---------------------------------------------------------------------------------------------
// Schemas. Every object is strict so that a typo ("targte") is a problem, not a silent default.

/** An EC2 instance reached through SSM (the default client kind). */
const instanceClientSchema = z.strictObject({
  kind: z.literal('ec2-instance').optional(),
  instanceId: cloudId,
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
  service: cloudId,
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

/** A mesh pair's facts (`plan mesh`): client and target regions, great-circle distance, round. */
const meshSchema = z.strictObject({
  from: cloudId,
  to: cloudId,
  distanceKm: z.number().nonnegative(),
  round: z.number().int().nonnegative(),
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
const azEndSchema = z.strictObject({
  region: cloudId,
  azId: matching(
    /^[a-z]{2,}[0-9]*-az[0-9]+$/,
    'an AZ id such as "apne1-az1" (not an AZ name such as "ap-northeast-1a")',
    32,
  ),
});
/** The AZ pair a path measures (AZ-pair plans): carried into the manifest and the summary. */
const azPairSchema = z.strictObject({ from: azEndSchema, to: azEndSchema });

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
  az: azPairSchema.optional(),
});

/** One comparison: `path` − `baseline` (both path ids of the plan; a path may be its own baseline). */
const compareSchema = z.strictObject({ path: safeId, baseline: safeId });

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
  /** The most this plan's run may cost (USD, the estimate of core/cost.ts); over it is refused. */
  budgetUsd: z.number().positive({ error: 'expected a positive amount in USD' }).optional(),
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
    })
    .optional(),
});
export type PlanInput = z.output<typeof planInputSchema>;

// ---------------------------------------------------------------------------------------------
// zod issues → problems.

type Key = PropertyKey;
interface Problem {
  path: readonly Key[];
  message: string;
}

/** Render a zod-style path as `paths[2].target.port`; the empty path is the document itself (`root`). */
export function formatPath(path: readonly Key[], root = 'plan'): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else {
      const s = String(key);
      if (/^[A-Za-z_$][\w$]*$/.test(s)) out += out ? `.${s}` : s;
      else out += `[${printable(JSON.stringify(s))}]`;
    }
  }
  return out || root;
}

const KINDS_LIST = PROBE_KINDS.join(', ');

/** Messages for issues whose field carries no message of its own. */
function fallbackMessage(iss: Issue): string | undefined {
  switch (iss.code) {
    case 'invalid_type':
      return iss.input === undefined ? 'required' : `expected ${iss.expected}, got ${typeName(iss.input)}`;
    case 'invalid_value': {
      const allowed = iss.values.map((v) => JSON.stringify(v)).join(' or ');
      return `expected ${allowed}, got ${typeof iss.input === 'string' ? quoted(iss.input) : shown(iss.input)}`;
    }
    case 'invalid_union': {
      // discriminatedUnion puts the probe object in `input` and "kind" at the end of the path.
      if (iss.discriminator !== undefined) {
        const kind = (iss.input as Record<string, unknown> | undefined)?.[iss.discriminator];
        if (kind === undefined) return `required (expected ${KINDS_LIST})`;
        if (typeof kind !== 'string') return `expected one of ${KINDS_LIST}, got ${typeName(kind)}`;
        return `unknown probe kind ${quoted(kind)} (expected ${KINDS_LIST})`;
      }
      return 'does not match any allowed shape';
    }
    case 'too_small':
      if (iss.origin === 'string') return 'expected a non-empty string';
      if (iss.origin === 'array') return `expected at least ${iss.minimum} item(s)`;
      return undefined;
    default:
      return undefined;
  }
}

function issueProblems(issues: readonly z.core.$ZodIssue[]): Problem[] {
  const out: Problem[] = [];
  for (const iss of issues) {
    if (iss.code === 'unrecognized_keys') {
      // One problem per key, at the key itself, so the typo is the first thing the reader sees.
      for (const key of iss.keys)
        out.push({ path: [...iss.path, key], message: `unknown field ${printable(JSON.stringify(key))}` });
    } else {
      out.push({ path: iss.path, message: iss.message });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Cross-field rules. They run on the raw input so they still report when other fields are bad.

type Rec = Record<string, unknown>;
const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
const isKind = (v: unknown): v is ProbeKind => typeof v === 'string' && (PROBE_KINDS as readonly string[]).includes(v);

/**
 * Names for a path's probes: an explicit name wins; an unnamed probe gets its kind, then
 * "kind-2", "kind-3" … for further unnamed probes of that kind, skipping names already taken
 * explicitly. Entries without a usable kind get undefined.
 */
export function probeNames(probes: readonly unknown[]): (string | undefined)[] {
  const taken = new Set<string>();
  for (const p of probes) if (isRecord(p) && typeof p.name === 'string') taken.add(p.name);
  const next = new Map<string, number>();
  return probes.map((p) => {
    if (!isRecord(p)) return undefined;
    if (typeof p.name === 'string') return p.name;
    if (!isKind(p.kind)) return undefined;
    let n = next.get(p.kind) ?? 1;
    let name = n === 1 ? p.kind : `${p.kind}-${n}`;
    while (taken.has(name)) {
      n += 1;
      name = `${p.kind}-${n}`;
    }
    next.set(p.kind, n + 1);
    taken.add(name);
    return name;
  });
}

/** The probes a path ends up with (its own replace the defaults entirely) and where they came from. */
function effectiveProbes(path: Rec, defaults: Rec | undefined): { items: unknown; base: Key[] } | undefined {
  if (path.probes !== undefined) return { items: path.probes, base: ['probes'] };
  if (defaults?.probes !== undefined) return { items: defaults.probes, base: ['defaults', 'probes'] };
  return undefined;
}

function crossProblems(raw: unknown): Problem[] {
  const out: Problem[] = [];
  if (!isRecord(raw)) return out;
  const defaults = isRecord(raw.defaults) ? raw.defaults : undefined;
  const paths = Array.isArray(raw.paths) ? raw.paths : [];

  // Path ids become S3 keys and local directory names; the latter collide by case on macOS.
  const seen = new Map<string, { index: number; id: string }>();
  paths.forEach((p, i) => {
    if (!isRecord(p) || typeof p.id !== 'string') return;
    const prev = seen.get(p.id.toLowerCase());
    if (!prev) seen.set(p.id.toLowerCase(), { index: i, id: p.id });
    else if (prev.id === p.id)
      out.push({ path: ['paths', i, 'id'], message: `duplicate path id ${quoted(p.id)} (also paths[${prev.index}])` });
    else
      out.push({
        path: ['paths', i, 'id'],
        message: `path id ${quoted(p.id)} differs from ${quoted(prev.id)} (paths[${prev.index}]) only by case`,
      });
  });

  out.push(...compareProblems(raw.compare, paths));
  out.push(...meshProblems(paths));

  paths.forEach((p, i) => {
    if (!isRecord(p)) return;
    const at = (...rest: Key[]): Key[] => ['paths', i, ...rest];

    if (p.client === undefined && defaults?.client === undefined)
      out.push({ path: at('client'), message: 'required (set it on the path or in defaults.client)' });
    const client = isRecord(p.client) ? p.client : isRecord(defaults?.client) ? defaults.client : undefined;
    const reboots = p.reboot ?? defaults?.reboot;
    if (client?.kind === 'ecs-task' && reboots === true)
      out.push({
        path: at('reboot'),
        message:
          'a task client (kind "ecs-task") cannot be rebooted: its task is replaced, not restarted, and its host is shared; set reboot: false (a credit wait still applies)',
      });

    const eff = effectiveProbes(p, defaults);
    if (!eff) {
      out.push({ path: at('probes'), message: 'required (set probes on the path or in defaults.probes)' });
      return;
    }
    if (!Array.isArray(eff.items)) return; // a type problem zod already reported
    const fromPath = eff.base.length === 1;
    const base = fromPath ? at('probes') : eff.base;
    if (eff.items.length === 0) {
      out.push({
        path: at('probes'),
        message: fromPath
          ? 'no probes (an empty list replaces defaults.probes)'
          : 'no probes (defaults.probes is empty)',
      });
      return;
    }

    const names = probeNames(eff.items);
    const firstByName = new Map<string, number>();
    names.forEach((name, j) => {
      if (name === undefined) return;
      const item = eff.items as unknown[];
      const kind = isRecord(item[j]) ? item[j].kind : undefined;
      // A name equal to another kind would make skipProbes ambiguous ("http" = name or kind?).
      if (isKind(name) && isKind(kind) && name !== kind)
        out.push({ path: [...base, j, 'name'], message: `name ${quoted(name)} is a probe kind; use another name` });
      const prev = firstByName.get(name);
      if (prev === undefined) firstByName.set(name, j);
      else
        out.push({
          path: [...base, j, 'name'],
          message: `duplicate probe name ${quoted(name)} (also ${formatPath([...base, prev])})`,
        });
    });

    // A matrix's cells are probes named `<name>-<cell>`: each must be a safe name, and unique.
    names.forEach((name, j) => {
      const item = (eff.items as unknown[])[j];
      if (name === undefined || !isRecord(item) || item.kind !== 'http' || !isRecord(item.matrix)) return;
      const axes = item.matrix as MatrixAxes;
      const ok = (v: unknown) => v === undefined || Array.isArray(v);
      if (!ok(axes.keepAlive) || !ok(axes.concurrency) || !ok(axes.payloadBytes)) return; // zod says why
      const cells = matrixCells(
        {
          keepAlive: typeof item.keepAlive === 'boolean' ? item.keepAlive : true,
          concurrency: typeof item.concurrency === 'number' ? item.concurrency : 1,
          payloadBytes: typeof item.payloadBytes === 'number' ? item.payloadBytes : 1024,
        },
        axes,
      );
      for (const c of cells) {
        const full = `${name}-${c.cell}`;
        if (!SAFE_ID.test(full))
          out.push({
            path: [...base, j, 'name'],
            message: `matrix cell name ${quoted(full)} is longer than 63 characters; use a shorter probe name`,
          });
        else if (firstByName.has(full))
          out.push({
            path: [...base, j, 'matrix'],
            message: `matrix cell ${quoted(full)} has the name of another probe (${formatPath([...base, firstByName.get(full)!])})`,
          });
      }
    });

    if (!Array.isArray(p.skipProbes)) return;
    const items = eff.items as unknown[];
    const known = names.filter((n): n is string => n !== undefined);
    p.skipProbes.forEach((skip, j) => {
      if (!isRecord(skip) || typeof skip.probe !== 'string' || skip.probe === '') return;
      const target = skip.probe;
      const hits = items.filter((item, k) => names[k] === target || (isRecord(item) && item.kind === target));
      if (hits.length === 0)
        out.push({
          path: at('skipProbes', j, 'probe'),
          message: `${quoted(target)} matches no probe name or kind in this path (probes: ${printable(known.join(', ')) || 'none'})`,
        });
    });
  });
  return out;
}

/**
 * A mesh plan (paths with `mesh`) is all mesh: its paths run in rounds, and a round must not
 * put one region in two tests at once.
 */
function meshProblems(paths: unknown[]): Problem[] {
  const meshOf = (p: unknown) => (isRecord(p) && isRecord(p.mesh) ? p.mesh : undefined);
  const withMesh = paths.filter((p) => meshOf(p) !== undefined).length;
  if (withMesh === 0) return [];
  const out: Problem[] = [];
  const busy = new Map<string, number>(); // "round region" → path index
  paths.forEach((p, i) => {
    const m = meshOf(p);
    if (!m) {
      out.push({
        path: ['paths', i, 'mesh'],
        message: `required: ${withMesh} of ${paths.length} paths are mesh pairs, and a plan is all mesh or none`,
      });
      return;
    }
    if (typeof m.round !== 'number') return;
    for (const side of ['from', 'to'] as const) {
      const region = m[side];
      if (typeof region !== 'string') continue;
      const key = `${m.round} ${region}`;
      const prev = busy.get(key);
      if (prev === undefined) busy.set(key, i);
      else if (prev !== i)
        out.push({
          path: ['paths', i, 'mesh', side],
          message: `${quoted(region)} is already in a test of round ${m.round} (paths[${prev}]); a region takes part in one test a round`,
        });
    }
    if (m.from === m.to && typeof m.from === 'string')
      out.push({
        path: ['paths', i, 'mesh', 'to'],
        message: `expected another region than the client's, got ${quoted(m.from)}`,
      });
  });
  return out;
}

/** Each comparison names paths of this plan, once. */
function compareProblems(compare: unknown, paths: unknown[]): Problem[] {
  if (!Array.isArray(compare)) return [];
  const ids = paths
    .filter(isRecord)
    .map((p) => p.id)
    .filter((id): id is string => typeof id === 'string');
  const out: Problem[] = [];
  const first = new Map<string, number>();
  compare.forEach((c, i) => {
    if (!isRecord(c)) return;
    for (const field of ['path', 'baseline'] as const) {
      const id = c[field];
      if (typeof id === 'string' && id !== '' && !ids.includes(id))
        out.push({
          path: ['compare', i, field],
          message: `${quoted(id)} is not a path of this plan (paths: ${printable(ids.join(', ')) || 'none'})`,
        });
    }
    const key = JSON.stringify([c.path, c.baseline]);
    const prev = first.get(key);
    if (prev === undefined) first.set(key, i);
    else out.push({ path: ['compare', i], message: `duplicate comparison (also compare[${prev}])` });
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Resolution (only reached when there are no problems).

/** The plan's comparisons, or every other path vs the first path. */
function resolveCompare(plan: PlanInput): PathPair[] {
  if (plan.compare) return plan.compare.map((c) => ({ path: c.path, baseline: c.baseline }));
  const [first, ...rest] = plan.paths;
  return rest.map((p) => ({ path: p.id, baseline: first.id }));
}

function resolveProbe(p: ProbeInput, name: string): ProbeSpec[] {
  if (p.kind === 'http' && p.matrix) {
    const { matrix, cell: _cell, ...rest } = p;
    return matrixCells(rest, matrix).map(({ cell, ...axes }) =>
      Object.assign({ kind: p.kind, name: `${name}-${cell}` }, rest, axes, {
        name: `${name}-${cell}`,
        matrix: name,
        cell,
      }),
    );
  }
  // kind and name lead so specs and reports read naturally; the spread keeps every defaulted option.
  const probe: ProbeSpec = Object.assign({ kind: p.kind, name }, p, { name }) as ProbeSpec;
  if (probe.kind === 'iperf3' && probe.mode === 'udp' && probe.bitrate === undefined)
    probe.bitrate = IPERF3_UDP_DEFAULT_BITRATE;
  return [probe];
}

function resolvePaths(plan: PlanInput): ResolvedPath[] {
  const d = plan.defaults ?? {};
  return plan.paths.map((p): ResolvedPath => {
    const inputs = p.probes ?? d.probes ?? [];
    const names = probeNames(inputs);
    const all = inputs.flatMap((probe, j) => resolveProbe(probe, names[j]!));
    const skips = p.skipProbes ?? [];
    const probes: ProbeSpec[] = [];
    const skipped: SkippedProbe[] = [];
    for (const probe of all) {
      // A skip by exact name is more specific than a skip by kind, so its reason wins.
      // A matrix's cells are skipped by the matrix's name too.
      const skip =
        skips.find((s) => s.probe === probe.name) ??
        (probe.kind === 'http' && probe.matrix ? skips.find((s) => s.probe === probe.matrix) : undefined) ??
        skips.find((s) => s.probe === probe.kind);
      if (skip) skipped.push({ name: probe.name, kind: probe.kind, reason: skip.reason });
      else probes.push(probe);
    }
    const client = resolveClient((p.client ?? d.client) as PlanClient);
    const path: ResolvedPath = {
      id: p.id,
      label: p.label ?? p.id,
      client,
      target: { host: p.target.host, port: p.target.port },
      routes: p.routes ?? [],
      probes,
      skipped,
      reboot: p.reboot ?? d.reboot ?? false,
      creditWaitSeconds: p.creditWaitSeconds ?? d.creditWaitSeconds ?? 0,
      ...(p.mesh ? { mesh: { ...p.mesh } } : {}),
    };
    if (p.mesh) path.mesh = { ...p.mesh };
    if (p.az) path.az = { from: { ...p.az.from }, to: { ...p.az.to } };
    return path;
  });
}

// ---------------------------------------------------------------------------------------------
// Public entry points.

/**
 * Validate a plan (already parsed from JSON) and resolve its defaults.
 * Returns every problem at once, each as "dotted.path[i]: what is wrong"; never throws for bad input.
 */
export function parsePlan(input: unknown): PlanResult {
  const parsed = planInputSchema.safeParse(input, { error: fallbackMessage });
  const problems = [...(parsed.success ? [] : issueProblems(parsed.error.issues)), ...crossProblems(input)];
  if (problems.length > 0 || !parsed.success) {
    const lines = inDocumentOrder(input, problems).map((p) => `${formatPath(p.path)}: ${p.message}`);
    return { ok: false, problems: [...new Set(lines)] };
  }
  const plan: ResolvedPlan = { name: parsed.data.name, paths: resolvePaths(parsed.data) };
  const compare = resolveCompare(parsed.data);
  if (compare.length > 0) plan.compare = compare;
  if (parsed.data.budgetUsd !== undefined) plan.budgetUsd = parsed.data.budgetUsd;
  if (parsed.data.regression && Object.keys(parsed.data.regression).length > 0)
    plan.regression = { ...parsed.data.regression };
  return { ok: true, plan };
}

export type SpecResult = { ok: true; spec: AgentSpec } | { ok: false; problems: string[] };

/**
 * Validate an agent spec (parsed JSON; the agent's `run --spec`) against the same probe schemas
 * the plan's probes resolve into. Returns every problem, in the order the fields are written,
 * each as "dotted.path[i]: what is wrong"; never throws for bad input.
 */
export function parseAgentSpec(input: unknown): SpecResult {
  if (!isRecord(input)) return { ok: false, problems: [`expected a JSON object, got ${typeName(input)}`] };
  const parsed = agentSpecSchema.safeParse(input, { error: fallbackMessage });
  if (parsed.success) return { ok: true, spec: parsed.data };
  const lines = inDocumentOrder(input, issueProblems(parsed.error.issues)).map(
    (p) => `${formatPath(p.path, 'spec')}: ${p.message}`,
  );
  return { ok: false, problems: [...new Set(lines)] };
}

/**
 * Like {@link parsePlan}, for callers that want an exception: returns the resolved plan or
 * throws PlanInvalidError carrying every problem.
 */
export function requirePlan(input: unknown): ResolvedPlan {
  const result = parsePlan(input);
  if (!result.ok) throw new PlanInvalidError(result.problems);
  return result.plan;
}

/**
 * Where a field sits in the written plan: array indices, and for object keys their position in
 * the object as written (a missing key sorts after the present ones).
 */
function documentPosition(raw: unknown, path: readonly Key[]): number[] {
  const out: number[] = [];
  let node = raw;
  for (const key of path) {
    if (typeof key === 'number') {
      out.push(key);
      node = Array.isArray(node) ? node[key] : undefined;
    } else {
      const keys = isRecord(node) ? Object.keys(node) : [];
      const at = keys.indexOf(String(key));
      out.push(at === -1 ? keys.length : at);
      node = isRecord(node) ? node[String(key)] : undefined;
    }
  }
  return out;
}

/** Problems sorted as the fields appear in the plan, so each path's problems read together. */
function inDocumentOrder(raw: unknown, problems: readonly Problem[]): Problem[] {
  const keyed = problems.map((p) => ({ p, pos: documentPosition(raw, p.path) }));
  keyed.sort((a, b) => {
    for (let i = 0; i < Math.min(a.pos.length, b.pos.length); i++)
      if (a.pos[i] !== b.pos[i]) return a.pos[i] - b.pos[i];
    return a.pos.length - b.pos.length;
  });
  return keyed.map((k) => k.p);
}

/**
 * Parse a plan file's text (JSON) with {@link parsePlan}; invalid JSON is reported as a problem
 * ("plan: not valid JSON (reason)"). Reading the file is the caller's (cli/plan-file.ts).
 */
export function parsePlanText(text: string): PlanResult {
  let json: unknown;
  try {
    // Editors on some systems prepend a byte-order mark, which JSON.parse refuses.
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (e: unknown) {
    return { ok: false, problems: [`plan: not valid JSON (${printable(e instanceof Error ? e.message : String(e))})`] };
  }
  return parsePlan(json);
}

/** Problems as printable text: a count line, then one problem per line, indented. */
export function formatProblems(problems: readonly string[]): string {
  const head = `plan has ${problems.length} problem${problems.length === 1 ? '' : 's'}:`;
  return [head, ...problems.map((p) => `  ${p}`)].join('\n');
}
