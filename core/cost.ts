/**
 * The cost guard: what a run of a plan is expected to cost before it starts — bytes per path
 * from its probes × $/GB for the path's link (inter-region by pair, cross-AZ, NAT, internet),
 * plus instance-hours of its clients for the run's expected duration — and the budget check.
 * Prices come from the dated table (core/prices.ts). Every figure is an upper bound
 * (iperf3 at the client's peak bandwidth, paths one after another or a mesh's rounds); pure.
 */

import type { ProbeSpec } from '../probes/index.js';
import { UNBOUNDED_BITRATE } from '../probes/probe-fields.js';
import { OverBudgetError } from './errors.js';
import {
  crossAzPerGb,
  instancePerHour,
  internetPerGb,
  interRegionPerGb,
  isAwsRegion,
  natPerGb,
  type PriceTable,
  shippedPrices,
} from './prices.js';
import type { Method, ResolvedPath, ResolvedPlan } from './resolved-plan.js';
import type { CostRecord } from './run-manifest.js';

/** The instance type assumed for clients when the caller names none: the seed-000 testbed's. */
export const DEFAULT_CLIENT_INSTANCE_TYPE = 'c6i.large';
/** Peak bandwidth assumed for an instance type the table does not list, Gbps. */
export const FALLBACK_BANDWIDTH_GBPS = 12.5;
/** Per-path orchestration time besides the probes (SSM send and polls, collect), seconds. */
export const PATH_OVERHEAD_SECONDS = 60;
/** A reboot's wait for the instance to be back, seconds. */
export const REBOOT_SECONDS = 120;
/** Bytes on the wire of one TCP connect + close (SYN, SYN-ACK, ACK, FIN ×2, ACK; 66 B frames). */
export const TCP_CONNECT_BYTES = 400;
/** HTTP request + response headers, bytes, on top of the body. */
export const HTTP_HEADER_BYTES = 400;
/** sockperf ping-pong bound: 50,000 round trips a second of two ≈ 100 B frames. */
export const SOCKPERF_BYTES_PER_SECOND = 50_000 * 2 * 100;

export type Link = 'inter-region' | 'cross-az' | 'nat' | 'internet' | 'not-aws';

export interface PathCost {
  pathId: string;
  from: string;
  to: string;
  link: Link;
  bytes: number;
  perGb: number;
  usd: number;
  /** Expected time the path takes, seconds (probes + overhead). */
  seconds: number;
}

export interface RunEstimate {
  pricesAsOf: string;
  paths: PathCost[];
  transferBytes: number;
  transferUsd: number;
  instances: { count: number; type: string; hours: number; perHour: number; usd: number; priced: boolean };
  totalUsd: number;
  bandwidthGbps: number;
  /** The bounds the figures rest on, for the printed note and the manifest. */
  assumptions: string[];
}

export interface EstimateOptions {
  prices?: PriceTable;
  /** The clients' instance type (its price and peak bandwidth); default c6i.large. */
  instanceType?: string;
  /** Overrides the instance type's peak bandwidth as the iperf3 rate bound, Gbps. */
  bandwidthGbps?: number;
}

/** Parse an iperf3 bitrate ("1G", "500M", "100K", "2000") into Gbps. */
export function bitrateGbps(bitrate: string): number {
  const m = /^(\d+(?:\.\d+)?)([KMG]?)$/.exec(bitrate);
  if (!m) throw new Error(`not an iperf3 bitrate: ${JSON.stringify(bitrate)}`);
  const scale = { '': 1e-9, K: 1e-6, M: 1e-3, G: 1 }[m[2] as '' | 'K' | 'M' | 'G'];
  return Number(m[1]) * scale;
}

