/**
 * What a lab profile is: the namespaces (roles), links, next hops, paths with their delays, the
 * client's burst-credit bucket and the proxies of one local twin, as data. The profiles live
 * beside this module (seed-000-profile.ts, seed-002-profile.ts, seed-004-profile.ts,
 * mesh-profile.ts, looked up in profile-by-name.ts); the argv that builds one is
 * lab/topology-commands.ts.
 */
import { z } from 'zod';
import { TARGET_PORTS, type TargetPorts } from '../../core/target-ports.js';

export const LAB_PROFILES = ['seed-000', 'seed-000-nlb', 'seed-002', 'seed-004', 'mesh', 'one-way'] as const;
export type LabProfileName = (typeof LAB_PROFILES)[number];

/** A namespace role: seed-000's (LAB_ROLES) or, in the seed-004 profile, an AZ id ("apne1-az2", "apne1-az1-ref"). */
export type LabRole = string;

export const TOKYO_CIDR = '10.0.0.0/16';
export const OSAKA_CIDR = '10.1.0.0/16';

export type LabPorts = TargetPorts;

/** The lab's targets listen where the testbed's do (one list for both). */
export const LAB_PORTS: LabPorts = TARGET_PORTS;

export interface LabLink {
  /** Namespace role and interface name on each end. */
  a: { role: LabRole; ifname: string; addr: string };
  b: { role: LabRole; ifname: string; addr: string };
  mtu: number;
}

export interface LabNextHop {
  name: 'peering' | 'tgw';
  /** Next hop address as seen from the Tokyo router and from the Osaka side. */
  tokyoVia: string;
  osakaVia: string;
  role: LabRole;
}

export interface LabPathDef {
  /** Seed-000: A–F; seed-004: the AZ pair the delay belongs to. */
  id: string;
  label: string;
  /** Namespace that runs the target servers. */
  targetRole: LabRole;
  targetIp: string;
  /** Seed 000 TCP-connect p50, ms: the round trip the lab must reproduce. */
  rttMs: number;
  /** Where the delay is applied and through which NFQUEUE number. */
  delayRole: LabRole;
  queue: number;
  /**
   * iptables match selecting this path's packets in delayRole's FORWARD chain (both directions).
   * Empty: the path has no delay of its own (seed 002's D rides B's, plus its two proxies).
   */
  match: string[][];
  /** Which Tokyo-side next hop must be active for this path (C/D only). */
  nextHop?: 'peering' | 'tgw';
  /**
   * Two delays mixed: a `share` (0–1) of the packets take a round trip of `rttMs` instead of
   * the path's. The whole added delay sits on the way to the target (`match` holds only that
   * direction), so each round trip takes exactly one of the two delays. NFQUEUE helper only.
   */
  mix?: { rttMs: number; share: number };
  /**
   * Further routes, like `mix` but up to two (three delays in all): a `share` of the packets take
   * a round trip of `rttMs` each, the rest the path's. Exclusive with `mix`. NFQUEUE helper only.
   */
  routes?: { rttMs: number; share: number }[];
  /**
   * Asymmetric one-way delays (the one-way profile): `match` then selects only the way to the
   * target, delayed by (1 − share) of the added round trip on `queue`, and `reverse.match` the
   * way back, delayed by `share` of it on `reverse.queue` (the same delay namespace). Not with
   * `mix`/`routes`. NFQUEUE helper only.
   */
  reverse?: { queue: number; match: string[][]; share: number };
  /**
   * The target address lives on the target namespace's loopback (not on a link), reached by a
   * host route on the router via that namespace's link address.
   */
  loopbackTarget?: boolean;
}

/** The client's burst-credit token bucket (kept in the lab state, lab/lab-state.ts). */
export const labCreditsSchema = z.object({
  /** Sustained rate after the bucket is empty (the "baseline" bandwidth). */
  rate: z.string(),
  /** Bucket size in bytes: what can be sent above `rate` after a refill. */
  burstBytes: z.number(),
  /** Rate while the bucket has tokens (the "burst" bandwidth). */
  peakrate: z.string(),
  /** Peak bucket size (bytes); 64 KiB lets whole GSO packets through. */
  mtu: z.number(),
});
export type LabCredits = z.output<typeof labCreditsSchema>;

/**
 * A real proxy (haproxy) in a namespace, as the cloud has one on a path: `http` for L7 proxies
 * (Service Connect's Envoy sidecars, VPC Lattice), `tcp` for L4 ones (an NLB, a PrivateLink
 * endpoint). `lab up` writes its config next to the state file and starts it, PID in the state.
 */
export interface LabProxy {
  /** Process role in the state (`proxy-<name>`) and config file name. */
  name: string;
  role: LabRole;
  mode: 'http' | 'tcp';
  listen: { ip: string; port: number };
  server: { ip: string; port: number };
}

export interface LabProfile {
  name: LabProfileName;
  /** The namespaces' roles (`<prefix><role>`). */
  roles: readonly LabRole[];
  /** The role whose namespace is the lab client (the rebootable instance with the burst-credit bucket). */
  clientRole: LabRole;
  /** Roles that run target servers, when not only the paths' targets (seed-004: every host). */
  serverRoles?: readonly LabRole[];
  /** Further roles the pipeline may use as clients (instanceId = namespace); seed-004: every host. */
  extraClientRoles?: readonly LabRole[];
  /** Real proxies on the paths (seed 002); none in seed 000. */
  proxies?: LabProxy[];
  /** The client namespace's `net.ipv4.ip_local_port_range` (small: TIME_WAIT pressure arises quickly). */
  clientPortRange?: [number, number];
  /** A token bucket on the router's link towards the client at this rate: the client NIC's receive side. */
  clientIngressRate?: string;
  /** Whether `lab up` calibrates the delays by TCP-connect RTT (default true; false: delays as set — e.g. mixed delays have no single p50 to tune). */
  calibrate?: boolean;
  /**
   * A star: hosts on links to one forwarding router, each with its default route to it
   * (seed-004, mesh, one-way); otherwise seed 000's Tokyo/Osaka topology with its next hops.
   */
  star?: boolean;
  /** The only delay mechanism the profile works with (several paths share one interface: not netem). */
  delay?: 'nfqueue';
  paths: LabPathDef[];
  links: LabLink[];
  nextHops: LabNextHop[];
  /** Which next hop is active after `up` (profiles with next hops). */
  defaultNextHop?: 'peering' | 'tgw';
  credits: LabCredits;
  ports: LabPorts;
}

export const IN_REGION_MTU = 9001;
export const INTER_REGION_MTU = 8500;

/** iptables matches for both directions of the traffic to and from `cidr`. */
export const matchBothWays = (cidr: string): string[][] => [
  ['-d', cidr],
  ['-s', cidr],
];

/** Address without its prefix length. */
export function hostOf(cidrAddr: string): string {
  return cidrAddr.split('/')[0];
}

/** Roles that run target servers (one set per distinct target namespace). */
export function targetRoles(profile: LabProfile): LabRole[] {
  return [...new Set([...(profile.serverRoles ?? []), ...profile.paths.map((p) => p.targetRole)])];
}

/** Queues grouped by the namespace that applies them. */
export function queuesByRole(profile: LabProfile): Map<LabRole, number[]> {
  const m = new Map<LabRole, number[]>();
  for (const p of profile.paths) {
    if (p.match.length === 0) continue; // no delay of its own
    const list = m.get(p.delayRole) ?? [];
    list.push(p.queue);
    if (p.reverse) list.push(p.reverse.queue);
    m.set(p.delayRole, list);
  }
  return m;
}
