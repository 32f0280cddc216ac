/**
 * The lab's topology as data: a local twin of seed 000's Tokyo/Osaka paths. Pure: names,
 * addresses, links, routes, delay placement and the exact `ip`/`tc`/`iptables` argv to build
 * it. The executor (lab.ts and its steps) only runs what this module returns, so the layout is
 * unit-testable.
 *
 *   pb-client ──c0── pb-router ──a0── pb-a        (A same AZ)
 *                      │ ├──b0── pb-b             (B cross AZ)
 *                      │ ├──e0── pb-e             (E PrivateLink-like endpoint, no ICMP echo)
 *                      │ ├──p0── pb-peering ──┐   (C, route 10.1.0.0/16 via 10.255.1.2)
 *                      │ └──t0── pb-tgw ──────┤   (D, route 10.1.0.0/16 via 10.255.2.2)
 *                      │                      └── pb-osaka (10.1.1.10; return route via p0/t0)
 * Delays live in the FORWARD chain of the namespace that owns a path (router for A/B/E, the hop
 * namespace for C/D), half per direction, so swapping the route genuinely changes the RTT.
 * Path F is not one of the seed's: a bimodal path (two delays mixed) to the same host as A,
 * under another address (10.0.5.10 on pb-a's loopback), for the distribution-shape figures.
 */
import { z } from 'zod';
import { TARGET_PORTS, type TargetPorts } from '../core/target-ports.js';
import { LAB_MESH_HOSTS, LAB_MESH_ROUTE_FACTOR, labMeshPairs } from './lab-mesh.js';

export const LAB_PROFILES = ['seed-000', 'seed-002', 'seed-004', 'mesh'] as const;
export type LabProfileName = (typeof LAB_PROFILES)[number];

/** Roles of the seed-000 profile's namespaces; the namespace name is `<prefix><role>`. */
export const LAB_ROLES = ['client', 'router', 'a', 'b', 'e', 'peering', 'tgw', 'osaka'] as const;
/** A namespace role: seed-000's (LAB_ROLES) or, in the seed-004 profile, an AZ id ("apne1-az2", "apne1-az1-ref"). */
export type LabRole = string;

export const DEFAULT_PREFIX = 'pb-';
/** Namespace prefixes must start with "pb-" (project rule) and leave room for the role. */
export const PREFIX_RE = /^pb-[a-z0-9-]{0,6}$/;

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
   * The target address lives on the target namespace's loopback (not on a link), reached by a
   * host route on the router via that namespace's link address.
   */
  loopbackTarget?: boolean;
}

/** The client's burst-credit token bucket (kept in the lab state, lab/sys.ts). */
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

const IN_REGION_MTU = 9001;
const INTER_REGION_MTU = 8500;

const both = (cidr: string): string[][] => [
  ['-d', cidr],
  ['-s', cidr],
];