/** Bytes one probe moves (upper bound) and how long it runs, seconds. */
export function probeLoad(p: ProbeSpec, bandwidthGbps: number): { bytes: number; seconds: number } {
  switch (p.kind) {
    case 'iperf3': {
      // Unbounded UDP sends as fast as the client can: its bandwidth, like TCP.
      const bounded = p.mode === 'udp' && p.bitrate && p.bitrate !== UNBOUNDED_BITRATE;
      const gbps = bounded && p.bitrate ? Math.min(bitrateGbps(p.bitrate), bandwidthGbps) : bandwidthGbps;
      const seconds = p.durationSeconds * p.repeats;
      return { bytes: (gbps * 1e9 * seconds) / 8, seconds: seconds + p.repeats };
    }
    case 'http': {
      const requests = p.count * p.trials;
      // Bounded below by one request per millisecond per connection.
      return { bytes: requests * (p.payloadBytes + HTTP_HEADER_BYTES), seconds: requests / p.concurrency / 1000 };
    }
    case 'tcp-connect':
      return { bytes: p.count * TCP_CONNECT_BYTES, seconds: (p.count * p.intervalMs) / 1000 };
    case 'sockperf': {
      const seconds = p.durationSeconds * (p.trials ?? 1);
      return { bytes: seconds * SOCKPERF_BYTES_PER_SECOND, seconds };
    }
    case 'pingpong': {
      // One exchange every ~20 µs at most (a loopback round trip): an upper bound like sockperf's rate.
      const trials = p.trials ?? 1;
      const seconds = p.durationSeconds > 0 ? p.durationSeconds : p.count / 50_000;
      const perExchange = p.messageBytes + (p.responseBytes ?? p.messageBytes) + 2 * 66;
      const exchanges = p.count > 0 ? p.count : seconds * 50_000;
      return { bytes: trials * exchanges * perExchange, seconds: trials * seconds };
    }
    case 'ping': {
      // Request and reply, each the payload plus IPv4 and ICMP headers (28) and Ethernet framing.
      const seconds = (p.count * p.intervalMs + p.timeoutMs) / 1000;
      return { bytes: p.count * 2 * (p.sizeBytes + 28 + 38), seconds };
    }
    case 'mtu': {
      const steps = Math.ceil(Math.log2(Math.max(2, p.max - p.min))) + 1;
      return { bytes: steps * 3 * p.max, seconds: (steps * p.timeoutMs) / 1000 };
    }
  }
}

/** Is a target address private (RFC 1918, loopback, link-local, CGNAT) rather than on the internet? */
function privateHost(host: string): boolean {
  const m = /^(\d+)\.(\d+)\.\d+\.\d+$/.exec(host);
  // A name: private unless the route facts say otherwise (endpoint and service names resolve inside the VPC).
  if (!m) return true;
  const [a, b] = [Number(m[1]), Number(m[2])];
  return (
    a === 10 ||
    a === 127 ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 169 && b === 254) ||
    (a === 100 && b >= 64 && b <= 127)
  );
}

/** The region an AWS service name carries (a PrivateLink endpoint "….ap-northeast-3.vpce.amazonaws.com"). */
function hostRegion(path: ResolvedPath): string | undefined {
  const m = /\.([a-z]{2}(?:-gov)?-[a-z]+-\d+)\.(?:[a-z0-9-]+\.)*amazonaws\.com$/.exec(path.target.host);
  return m?.[1];
}

/**
 * The region pair and link a path's traffic crosses: a mesh pair's own regions; otherwise the
 * client's region, and the target's as the route facts show it (a route in another region means
 * the target lives there, as does an AWS endpoint name that carries a region; a NAT gateway or internet gateway target, or a public target address,
 * means egress through them). Same region without such facts: cross-AZ (the plan does not say
 * the AZs, so the dearer case is assumed).
 */
