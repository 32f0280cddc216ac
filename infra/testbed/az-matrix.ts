/**
 * AZ-pair plans (`pathbench plan az-matrix`): from a list of hosts, each with its region and AZ
 * id, a plan with one path per ordered pair of AZs (the first host of each AZ) and the same-AZ
 * references (the first host of an AZ ↔ each further host in that AZ, both directions). AZ ids,
 * not AZ names: names are shuffled per account, ids are not. Path ids carry the AZ ids
 * (`apne1-az1_to_apne1-az2`, `apne1-az1_to_apne1-az1-ref`) and each path the pair's AZ facts
 * (`az`, into the manifest and the summary's AZ-pair table). The hosts come from a testbed's
 * outputs (`TestbedAzHosts`, one JSON list per stack, written by the seed-004 testbed) or from a
 * host list file. Pure.
 */
import { z } from 'zod';
import { PathbenchError } from '../../core/errors.js';
import type { AzPair } from '../../core/resolved-plan.js';
import { TARGET_PORTS } from '../../core/target-ports.js';

/** The output key under which each seed-004 testbed stack lists its hosts (a JSON array of AzHost). */
export const AZ_HOSTS_OUTPUT = 'TestbedAzHosts';

/** Probes an AZ-pair plan can carry: Debian's sockperf, or the agent's own ping-pong probe. */
export const AZ_MATRIX_PROBES = ['sockperf', 'pingpong'] as const;
export type AzMatrixProbe = (typeof AZ_MATRIX_PROBES)[number];
/**
 * The default probe: the agent's native ping-pong helper (probes/native/pingpong.c), compiled on
 * the client; sockperf only where it is installed (AL2023 hosts lack it).
 */
export const DEFAULT_AZ_MATRIX_PROBE: AzMatrixProbe = 'pingpong';

const AZ_ID = /^[a-z]{2,}[0-9]*-az[0-9]+$/;
const SAFE = /^[A-Za-z0-9._-]+$/;

const hostSchema = z.strictObject({
  /** A short name for labels (e.g. "tokyo-az1-ref"); default: the AZ id. */
  name: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9 ._-]{0,62}$/, 'expected a short host name')
    .optional(),
  region: z.string().regex(SAFE, 'expected a region such as "ap-northeast-1"'),
  azId: z.string().regex(AZ_ID, 'expected an AZ id such as "apne1-az1" (not an AZ name such as "ap-northeast-1a")'),
  /** The instance that runs the agent when this host is the client (a lab namespace in the lab). */
  instanceId: z.string().regex(SAFE, 'expected an instance id such as "i-0123456789abcdef0"'),
  /** The address the other hosts probe (private IP). */
  ip: z.string().min(1, "expected the host's private IP address"),
});
export type AzHost = z.output<typeof hostSchema>;

const hostListSchema = z.union([z.array(hostSchema), z.strictObject({ hosts: z.array(hostSchema) })]);

/** The host list or outputs cannot make an AZ-pair plan; `problems` lists each. */
export class AzMatrixError extends PathbenchError {
  constructor(readonly problems: string[]) {
    super(
      problems.length === 1
        ? `az-matrix: ${problems[0]}`
        : `az-matrix: ${problems.length} problems:\n${problems.map((p) => `  ${p}`).join('\n')}`,
    );
  }
}

/** Validate a host list (`[host…]` or `{ "hosts": [host…] }`). @throws AzMatrixError naming each bad field. */
export function parseHostList(input: unknown): AzHost[] {
  const r = hostListSchema.safeParse(input);
  if (!r.success) {
    // The array form's issues are the ones to show (they name the field); the union adds noise.
    const arr = z
      .array(hostSchema)
      .safeParse(Array.isArray(input) ? input : (input as { hosts?: unknown } | null)?.hosts);
    const issues = arr.success ? r.error.issues : arr.error.issues;
    throw new AzMatrixError(
      issues.map(
        (i) => `hosts${i.path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${String(k)}`)).join('')}: ${i.message}`,
      ),
    );
  }
  return Array.isArray(r.data) ? r.data : r.data.hosts;
}

/** The hosts every stack of a testbed outputs file lists under TestbedAzHosts, in stack order. */
export function hostsFromOutputs(outputs: Record<string, Record<string, string>>): AzHost[] {
  const all: unknown[] = [];
  const problems: string[] = [];
  for (const [stack, map] of Object.entries(outputs)) {
    const text = map?.[AZ_HOSTS_OUTPUT];
    if (typeof text !== 'string') continue;
    try {
      const list: unknown = JSON.parse(text);
      if (!Array.isArray(list)) throw new Error('not a JSON array');
      all.push(...list);
    } catch (e) {
      problems.push(`${stack}.${AZ_HOSTS_OUTPUT}: expected a JSON array of hosts (${(e as Error).message})`);
    }
  }
  if (problems.length) throw new AzMatrixError(problems);
  if (all.length === 0)
    throw new AzMatrixError([
      `no ${AZ_HOSTS_OUTPUT} output in any stack (expected the seed-004 testbed's outputs: cdk deploy -c testbed=seed-004 --outputs-file FILE)`,
    ]);
  return parseHostList(all);
}

export interface AzMatrixOptions {
  name?: string;
  probe?: AzMatrixProbe;
  /** Seconds per probe (seed 004: 60). */
  durationSeconds?: number;
  mode?: 'tcp' | 'udp';
  /** Also pair AZs of different regions (needs a network between the regions). Default: within a region only. */
  crossRegion?: boolean;
  /**
   * Each pair once (A→B, not B→A; the reference from its AZ's host only): half the paths, for
   * symmetric networks such as the lab twin.
   */
  unordered?: boolean;
}

