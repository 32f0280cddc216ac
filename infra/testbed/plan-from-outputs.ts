/**
 * Builds the seed-000 A–E plan (same AZ, cross AZ, peering, Transit Gateway, PrivateLink, and
 * §6.2's NLB-direct paths C-NLB and D-NLB) from the testbed stacks' outputs, in the shape
 * `cdk deploy --outputs-file` writes (stack name → output key → value). The output key names live here, and the CDK testbed
 * imports them, so the stacks and the plan builder cannot drift apart. Pure.
 */
import { PathbenchError } from '../../core/errors.js';
import { TARGET_PORTS } from '../../core/target-ports.js';

/** CfnOutput keys of the testbed stacks. Prefixed so they never collide with other stacks' outputs. */
export const TESTBED_OUTPUTS = {
  clientInstanceId: 'TestbedClientInstanceId',
  clientRegion: 'TestbedClientRegion',
  clientAzId: 'TestbedClientAzId',
  crossAzId: 'TestbedCrossAzId',
  instanceType: 'TestbedInstanceType',
  sameAzPeerIp: 'TestbedSameAzPeerIp',
  crossAzPeerIp: 'TestbedCrossAzPeerIp',
  clientVpcCidr: 'TestbedClientVpcCidr',
  clientRouteTableId: 'TestbedClientRouteTableId',
  clientTransitGatewayId: 'TestbedClientTransitGatewayId',
  vpcPeeringConnectionId: 'TestbedVpcPeeringConnectionId',
  tgwPeeringAttachmentId: 'TestbedTgwPeeringAttachmentId',
  privateLinkEndpointId: 'TestbedPrivateLinkEndpointId',
  privateLinkDnsName: 'TestbedPrivateLinkDnsName',
  peerRegion: 'TestbedPeerRegion',
  peerAzId: 'TestbedPeerAzId',
  peerInstanceId: 'TestbedPeerInstanceId',
  peerTargetIp: 'TestbedPeerTargetIp',
  peerVpcCidr: 'TestbedPeerVpcCidr',
  peerRouteTableId: 'TestbedPeerRouteTableId',
  peerTransitGatewayId: 'TestbedPeerTransitGatewayId',
  endpointServiceName: 'TestbedEndpointServiceName',
  nlbArn: 'TestbedNlbArn',
  nlbDnsName: 'TestbedNlbDnsName',
} as const;
export type TestbedOutputName = keyof typeof TESTBED_OUTPUTS;

/** Ports the target servers listen on (user data) and the plan probes: the target ports the lab uses too. */
export const TESTBED_PORTS = TARGET_PORTS;

/** Path ids whose traffic crosses the region boundary (billed inter-region transfer). */
export const TESTBED_INTER_REGION_PATHS = ['C', 'C-NLB', 'D', 'D-NLB', 'E'] as const;

/** Outputs the plan cannot be built without. */
const REQUIRED: readonly TestbedOutputName[] = [
  'clientInstanceId',
  'clientRegion',
  'sameAzPeerIp',
  'crossAzPeerIp',
  'clientVpcCidr',
  'clientRouteTableId',
  'clientTransitGatewayId',
  'vpcPeeringConnectionId',
  'privateLinkDnsName',
  'peerRegion',
  'peerTargetIp',
  'peerVpcCidr',
  'peerRouteTableId',
  'peerTransitGatewayId',
];