export function pathLink(path: ResolvedPath, t: PriceTable): { from: string; to: string; link: Link; perGb: number } {
  const from = path.mesh?.from ?? path.client.region;
  if (!isAwsRegion(from)) return { from, to: path.mesh?.to ?? from, link: 'not-aws', perGb: 0 };
  if (path.mesh) {
    const to = path.mesh.to;
    if (to !== from) return { from, to, link: 'inter-region', perGb: interRegionPerGb(t, from, to) };
    return { from, to, link: 'cross-az', perGb: crossAzPerGb(t) };
  }
  const elsewhere = path.routes.find((r) => r.region !== from && isAwsRegion(r.region))?.region ?? hostRegion(path);
  if (elsewhere && elsewhere !== from) {
    return { from, to: elsewhere, link: 'inter-region', perGb: interRegionPerGb(t, from, elsewhere) };
  }
  const viaNat = path.routes.some((r) => 'natGatewayId' in r.via);
  const viaIgw = path.routes.some((r) => 'gatewayId' in r.via && r.via.gatewayId.startsWith('igw-'));
  if (viaNat) return { from, to: 'internet', link: 'nat', perGb: natPerGb(t, from) + internetPerGb(t, from) };
  if (viaIgw || !privateHost(path.target.host))
    return { from, to: 'internet', link: 'internet', perGb: internetPerGb(t, from) };
  return { from, to: from, link: 'cross-az', perGb: crossAzPerGb(t) };
}

/** The seed's month: 730 hours. */
export const HOURS_PER_MONTH = 730;

/** Lab next hops (lab/) named after the method they stand in for. */
const LAB_HOP_METHODS: Record<string, Method> = {
  peering: 'vpc-peering',
  tgw: 'transit-gateway',
  privatelink: 'privatelink',
  endpoint: 'privatelink',
  nlb: 'nlb',
  nat: 'nat-gateway',
};

/**
 * How a path gets to its target: the plan's `method`, else its routes' target (peering, Transit
 * Gateway, NAT or internet gateway, VPC endpoint, a lab next hop named after one), else its
 * target's name (a PrivateLink endpoint, an ELB, a Lattice service), else `direct`.
 */
export function pathMethod(path: ResolvedPath): Method {
  if (path.method) return path.method;
  for (const r of path.routes) {
    const via = r.via;
    if ('vpcPeeringConnectionId' in via) return 'vpc-peering';
    if ('transitGatewayId' in via) return 'transit-gateway';
    if ('natGatewayId' in via) return 'nat-gateway';
    if ('vpcEndpointId' in via) return 'privatelink';
    if ('gatewayId' in via && via.gatewayId.startsWith('igw-')) return 'internet';
    if ('labNextHop' in via && LAB_HOP_METHODS[via.labNextHop]) return LAB_HOP_METHODS[via.labNextHop];
  }
  const host = path.target.host.toLowerCase();
  if (/\.vpce(-svc)?\.amazonaws\.com$|^vpce-/.test(host)) return 'privatelink';
  if (/\.elb\.([a-z0-9-]+\.)?amazonaws\.com$/.test(host)) return 'nlb';
  if (/\.vpc-lattice-svcs\.[a-z0-9-]+\.on\.aws$/.test(host)) return 'lattice';
  return 'direct';
}

/**
 * What a path's method costs: its fixed monthly bill (the table's hourly figure × 730; 0 for a
 * method with none) and $/GB (the link's transfer plus the method's processing). Null fixed
 * cost when the table carries no method prices at all (a table of an earlier version).
 */
export function methodCost(
  path: ResolvedPath,
  t: PriceTable = shippedPrices(),
): { method: Method; link: Link; fixedUsdPerMonth: number | null; usdPerGb: number } {
  const method = pathMethod(path);
  const link = pathLink(path, t);
  const perHour = t.methodPerHour ? (t.methodPerHour[method] ?? 0) : null;
  return {
    method,
    link: link.link,
    fixedUsdPerMonth: perHour === null ? null : round6(perHour * HOURS_PER_MONTH),
    usdPerGb: round6(link.perGb + (t.methodPerGb?.[method] ?? 0)),
  };
}