/** Seed 000's five paths A–E, and the bimodal path F (docs/lab.md). */
export function seed000Profile(): LabProfile {
  return {
    name: 'seed-000',
    roles: LAB_ROLES,
    clientRole: 'client',
    paths: [
      {
        id: 'A',
        label: 'Tokyo 1a → Tokyo 1a (same AZ)',
        targetRole: 'a',
        targetIp: '10.0.2.10',
        rttMs: 0.21,
        delayRole: 'router',
        queue: 1,
        match: both('10.0.2.0/24'),
      },
      {
        id: 'B',
        label: 'Tokyo 1a → Tokyo 1c (cross AZ)',
        targetRole: 'b',
        targetIp: '10.0.3.10',
        rttMs: 1.65,
        delayRole: 'router',
        queue: 2,
        match: both('10.0.3.0/24'),
      },
      {
        id: 'C',
        label: 'Tokyo 1a → Osaka 3a (VPC peering)',
        targetRole: 'osaka',
        targetIp: '10.1.1.10',
        rttMs: 8.89,
        delayRole: 'peering',
        queue: 3,
        match: [[]],
        nextHop: 'peering',
      },
      {
        id: 'D',
        label: 'Tokyo 1a → Osaka 3a (Transit Gateway peering)',
        targetRole: 'osaka',
        targetIp: '10.1.1.10',
        rttMs: 11.01,
        delayRole: 'tgw',
        queue: 4,
        match: [[]],
        nextHop: 'tgw',
      },
      {
        id: 'E',
        label: 'Tokyo 1a → Osaka 3a (cross-region PrivateLink)',
        targetRole: 'e',
        targetIp: '10.0.4.10',
        rttMs: 13.32,
        delayRole: 'router',
        queue: 5,
        match: both('10.0.4.0/24'),
      },
      {
        // Not a seed-000 path: plans/lab-bimodal.json measures it (docs/lab.md).
        id: 'F',
        label: 'bimodal: 70 % at 2 ms, 30 % at 6 ms (two delays mixed)',
        targetRole: 'a',
        targetIp: '10.0.5.10',
        rttMs: 2,
        mix: { rttMs: 6, share: 0.3 },
        loopbackTarget: true,
        delayRole: 'router',
        queue: 6,
        match: [['-d', '10.0.5.10/32']],
      },
    ],
    links: [
      {
        a: { role: 'client', ifname: 'eth0', addr: '10.0.1.10/24' },
        b: { role: 'router', ifname: 'c0', addr: '10.0.1.1/24' },
        mtu: IN_REGION_MTU,
      },
      {
        a: { role: 'router', ifname: 'a0', addr: '10.0.2.1/24' },
        b: { role: 'a', ifname: 'eth0', addr: '10.0.2.10/24' },
        mtu: IN_REGION_MTU,
      },
      {
        a: { role: 'router', ifname: 'b0', addr: '10.0.3.1/24' },
        b: { role: 'b', ifname: 'eth0', addr: '10.0.3.10/24' },
        mtu: IN_REGION_MTU,
      },
      {
        a: { role: 'router', ifname: 'e0', addr: '10.0.4.1/24' },
        b: { role: 'e', ifname: 'eth0', addr: '10.0.4.10/24' },
        mtu: IN_REGION_MTU,
      },
      {
        a: { role: 'router', ifname: 'p0', addr: '10.255.1.1/30' },
        b: { role: 'peering', ifname: 'eth0', addr: '10.255.1.2/30' },
        mtu: INTER_REGION_MTU,
      },
      {
        a: { role: 'router', ifname: 't0', addr: '10.255.2.1/30' },
        b: { role: 'tgw', ifname: 'eth0', addr: '10.255.2.2/30' },
        mtu: INTER_REGION_MTU,
      },
      {
        a: { role: 'peering', ifname: 'eth1', addr: '10.255.3.1/30' },
        b: { role: 'osaka', ifname: 'p0', addr: '10.255.3.2/30' },
        mtu: INTER_REGION_MTU,
      },
      {
        a: { role: 'tgw', ifname: 'eth1', addr: '10.255.4.1/30' },
        b: { role: 'osaka', ifname: 't0', addr: '10.255.4.2/30' },
        mtu: INTER_REGION_MTU,
      },
    ],
    nextHops: [
      { name: 'peering', tokyoVia: '10.255.1.2', osakaVia: '10.255.3.1', role: 'peering' },
      { name: 'tgw', tokyoVia: '10.255.2.2', osakaVia: '10.255.4.1', role: 'tgw' },
    ],
    defaultNextHop: 'peering',
    // 1 Gbit/s while credits last, 200 Mbit/s after; 500 MB above the base rate ≈ 5 s of burst.
    credits: { rate: '200mbit', burstBytes: 500_000_000, peakrate: '1gbit', mtu: 65536 },
    ports: LAB_PORTS,
  };
}

/**
 * Seed 002's service-to-service paths inside one region, on seed 000's namespaces (docs/lab.md):
 * the server "tasks" run in pb-b (peering side) and pb-a (same VPC), pb-osaka behind the TGW hop;
 * real haproxy processes stand where the cloud has proxies:
 *
 *   A   client → pb-a 10.0.2.10:8080                              (same VPC, task IP)
 *   B   client → pb-b 10.0.3.10:8080                              (peering, task IP)
 *   D   client → sidecar 127.255.0.1:8080 (pb-client, L7) → sidecar 10.0.3.10:15000 (pb-b, L7) → server
 *   F   client → pb-osaka 10.1.1.10:8080 via pb-tgw               (Transit Gateway, task IP)
 *   G′  client → "NLB" 10.0.4.10:8080 (pb-e, L4) → pb-b server    (peering + internal NLB)
 *   G   client → "endpoint" 10.255.1.2:8080 (pb-peering, L4, own delay) → NLB → server (PrivateLink)
 *   H   client → "Lattice" 10.255.2.2:8080 (pb-tgw, L7, extra delay) → pb-b server
 *   L1  client → pb-a 10.0.2.10:7000 (same AZ), L2 → 10.0.6.10:7000 on pb-a's loopback (cross AZ)
 *
 * Delays are added round trips on the router (queues matched by address, first match wins, so
 * an NLB → server leg takes B's delay) and in pb-tgw for F. `rttMs` = the added round trip +
 * the bare topology's ~0.08 ms; they are not calibrated (the seed's figures are HTTP p50 through
 * proxies, which a TCP connect to the front cannot measure).
 */
