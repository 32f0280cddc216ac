/**
 * The lab's seed-000 profile: a local twin of seed 000's Tokyo/Osaka paths.
 *
 *   pb-client ──c0── pb-router ──a0── pb-a        (A same AZ)
 *                      │ ├──b0── pb-b             (B cross AZ)
 *                      │ ├──e0── pb-e             (E PrivateLink-like endpoint, no ICMP echo)
 *                      │ ├──p0── pb-peering ──┐   (C, route 10.1.0.0/16 via 10.255.1.2)
 *                      │ └──t0── pb-tgw ──────┤   (D, route 10.1.0.0/16 via 10.255.2.2)
 *                      │                      └── pb-osaka (10.1.1.10; return route via p0/t0;
 *                      │                                10.1.2.10 the NLB in front of it, no ICMP echo)
 * Delays live in the FORWARD chain of the namespace that owns a path (router for A/B/E, the hop
 * namespace for C/D), half per direction, so swapping the route genuinely changes the RTT.
 * Path F is not one of the seed's: a bimodal path (two delays mixed) to the same host as A,
 * under another address (10.0.5.10 on pb-a's loopback), for the distribution-shape figures.
 * C-NLB and D-NLB (profile seed-000-nlb, below) are seed 000 §6.2's NLB-direct paths: the
 * PrivateLink provider's internal NLB reached over the peering or the Transit Gateway, which
 * separates the NLB's cost from PrivateLink's own (seed: +1.21 ms over C, +0.71 ms over D;
 * E − D-NLB ≈ +1.7 ms). The NLB is a second address on pb-osaka (10.1.2.10); the hop's own rule
 * for it, ahead of the hop's catch-all (buildDelayRuleCommands), gives it the hop's delay plus
 * the NLB's.
 */
import { matchBothWays as both, IN_REGION_MTU, INTER_REGION_MTU, LAB_PORTS, type LabProfile } from './lab-profile.js';

/** Roles of the seed-000 profile's namespaces; the namespace name is `<prefix><role>`. */
export const LAB_ROLES = ['client', 'router', 'a', 'b', 'e', 'peering', 'tgw', 'osaka'] as const;

/** The lab's stand-in for the PrivateLink provider's internal NLB: an address of pb-osaka. */
export const NLB_IP = '10.1.2.10';

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
 * Seed 000's profile with its NLB-direct paths C-NLB and D-NLB beside A–F (`lab up --profile
 * seed-000-nlb`; plans/lab-seed-000-nlb.json and plans/lab-ping.json): a profile of its own, so
 * that the seed-000 lab everything else uses calibrates two paths fewer.
 */
export function seed000NlbProfile(): LabProfile {
  const base = seed000Profile();
  return {
    ...base,
    name: 'seed-000-nlb',
    paths: [
      ...base.paths,
      {
        // Seed 000 §6.2: 8.89 + 1.21 ms (plans/lab-seed-000-nlb.json measures C-NLB and D-NLB).
        id: 'C-NLB',
        label: 'Tokyo 1a → Osaka NLB (VPC peering, NLB direct)',
        targetRole: 'osaka',
        targetIp: NLB_IP,
        rttMs: 10.1,
        delayRole: 'peering',
        queue: 7,
        match: both(`${NLB_IP}/32`),
        nextHop: 'peering',
      },
      {
        // Seed 000 §6.2: 11.01 + 0.71 ms.
        id: 'D-NLB',
        label: 'Tokyo 1a → Osaka NLB (Transit Gateway peering, NLB direct)',
        targetRole: 'osaka',
        targetIp: NLB_IP,
        rttMs: 11.72,
        delayRole: 'tgw',
        queue: 8,
        match: both(`${NLB_IP}/32`),
        nextHop: 'tgw',
      },
    ],
  };
}