/** Wall time of a mesh plan's rounds: per round its slowest pair, summed over the rounds. */
function roundsSeconds(plan: ResolvedPlan, paths: readonly PathCost[]): number {
  const slowest = new Map<number, number>();
  plan.paths.forEach((p, i) => {
    const round = p.mesh?.round ?? 0;
    slowest.set(round, Math.max(slowest.get(round) ?? 0, paths[i].seconds));
  });
  return [...slowest.values()].reduce((s, x) => s + x, 0);
}

/** Estimate one run of a resolved plan. */
export function estimateRun(plan: ResolvedPlan, opts: EstimateOptions = {}): RunEstimate {
  const t = opts.prices ?? shippedPrices();
  const type = opts.instanceType ?? DEFAULT_CLIENT_INSTANCE_TYPE;
  const bandwidthGbps = opts.bandwidthGbps ?? t.instanceBandwidthGbps[type] ?? FALLBACK_BANDWIDTH_GBPS;
  const paths: PathCost[] = plan.paths.map((path) => {
    const link = pathLink(path, t);
    let bytes = 0;
    let seconds = PATH_OVERHEAD_SECONDS + (path.reboot ? REBOOT_SECONDS : 0) + path.creditWaitSeconds;
    for (const p of path.probes) {
      const load = probeLoad(p, bandwidthGbps);
      bytes += load.bytes;
      seconds += load.seconds;
    }
    return { pathId: path.id, ...link, bytes, usd: (bytes / 1e9) * link.perGb, seconds };
  });
  // Clients in AWS regions are billed for the whole run. A plan of mesh pairs runs on the mesh
  // machine (rounds one after another, the pairs of a round side by side), so its run lasts the
  // sum of each round's slowest pair; any other plan's paths run one after another.
  const clients = new Map<string, string>();
  for (const p of plan.paths) if (isAwsRegion(p.client.region)) clients.set(p.client.instanceId, p.client.region);
  const inRounds = plan.paths.length > 0 && plan.paths.every((p) => p.mesh !== undefined);
  const hours = (inRounds ? roundsSeconds(plan, paths) : paths.reduce((s, p) => s + p.seconds, 0)) / 3600;
  let instanceUsd = 0;
  let perHourMax = 0;
  let priced = true;
  for (const region of clients.values()) {
    const perHour = instancePerHour(t, type, region);
    if (perHour === undefined) priced = false;
    perHourMax = Math.max(perHourMax, perHour ?? 0);
    instanceUsd += (perHour ?? 0) * hours;
  }
  const transferBytes = paths.reduce((s, p) => s + p.bytes, 0);
  const transferUsd = paths.reduce((s, p) => s + p.usd, 0);
  const assumptions = [
    `iperf3 at ${bandwidthGbps} Gbps (peak bandwidth of ${opts.bandwidthGbps !== undefined ? 'the given bound' : type})`,
    inRounds
      ? 'mesh pairs in rounds (a round lasts its slowest pair); clients billed for the whole run'
      : 'paths one after another; clients billed for the whole run',
    'same-region paths priced as cross-AZ (both directions)',
    `prices of ${t.asOf}`,
  ];
  if (!priced) assumptions.push(`instance type ${type} is not in the price table: instances not counted`);
  return {
    pricesAsOf: t.asOf,
    paths,
    transferBytes,
    transferUsd,
    instances: { count: clients.size, type, hours, perHour: perHourMax, usd: instanceUsd, priced },
    totalUsd: transferUsd + instanceUsd,
    bandwidthGbps,
    assumptions,
  };
}

export interface Budget {
  usd: number;
  source: 'plan' | 'stack';
}

/** The budget that applies: the plan's own, else the stack default (none: no limit). */
export function applicableBudget(plan: ResolvedPlan, stackDefaultUsd?: number): Budget | undefined {
  if (plan.budgetUsd !== undefined) return { usd: plan.budgetUsd, source: 'plan' };
  if (stackDefaultUsd !== undefined) return { usd: stackDefaultUsd, source: 'stack' };
  return undefined;
}