export function seed002Profile(): LabProfile {
  const base = seed000Profile();
  const one = (ip: string): string[][] => [
    ['-d', `${ip}/32`],
    ['-s', `${ip}/32`],
  ];
  return {
    ...base,
    name: 'seed-002',
    paths: [
      // Order is rule order: the first matching rule takes a packet.
      {
        id: 'L2',
        label: 'cross AZ (TCP connect)',
        targetRole: 'a',
        targetIp: '10.0.6.10',
        rttMs: 0.18,
        loopbackTarget: true,
        delayRole: 'router',
        queue: 1,
        match: one('10.0.6.10'),
      },
      {
        id: 'A',
        label: 'same VPC, task IP',
        targetRole: 'a',
        targetIp: '10.0.2.10',
        rttMs: 0.08,
        delayRole: 'router',
        queue: 2,
        match: both('10.0.2.0/24'),
      },
      {
        id: 'L1',
        label: 'same AZ (TCP connect)',
        targetRole: 'a',
        targetIp: '10.0.2.10',
        rttMs: 0.08,
        delayRole: 'router',
        queue: 3,
        match: [],
      },
      {
        id: 'B',
        label: 'VPC peering, task IP',
        targetRole: 'b',
        targetIp: '10.0.3.10',
        rttMs: 0.16,
        delayRole: 'router',
        queue: 4,
        match: both('10.0.3.0/24'),
      },
      {
        id: 'D',
        label: 'VPC peering + Service Connect (two sidecar proxies)',
        targetRole: 'b',
        targetIp: '127.255.0.1',
        rttMs: 0.16,
        delayRole: 'router',
        queue: 5,
        match: [],
      },
      {
        id: 'G-prime',
        label: 'VPC peering + internal NLB directly (L4 proxy)',
        targetRole: 'b',
        targetIp: '10.0.4.10',
        rttMs: 0.2,
        delayRole: 'router',
        queue: 6,
        match: both('10.0.4.0/24'),
      },
      {
        id: 'G',
        label: 'PrivateLink: interface endpoint + NLB (two L4 proxies)',
        targetRole: 'b',
        targetIp: '10.255.1.2',
        rttMs: 0.2,
        delayRole: 'router',
        queue: 7,
        match: one('10.255.1.2'),
      },
      {
        id: 'H',
        label: 'VPC Lattice (L7 proxy, extra delay)',
        targetRole: 'b',
        targetIp: '10.255.2.2',
        rttMs: 0.9,
        delayRole: 'router',
        queue: 8,
        match: one('10.255.2.2'),
      },
      {
        id: 'F',
        label: 'Transit Gateway, task IP',
        targetRole: 'osaka',
        targetIp: '10.1.1.10',
        rttMs: 0.3,
        delayRole: 'tgw',
        queue: 9,
        match: [[]],
        nextHop: 'tgw',
      },
    ],
    defaultNextHop: 'tgw',
    proxies: [
      // Service Connect: the client task's sidecar, then the server task's sidecar.
      {
        name: 'sc-client',
        role: 'client',
        mode: 'http',
        listen: { ip: '127.255.0.1', port: 8080 },
        server: { ip: '10.0.3.10', port: 15000 },
      },
      {
        name: 'sc-server',
        role: 'b',
        mode: 'http',
        listen: { ip: '10.0.3.10', port: 15000 },
        server: { ip: '127.0.0.1', port: 8080 },
      },
      // The internal NLB (L4), and PrivateLink's interface endpoint in front of it.
      {
        name: 'nlb',
        role: 'e',
        mode: 'tcp',
        listen: { ip: '10.0.4.10', port: 8080 },
        server: { ip: '10.0.3.10', port: 8080 },
      },
      {
        name: 'endpoint',
        role: 'peering',
        mode: 'tcp',
        listen: { ip: '10.255.1.2', port: 8080 },
        server: { ip: '10.0.4.10', port: 8080 },
      },
      // VPC Lattice: an L7 proxy of its own, further away.
      {
        name: 'lattice',
        role: 'tgw',
        mode: 'http',
        listen: { ip: '10.255.2.2', port: 8080 },
        server: { ip: '10.0.3.10', port: 8080 },
      },
    ],
    // 512 ports: keep-alive-off cells run into TIME_WAIT within a short test (docs/lab.md).
    clientPortRange: [60000, 60511],
    // The client's "NIC": 1 Gbit/s both ways (requests: the credits bucket; answers: the router's side).
    credits: { rate: '1gbit', burstBytes: 1_000_000, peakrate: '1100mbit', mtu: 65536 },
    clientIngressRate: '1gbit',
    calibrate: false,
    delay: 'nfqueue',
  };
}

