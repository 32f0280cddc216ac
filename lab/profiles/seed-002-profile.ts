import { matchBothWays as both, type LabProfile } from './lab-profile.js';
import { seed000Profile } from './seed-000-profile.js';

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