export const usd = (n: number): string => (n > 0 && n < 0.01 ? '<$0.01' : `$${n.toFixed(2)}`);

/**
 * Hold an estimate to a budget: throws OverBudgetError (one line naming estimate and budget)
 * when it is over and the caller did not allow it; returns the manifest's record otherwise.
 */
export function enforceBudget(est: RunEstimate, budget: Budget | undefined, allowOverBudget: boolean): CostRecord {
  const overBudget = budget !== undefined && est.totalUsd > budget.usd;
  if (overBudget && !allowOverBudget) {
    const from = budget.source === 'plan' ? "the plan's budgetUsd" : 'the stack default budget';
    throw new OverBudgetError(
      `estimated cost ${usd(est.totalUsd)} is over the budget of ${usd(budget.usd)} (${from}); nothing was started — raise the budget or pass --allow-over-budget (execution input "allowOverBudget": true)`,
    );
  }
  const record: CostRecord = {
    estimateUsd: round6(est.totalUsd),
    transferUsd: round6(est.transferUsd),
    instanceUsd: round6(est.instances.usd),
    transferBytes: Math.round(est.transferBytes),
    overBudget,
    overridden: overBudget && allowOverBudget,
    pricesAsOf: est.pricesAsOf,
    assumptions: est.assumptions,
  };
  if (budget) {
    record.budgetUsd = budget.usd;
    record.budgetSource = budget.source;
  }
  return record;
}

const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

const gb = (bytes: number) => (bytes >= 1e9 ? `${(bytes / 1e9).toFixed(1)} GB` : `${(bytes / 1e6).toFixed(1)} MB`);

function table(rows: string[][]): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));
}

/**
 * The estimate as a printable table (path, link, bytes, $/GB, $), then instances, total and the
 * budget. More than `maxRows` paths: the dearest are listed and the rest summed in one line.
 */
export function formatEstimate(est: RunEstimate, budget?: Budget, maxRows = 20): string {
  const sorted = [...est.paths].sort((a, b) => b.usd - a.usd);
  const shown = sorted.length > maxRows ? sorted.slice(0, maxRows - 1) : sorted;
  const rest = sorted.slice(shown.length);
  const rows = [
    ['path', 'link', 'bytes', '$/GB', '$'],
    ...shown.map((p) => [
      p.pathId,
      p.link === 'not-aws' ? `${p.from} (not AWS)` : `${p.from}→${p.to} ${p.link}`,
      gb(p.bytes),
      `$${p.perGb.toFixed(4)}`,
      usd(p.usd),
    ]),
  ];
  if (rest.length > 0)
    rows.push([
      `… ${rest.length} more`,
      '',
      gb(rest.reduce((s, p) => s + p.bytes, 0)),
      '',
      usd(rest.reduce((s, p) => s + p.usd, 0)),
    ]);
  rows.push(['transfer', '', gb(est.transferBytes), '', usd(est.transferUsd)]);
  const i = est.instances;
  rows.push([
    'instances',
    `${i.count} × ${i.type} × ${i.hours.toFixed(2)} h`,
    '',
    i.priced ? `$${i.perHour.toFixed(4)}/h` : 'unpriced',
    usd(i.usd),
  ]);
  rows.push(['total', '', '', '', usd(est.totalUsd)]);
  const out = [`cost estimate (upper bound; prices of ${est.pricesAsOf}):`, ...table(rows).map((l) => `  ${l}`)];
  out.push(`  assumes: ${est.assumptions.join('; ')}`);
  out.push(
    budget
      ? `  budget: ${usd(budget.usd)} (${budget.source === 'plan' ? 'plan budgetUsd' : 'stack default'})${est.totalUsd > budget.usd ? ' — OVER' : ''}`
      : '  budget: none (set budgetUsd in the plan, or a stack default)',
  );
  return out.join('\n');
}