/** The profile by name; throws a one-line error for an unknown one. */
export function labProfile(name: string = 'seed-000'): LabProfile {
  if (name === 'seed-000') return seed000Profile();
  if (name === 'seed-002') return seed002Profile();
  if (name === 'seed-004') return seed004Profile();
  if (name === 'mesh') return meshProfile();
  throw new Error(`unknown lab profile "${name}" (known: ${LAB_PROFILES.join(', ')})`);
}

/** One host of the seed-004 twin: a namespace named by its AZ id, on its own link to the router. */
export interface LabAzHost {
  role: LabRole;
  region: string;
  azId: string;
  /** The host's address (10.4.<index>.10) and the router's end of its link (10.4.<index>.1). */
  ip: string;
  routerIp: string;
  reference: boolean;
}

/** Seed 004's eight hosts: Tokyo az1/az2/az4 and Osaka az1/az2/az3, plus a second host in each az1. */
export const SEED004_HOSTS: readonly LabAzHost[] = [
  ['ap-northeast-1', 'apne1-az1', false],
  ['ap-northeast-1', 'apne1-az2', false],
  ['ap-northeast-1', 'apne1-az4', false],
  ['ap-northeast-1', 'apne1-az1', true],
  ['ap-northeast-3', 'apne3-az1', false],
  ['ap-northeast-3', 'apne3-az2', false],
  ['ap-northeast-3', 'apne3-az3', false],
  ['ap-northeast-3', 'apne3-az1', true],
].map(([region, azId, reference], i) => ({
  role: `${azId}${reference ? '-ref' : ''}`,
  region: region as string,
  azId: azId as string,
  ip: `10.4.${i + 1}.10`,
  routerIp: `10.4.${i + 1}.1`,
  reference: reference as boolean,
}));

/**
 * Seed 004's inter-AZ round trips as routes: [round trip ms, share] per route, the first taking
 * the rest. Where the seed named modes, the lab keeps their number and order but spreads them
 * to ≥ 1.45× apart: the report's mode detector (core/shape.ts, 40 bins per decade)
 * does not resolve modes closer than ≈ 1.35×, and the seed's own are closer (Tokyo az1↔az2
 * 540 / 605 µs one-way, Osaka az2↔az3 300 / 370 / 450 µs). Osaka az1↔az2 keeps the seed's
 * shape: two modes with the mean (seed: 147.7 µs one-way) in the valley between them. The
 * single-route pairs are not in the seed's text; their figures keep the cross-AZ/same-AZ ratio
 * in its 5–30× range. Same-AZ pairs get no added delay: the bare topology is their figure.
 */