export interface AzMatrixPlanJson {
  name: string;
  defaults: { reboot: boolean; creditWaitSeconds: number; probes: Record<string, unknown>[] };
  paths: {
    id: string;
    label: string;
    client: { instanceId: string; region: string };
    target: { host: string; port: number };
    az: AzPair;
  }[];
  compare?: { path: string; baseline: string }[];
}

interface Endpoint {
  host: AzHost;
  /** The AZ id, with "-ref", "-ref2" … for further hosts in the same AZ. */
  key: string;
  reference: boolean;
}

/** The hosts of each AZ: the first is the AZ's host, the rest its same-AZ references. */
function endpoints(hosts: readonly AzHost[]): Endpoint[] {
  const seen = new Map<string, number>();
  return hosts.map((host) => {
    const n = seen.get(host.azId) ?? 0;
    seen.set(host.azId, n + 1);
    return { host, key: n === 0 ? host.azId : `${host.azId}-ref${n === 1 ? '' : n}`, reference: n > 0 };
  });
}

/** "tokyo-a (apne1-az1)" when the host has a name of its own, else its AZ key. */
const who = (e: Endpoint) => (e.host.name && e.host.name !== e.key ? `${e.host.name} (${e.key})` : e.key);

/** The probe input for the chosen kind: round trips of fixed-size messages, every exchange logged. */
export function azMatrixProbe(
  kind: AzMatrixProbe,
  durationSeconds: number,
  mode: 'tcp' | 'udp',
): Record<string, unknown> {
  // pingpong: the agent's native ping-pong probe (same contract as sockperf: rtt_us per exchange).
  // No port: the probe uses the targets' ping-pong port (TARGET_PORTS.pingpong) by itself.
  return { kind, name: kind, mode, durationSeconds };
}

/**
 * The AZ-pair plan. Every ordered pair of distinct AZs (within a region unless crossRegion), then
 * each same-AZ reference in both directions. Each path's client is its `from` host; comparisons
 * put every path against its source AZ's same-AZ reference when there is one.
 * @throws AzMatrixError when two hosts share an address or instance, or fewer than two paths result.
 */
export function azMatrixPlan(hosts: readonly AzHost[], opts: AzMatrixOptions = {}): AzMatrixPlanJson {
  const problems: string[] = [];
  for (const field of ['ip', 'instanceId'] as const) {
    const first = new Map<string, number>();
    hosts.forEach((h, i) => {
      const prev = first.get(h[field]);
      if (prev === undefined) first.set(h[field], i);
      else problems.push(`hosts[${i}].${field}: ${JSON.stringify(h[field])} is also hosts[${prev}]'s`);
    });
  }
  if (problems.length) throw new AzMatrixError(problems);
  const eps = endpoints(hosts);
  const primaries = eps.filter((e) => !e.reference);
  const path = (from: Endpoint, to: Endpoint, kind: string) => ({
    id: `${from.key}_to_${to.key}`,
    label: `${who(from)} → ${who(to)}, ${kind}`,
    client: { instanceId: from.host.instanceId, region: from.host.region },
    target: { host: to.host.ip, port: TARGET_PORTS.sockperf },
    az: {
      from: { region: from.host.region, azId: from.host.azId },
      to: { region: to.host.region, azId: to.host.azId },
    },
  });
  const paths: AzMatrixPlanJson['paths'] = [];
  for (const a of primaries)
    for (const b of primaries) {
      if (a === b || (opts.unordered && primaries.indexOf(b) < primaries.indexOf(a))) continue;
      const crossRegion = a.host.region !== b.host.region;
      if (crossRegion && !opts.crossRegion) continue;
      paths.push(path(a, b, crossRegion ? 'cross region' : 'cross AZ'));
    }
  for (const r of eps.filter((e) => e.reference)) {
    const p = primaries.find((x) => x.host.azId === r.host.azId)!;
    paths.push(path(p, r, 'same AZ'));
    if (!opts.unordered) paths.push(path(r, p, 'same AZ'));
  }
  if (paths.length === 0)
    throw new AzMatrixError([
      `${hosts.length} host(s) in ${primaries.length} AZ(s) make no pair (expected two AZs of one region, or a second host in an AZ)`,
    ]);
  // Every cross-AZ path against the same-AZ reference of its source AZ (seed 004: "cross-AZ 5–30× same-AZ").
  const compare: { path: string; baseline: string }[] = [];
  for (const p of paths) {
    if (p.az.from.azId === p.az.to.azId) continue;
    const ref = paths.find((q) => q.az.from.azId === p.az.from.azId && q.az.to.azId === p.az.from.azId);
    if (ref) compare.push({ path: p.id, baseline: ref.id });
  }
  const plan: AzMatrixPlanJson = {
    name: opts.name ?? 'az-matrix',
    defaults: {
      // Latency of small messages: no burst credits to refill, so no reboot between paths.
      reboot: false,
      creditWaitSeconds: 0,
      probes: [azMatrixProbe(opts.probe ?? DEFAULT_AZ_MATRIX_PROBE, opts.durationSeconds ?? 60, opts.mode ?? 'tcp')],
    },
    paths,
  };
  if (compare.length) plan.compare = compare;
  return plan;
}