/** The outputs file is missing values or holds conflicting ones; `problems` lists each. */
export class TestbedOutputsError extends PathbenchError {
  constructor(readonly problems: string[]) {
    super(`testbed outputs are incomplete:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}

export interface TestbedPlanOptions {
  /** Plan name (default "tokyo-osaka"). */
  name?: string;
  /** iperf3 seconds per repeat (seed: 30). */
  durationSeconds?: number;
  /** iperf3 repeats per probe (seed: 3). */
  repeats?: number;
  /** UDP iperf3 bitrate; bounded on purpose (an unbounded sender measures the instance, not the path). */
  udpBitrate?: string;
  /** tcp-connect handshakes (seed: 300). */
  tcpConnectCount?: number;
  /** Seconds to wait after the client restarts before probing. */
  creditWaitSeconds?: number;
}

/** A plan as written (the JSON `parsePlan` accepts). */
export interface TestbedPlanJson {
  name: string;
  defaults: {
    client: { instanceId: string; region: string };
    reboot: boolean;
    creditWaitSeconds: number;
    probes: Record<string, unknown>[];
  };
  paths: {
    id: string;
    label: string;
    target: { host: string; port: number };
    routes?: { region: string; routeTableId: string; destination: string; via: Record<string, string> }[];
    skipProbes?: { probe: string; reason: string }[];
  }[];
  /** Differences the report states: path − baseline. */
  compare: { path: string; baseline: string }[];
}

/** Why the PrivateLink path skips probes (seed 000 §3.2 and §9). */
export const PRIVATELINK_SKIPS = [
  { probe: 'iperf3-udp', reason: 'PrivateLink NLB passes no UDP without IPv6 source NAT' },
  { probe: 'mtu', reason: 'no ICMP through an NLB' },
] as const;

/** Why the NLB-direct paths skip probes: the provider NLB has TCP listeners only, and passes no ICMP. */
export const NLB_DIRECT_SKIPS = [
  { probe: 'iperf3-udp', reason: 'the PrivateLink provider NLB has TCP listeners only' },
  { probe: 'mtu', reason: 'no ICMP through an NLB' },
] as const;

/**
 * Merge every stack's outputs into one map keyed by output key. The same key in two stacks is
 * fine when the values agree (e.g. a region) and a problem when they differ.
 */
function flatten(outputs: Record<string, Record<string, string>>): { values: Map<string, string>; problems: string[] } {
  const values = new Map<string, string>();
  const from = new Map<string, string>();
  const problems: string[] = [];
  for (const [stack, map] of Object.entries(outputs)) {
    if (typeof map !== 'object' || map === null) continue;
    for (const [key, value] of Object.entries(map)) {
      if (typeof value !== 'string') continue;
      const prev = values.get(key);
      if (prev !== undefined && prev !== value)
        problems.push(
          `${key}: ${stack} says ${JSON.stringify(value)} but ${from.get(key)} says ${JSON.stringify(prev)}`,
        );
      else {
        values.set(key, value);
        from.set(key, stack);
      }
    }
  }
  return { values, problems };
}

/**
 * Build the A–E plan of seed 000 from deployed testbed outputs.
 * A same-AZ peer, B cross-AZ peer, C Osaka via VPC peering, D Osaka via Transit Gateway (C and D
 * carry routes for both regions' tables, so the pipeline swaps them), E Osaka via the PrivateLink
 * endpoint's own DNS name (UDP iperf3 and MTU skipped with reasons). With the NLB's DNS name in
 * the outputs, seed 000 §6.2's C-NLB and D-NLB follow C and D: the same routes, to the PrivateLink
 * provider's internal NLB instead of the instance, which separates the NLB's cost from
 * PrivateLink's own (compared: C-NLB − C, D-NLB − D, E − D-NLB; the rest as a ladder, B − A …).
 * @throws TestbedOutputsError listing every missing or conflicting output at once.
 */
export function planFromTestbedOutputs(
  outputs: Record<string, Record<string, string>>,
  opts: TestbedPlanOptions = {},
): TestbedPlanJson {
  const { values, problems } = flatten(outputs);
  for (const name of REQUIRED) {
    const key = TESTBED_OUTPUTS[name];
    const v = values.get(key);
    if (v === undefined || v.trim() === '') problems.push(`${key}: missing (expected in a PathbenchTestbed* stack)`);
  }
  if (problems.length > 0) throw new TestbedOutputsError(problems);
  const get = (name: TestbedOutputName): string => values.get(TESTBED_OUTPUTS[name])!;
  const opt = (name: TestbedOutputName): string | undefined => values.get(TESTBED_OUTPUTS[name]);

  const duration = opts.durationSeconds ?? 30;
  const repeats = opts.repeats ?? 3;
  const iperf3 = { durationSeconds: duration, repeats, intervalSeconds: 1, port: TESTBED_PORTS.iperf3 };
  const probes: Record<string, unknown>[] = [
    // Seed 000 §5: 300 handshakes 0.2 s apart; a 0.4 s timeout counts as loss (SYN retry is ~1 s).
    {
      kind: 'tcp-connect',
      name: 'tcp-connect',
      count: opts.tcpConnectCount ?? 300,
      intervalMs: 200,
      timeoutMs: 400,
      port: TESTBED_PORTS.tcp,
    },
    { kind: 'iperf3', name: 'iperf3-tcp-p1', mode: 'tcp', streams: 1, ...iperf3 },
    { kind: 'iperf3', name: 'iperf3-tcp-p4', mode: 'tcp', streams: 4, ...iperf3 },
    { kind: 'iperf3', name: 'iperf3-udp', mode: 'udp', streams: 1, bitrate: opts.udpBitrate ?? '1G', ...iperf3 },
    {
      kind: 'http',
      name: 'http',
      count: 1000,
      concurrency: 1,
      keepAlive: true,
      payloadBytes: 1024,
      trials: 3,
      timeoutMs: 2000,
      port: TESTBED_PORTS.http,
    },
    { kind: 'mtu', name: 'mtu', min: 1200, max: 9001, timeoutMs: 1000 },
  ];

  const clientRegion = get('clientRegion');
  const peerRegion = get('peerRegion');
  const clientAz = opt('clientAzId') ?? 'client AZ';
  const crossAz = opt('crossAzId') ?? 'another AZ';
  const peerAz = opt('peerAzId') ?? peerRegion;
  const peerIp = get('peerTargetIp');
  const target = (host: string) => ({ host, port: TESTBED_PORTS.tcp });
  // Both regions' tables hold the peer CIDR; only one next hop may own it at a time (seed §4.3).
  const routes = (client: Record<string, string>, peer: Record<string, string>) => [
    {
      region: clientRegion,
      routeTableId: get('clientRouteTableId'),
      destination: get('peerVpcCidr'),
      via: client,
    },
    {
      region: peerRegion,
      routeTableId: get('peerRouteTableId'),
      destination: get('clientVpcCidr'),
      via: peer,
    },
  ];

  const peering = routes(
    { vpcPeeringConnectionId: get('vpcPeeringConnectionId') },
    { vpcPeeringConnectionId: get('vpcPeeringConnectionId') },
  );
  const tgwRoutes = routes(
    { transitGatewayId: get('clientTransitGatewayId') },
    { transitGatewayId: get('peerTransitGatewayId') },
  );
  // The internal NLB's DNS name resolves to its nodes' private addresses; with cross-zone load
  // balancing off, only the target's AZ (the one with a healthy target) is in the answer.
  const nlbDns = opt('nlbDnsName')?.trim() || undefined;
  const nlbDirect = (via: 'C' | 'D', r: ReturnType<typeof routes>, how: string) =>
    nlbDns
      ? [
          {
            id: `${via}-NLB`,
            label: `${clientAz} → ${peerAz} NLB (${how}, NLB direct: seed 000 §6.2)`,
            target: target(nlbDns),
            routes: r,
            skipProbes: NLB_DIRECT_SKIPS.map((s) => ({ ...s })),
          },
        ]
      : [];

  return {
    name: opts.name ?? 'tokyo-osaka',
    defaults: {
      client: { instanceId: get('clientInstanceId'), region: clientRegion },
      // Seed §5.1: stop → start before every path, or burst credits decide the throughput.
      reboot: true,
      creditWaitSeconds: opts.creditWaitSeconds ?? 30,
      probes,
    },
    paths: [
      { id: 'A', label: `${clientAz} → ${clientAz} (same AZ)`, target: target(get('sameAzPeerIp')) },
      { id: 'B', label: `${clientAz} → ${crossAz} (cross AZ)`, target: target(get('crossAzPeerIp')) },
      {
        id: 'C',
        label: `${clientAz} → ${peerAz} (inter-region VPC peering)`,
        target: target(peerIp),
        routes: peering,
      },
      ...nlbDirect('C', peering, 'inter-region VPC peering'),
      {
        id: 'D',
        label: `${clientAz} → ${peerAz} (Transit Gateway inter-region peering)`,
        target: target(peerIp),
        routes: tgwRoutes,
      },
      ...nlbDirect('D', tgwRoutes, 'Transit Gateway inter-region peering'),
      {
        id: 'E',
        label: `${clientAz} → ${peerAz} (cross-region PrivateLink)`,
        target: target(get('privateLinkDnsName')),
        skipProbes: PRIVATELINK_SKIPS.map((s) => ({ ...s })),
      },
    ],
    compare: [
      { path: 'B', baseline: 'A' },
      { path: 'C', baseline: 'B' },
      { path: 'D', baseline: 'C' },
      { path: 'E', baseline: 'D' },
      ...(nlbDns
        ? [
            { path: 'C-NLB', baseline: 'C' },
            { path: 'D-NLB', baseline: 'D' },
            { path: 'E', baseline: 'D-NLB' },
          ]
        : []),
    ],
  };
}