export const SEED004_ROUTES: Record<string, [number, number][]> = {
  'apne1-az1|apne1-az2': [
    [1.0, 0.6],
    [1.45, 0.4],
  ],
  'apne1-az1|apne1-az4': [[0.76, 1]],
  'apne1-az2|apne1-az4': [[0.9, 1]],
  // mean 0.299 ms round trip (the seed's 147.7 µs one-way ×2), its modes 2.1× apart: at 0.22 /
  // 0.38 ms (1.7×) the valley filled up whenever the machine was loaded.
  'apne3-az1|apne3-az2': [
    [0.2, 0.55],
    [0.42, 0.45],
  ],
  'apne3-az1|apne3-az3': [[0.5, 1]],
  // Three routes ≥ 1.6× apart as measured (each with the lab's ~0.12 ms of its own): at 0.5 /
  // 0.75 / 1.1 ms (~1.4×) the mode detector merged two of them about one run in two.
  'apne3-az2|apne3-az3': [
    [0.4, 0.5],
    [0.75, 0.3],
    [1.3, 0.2],
  ],
};

/**
 * The seed-004 twin: a star of eight host namespaces around one router. Each AZ pair with a
 * delay is one lab path and NFQUEUE queue on the router. A mixed pair's whole added round trip
 * sits on the packets from the pair's first host to its second (one iptables rule), so a round
 * trip measured in either direction crosses it exactly once and takes exactly one route's delay.
 * A single-route pair is matched in both directions, half its round trip each way (queueArg):
 * with one rule, half of it went missing (576 µs measured for 760 µs).
 */
export function seed004Profile(): LabProfile {
  const hosts = SEED004_HOSTS;
  const first = (azId: string) => hosts.find((h) => h.azId === azId && !h.reference)!;
  const paths: LabPathDef[] = Object.entries(SEED004_ROUTES).map(([pair, routes], i) => {
    const [a, b] = pair.split('|').map(first);
    const [main, ...more] = routes;
    return {
      id: `${a.azId}_${b.azId}`,
      label: `${a.azId} ↔ ${b.azId}: ${routes.map(([ms, share]) => `${Math.round(share * 100)} % at ${ms} ms`).join(', ')}`,
      targetRole: b.role,
      targetIp: b.ip,
      rttMs: main[0],
      ...(more.length ? { routes: more.map(([rttMs, share]) => ({ rttMs, share })) } : {}),
      delayRole: 'router',
      queue: 11 + i,
      match: [
        ['-s', `${a.ip}/32`, '-d', `${b.ip}/32`],
        ...(more.length ? [] : [['-s', `${b.ip}/32`, '-d', `${a.ip}/32`]]),
      ],
    };
  });
  return {
    name: 'seed-004',
    roles: ['router', ...hosts.map((h) => h.role)],
    clientRole: hosts[0].role,
    serverRoles: hosts.map((h) => h.role),
    extraClientRoles: hosts.slice(1).map((h) => h.role),
    calibrate: false,
    paths,
    links: hosts.map((h, i) => ({
      a: { role: 'router', ifname: `h${i + 1}`, addr: `${h.routerIp}/24` },
      b: { role: h.role, ifname: 'eth0', addr: `${h.ip}/24` },
      mtu: IN_REGION_MTU,
    })),
    nextHops: [],
    credits: { rate: '200mbit', burstBytes: 500_000_000, peakrate: '1gbit', mtu: 65536 },
    ports: LAB_PORTS,
  };
}

/**
 * The lab mesh (lab/lab-mesh.ts): six region namespaces in a star around one router, every host a
 * client and a target. Each unordered region pair is one lab path on its own NFQUEUE queue in
 * the router, matched in both directions, half the pair's round trip each way (queueArg), so a
 * round trip between two regions crosses that pair's delay once each way and no other. The
 * round trip is the fibre one over the great circle × route factor 1.5 (LAB_MESH_ROUTE_FACTOR); not
 * calibrated (the bare hop is taken off as everywhere, BARE_RTT_GUESS_MS in calibration.ts).
 */
export function meshProfile(): LabProfile {
  const hosts = LAB_MESH_HOSTS;
  const paths: LabPathDef[] = labMeshPairs().map((p) => ({
    id: p.id,
    label: `${p.a.role} ↔ ${p.b.role}: ${Math.round(p.distanceKm)} km, fibre RTT ${p.rttMs.toFixed(2)} ms (route factor ${LAB_MESH_ROUTE_FACTOR})`,
    targetRole: p.b.role,
    targetIp: p.b.ip,
    rttMs: p.rttMs,
    delayRole: 'router',
    queue: p.queue,
    match: [
      ['-s', `${p.a.ip}/32`, '-d', `${p.b.ip}/32`],
      ['-s', `${p.b.ip}/32`, '-d', `${p.a.ip}/32`],
    ],
  }));
  return {
    name: 'mesh',
    roles: ['router', ...hosts.map((h) => h.role)],
    clientRole: hosts[0].role,
    serverRoles: hosts.map((h) => h.role),
    extraClientRoles: hosts.slice(1).map((h) => h.role),
    calibrate: false,
    delay: 'nfqueue',
    paths,
    links: hosts.map((h, i) => ({
      a: { role: 'router', ifname: `m${i + 1}`, addr: `${h.routerIp}/24` },
      b: { role: h.role, ifname: 'eth0', addr: `${h.ip}/24` },
      mtu: INTER_REGION_MTU,
    })),
    nextHops: [],
    // Only the first host has the burst-credit bucket (as in seed-004); 500 MB outlasts a short mesh run.
    credits: { rate: '200mbit', burstBytes: 500_000_000, peakrate: '1gbit', mtu: 65536 },
    ports: LAB_PORTS,
  };
}

/** Every role any profile uses (for `down` and `status`, which may not know the profile). */
export const ALL_ROLES: readonly LabRole[] = [...new Set(LAB_PROFILES.flatMap((n) => labProfile(n).roles))];

/** Namespace name of a role under a prefix. */
export function nsName(prefix: string, role: LabRole): string {
  return `${prefix}${role}`;
}

/** The namespaces of a profile, or (without one) of every profile: what `down` may have to remove. */
export function allNamespaces(prefix: string, profile?: LabProfile): string[] {
  return (profile?.roles ?? ALL_ROLES).map((r) => nsName(prefix, r));
}

/** Address without its prefix length. */
export function hostOf(cidrAddr: string): string {
  return cidrAddr.split('/')[0];
}

/** Roles that run target servers (one set per distinct target namespace). */
export function targetRoles(profile: LabProfile): LabRole[] {
  return [...new Set([...(profile.serverRoles ?? []), ...profile.paths.map((p) => p.targetRole)])];
}

/** Helper delay (µs, one direction) per queue, from target RTTs minus the measured base RTT. */
/** Queues grouped by the namespace that applies them. */
export function queuesByRole(profile: LabProfile): Map<LabRole, number[]> {
  const m = new Map<LabRole, number[]>();
  for (const p of profile.paths) {
    if (p.match.length === 0) continue; // no delay of its own
    const list = m.get(p.delayRole) ?? [];
    list.push(p.queue);
    m.set(p.delayRole, list);
  }
  return m;
}

export type Argv = string[];

/** Namespaces, their links and addresses (every profile). */
function linkCommands(prefix: string, profile: LabProfile): Argv[] {
  const ns = (r: LabRole) => nsName(prefix, r);
  const cmds: Argv[] = [];
  for (const r of profile.roles) {
    cmds.push(['ip', 'netns', 'add', ns(r)]);
    cmds.push(['ip', '-n', ns(r), 'link', 'set', 'lo', 'up']);
  }
  for (const l of profile.links) {
    // Created inside one lab namespace with the peer moved straight into the other: nothing
    // ever appears in the host's root namespace.
    cmds.push([
      'ip',
      '-n',
      ns(l.a.role),
      'link',
      'add',
      l.a.ifname,
      'type',
      'veth',
      'peer',
      'name',
      l.b.ifname,
      'netns',
      ns(l.b.role),
    ]);
    for (const end of [l.a, l.b]) {
      cmds.push(['ip', '-n', ns(end.role), 'addr', 'add', end.addr, 'dev', end.ifname]);
      cmds.push(['ip', '-n', ns(end.role), 'link', 'set', end.ifname, 'mtu', String(l.mtu), 'up']);
    }
  }
  return cmds;
}

/** Namespace creation and wiring: links, addresses, forwarding, routes, MTUs. */
export function buildTopologyCommands(prefix: string, profile: LabProfile): Argv[] {
  if (profile.name === 'seed-004' || profile.name === 'mesh') return buildStarCommands(prefix, profile);
  const ns = (r: LabRole) => nsName(prefix, r);
  const cmds = linkCommands(prefix, profile);
  // Routers forward; reverse-path filtering off so a half-swapped (asymmetric) state still works.
  for (const r of ['router', 'peering', 'tgw', 'osaka'] as LabRole[]) {
    cmds.push(['ip', 'netns', 'exec', ns(r), 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
    cmds.push(['ip', 'netns', 'exec', ns(r), 'sysctl', '-qw', 'net.ipv4.conf.all.rp_filter=0']);
    cmds.push(['ip', 'netns', 'exec', ns(r), 'sysctl', '-qw', 'net.ipv4.conf.default.rp_filter=0']);
  }
  // Osaka target address lives on the Osaka namespace's loopback (the "instance" behind its router).
  const osakaTarget = profile.paths.find((p) => p.targetRole === 'osaka')?.targetIp ?? '10.1.1.10';
  cmds.push(['ip', '-n', ns('osaka'), 'addr', 'add', `${osakaTarget}/32`, 'dev', 'lo']);
  // Targets on a loopback (path F): the address, and the router's host route to it.
  for (const p of profile.paths.filter((x) => x.loopbackTarget)) {
    const link = profile.links.find(
      (l) =>
        (l.a.role === 'router' && l.b.role === p.targetRole) || (l.b.role === 'router' && l.a.role === p.targetRole),
    );
    const end = link && (link.a.role === p.targetRole ? link.a : link.b);
    if (!end) throw new Error(`no link from the router to ${p.targetRole} for path ${p.id}`);
    cmds.push(['ip', '-n', ns(p.targetRole), 'addr', 'add', `${p.targetIp}/32`, 'dev', 'lo']);
    cmds.push(['ip', '-n', ns('router'), 'route', 'add', `${p.targetIp}/32`, 'via', hostOf(end.addr)]);
  }
  // Default routes towards the Tokyo router for hosts on its side.
  for (const r of ['client', 'a', 'b', 'e'] as LabRole[]) {
    const link = profile.links.find((l) => l.b.role === r || l.a.role === r);
    const routerEnd = link && (link.a.role === 'router' ? link.a : link.b);
    if (routerEnd) cmds.push(['ip', '-n', ns(r), 'route', 'add', 'default', 'via', hostOf(routerEnd.addr)]);
  }
  // Hop namespaces know both sides statically; only the routers' entries are swapped.
  for (const h of profile.nextHops) {
    const toTokyo = profile.links.find((l) => l.b.role === h.role && l.a.role === 'router');
    const toOsaka = profile.links.find((l) => l.a.role === h.role && l.b.role === 'osaka');
    if (toTokyo) cmds.push(['ip', '-n', ns(h.role), 'route', 'add', TOKYO_CIDR, 'via', hostOf(toTokyo.a.addr)]);
    if (toOsaka) cmds.push(['ip', '-n', ns(h.role), 'route', 'add', OSAKA_CIDR, 'via', hostOf(toOsaka.b.addr)]);
  }
  const active = profile.nextHops.find((h) => h.name === profile.defaultNextHop)!;
  cmds.push(['ip', '-n', ns('router'), 'route', 'replace', OSAKA_CIDR, 'via', active.tokyoVia]);
  cmds.push(['ip', '-n', ns('osaka'), 'route', 'replace', TOKYO_CIDR, 'via', active.osakaVia]);
  // A small ephemeral port range in the client namespace (per namespace), for TIME_WAIT pressure.
  if (profile.clientPortRange) {
    const [lo, hi] = profile.clientPortRange;
    cmds.push(['ip', 'netns', 'exec', ns('client'), 'sysctl', '-qw', `net.ipv4.ip_local_port_range=${lo} ${hi}`]);
  }
  // The client NIC's receive side: a plain token bucket on the router's link towards the client.
  if (profile.clientIngressRate) {
    const link = profile.links.find((l) => l.a.role === 'client' && l.b.role === 'router')!;
    cmds.push([
      ...['tc', '-n', ns('router'), 'qdisc', 'replace', 'dev', link.b.ifname, 'root', 'tbf'],
      ...['rate', profile.clientIngressRate, 'burst', '262144', 'latency', '50ms'],
    ]);
  }
  // PrivateLink passes no ICMP echo (seed 000: ping 100 % loss through the NLB).
  cmds.push([
    'ip',
    'netns',
    'exec',
    ns('e'),
    'iptables',
    '-A',
    'INPUT',
    '-p',
    'icmp',
    '--icmp-type',
    'echo-request',
    '-j',
    'DROP',
  ]);
  return cmds;
}

/** The seed-004 star: hosts on links to one forwarding router, each with a default route to it. */
function buildStarCommands(prefix: string, profile: LabProfile): Argv[] {
  const ns = (r: LabRole) => nsName(prefix, r);
  const cmds = linkCommands(prefix, profile);
  cmds.push(['ip', 'netns', 'exec', ns('router'), 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
  for (const l of profile.links)
    cmds.push(['ip', '-n', ns(l.b.role), 'route', 'add', 'default', 'via', hostOf(l.a.addr)]);
  return cmds;
}

/** iptables rules sending each path's packets to its delay queue (both directions). */
export function buildDelayRuleCommands(prefix: string, profile: LabProfile): Argv[] {
  const cmds: Argv[] = [];
  for (const p of profile.paths) {
    for (const m of p.match) {
      cmds.push([
        'ip',
        'netns',
        'exec',
        nsName(prefix, p.delayRole),
        'iptables',
        '-A',
        'FORWARD',
        ...m,
        '-j',
        'NFQUEUE',
        '--queue-num',
        String(p.queue),
        '--queue-bypass',
      ]);
    }
  }
  return cmds;
}

/** tc's rate units (tc(8) "RATES"), matched case-insensitively as tc does: "bps" is BYTES per second. */
const TC_RATE_UNITS: Record<string, number> = {
  '': 1,
  bit: 1,
  kbit: 1e3,
  mbit: 1e6,
  gbit: 1e9,
  tbit: 1e12,
  kibit: 2 ** 10,
  mibit: 2 ** 20,
  gibit: 2 ** 30,
  tibit: 2 ** 40,
  bps: 8,
  kbps: 8e3,
  mbps: 8e6,
  gbps: 8e9,
  tbps: 8e12,
  kibps: 8 * 2 ** 10,
  mibps: 8 * 2 ** 20,
  gibps: 8 * 2 ** 30,
  tibps: 8 * 2 ** 40,
};

/**
 * A tc rate ("200mbit", "1gbit", "125MBps") in bit/s. Hand-written: tc's unit grammar is small and
 * has no library here; a bare number is bit/s, as in tc.
 */
export function tcRateBps(rate: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(rate);
  const scale = m ? TC_RATE_UNITS[m[2].toLowerCase()] : undefined;
  if (!m || scale === undefined) throw new RangeError(`not a tc rate: "${rate}"`);
  return Math.round(Number(m[1]) * scale);
}

/** The token bucket that emulates network burst credits on the client's egress. */
export function buildCreditCommand(
  prefix: string,
  credits: LabCredits,
  op: 'add' | 'replace' = 'replace',
  clientRole: LabRole = 'client',
): Argv {
  return [
    'tc',
    '-n',
    nsName(prefix, clientRole),
    'qdisc',
    op,
    'dev',
    'eth0',
    'root',
    'handle',
    '1:',
    'tbf',
    'rate',
    credits.rate,
    'burst',
    String(credits.burstBytes),
    'latency',
    '100ms',
    'peakrate',
    credits.peakrate,
    'mtu',
    String(credits.mtu),
  ];
}

/**
 * haproxy's configuration for one lab proxy: one frontend, one server, no health checks (the
 * server starts with the lab), keep-alive and connection reuse towards the server for L7 (as
 * Envoy and Lattice pool upstream connections), plain splicing for L4.
 */
export function haproxyConfig(p: LabProxy): string {
  const http = p.mode === 'http';
  return [
    'global',
    '  maxconn 8192',
    '  nbthread 1',
    'defaults',
    `  mode ${p.mode}`,
    '  timeout connect 2s',
    '  timeout client 30s',
    '  timeout server 30s',
    ...(http ? ['  option http-keep-alive', '  http-reuse always', '  timeout http-keep-alive 30s'] : []),
    `frontend ${p.name}`,
    `  bind ${p.listen.ip}:${p.listen.port}`,
    '  maxconn 8192',
    `  default_backend ${p.name}-up`,
    `backend ${p.name}-up`,
    `  server s1 ${p.server.ip}:${p.server.port} maxconn 8192`,
    '',
  ].join('\n');
}
