/**
 * The seed-002 plan from the seed-002 testbed's outputs (infra/testbed/seed002.ts), in the shape
 * `cdk deploy --outputs-file` writes (stack → output key → value): paths A, B, D, F, G, G-prime (G′),
 * H, L1, L2 with the seed's ids, every one probed from a task of the client service (kind
 * ecs-task), HTTP as one keep-alive × concurrency × body matrix, L1/L2 TCP connect. The output
 * keys live here and the stack imports them, so they cannot drift apart. Pure.
 */
import { z } from 'zod';
import { TARGET_PORTS } from '../../core/target-ports.js';
import { TestbedOutputsError } from './plan-from-outputs.js';
import {
  HOURS_PER_MONTH,
  INSTANCE_PER_HOUR,
  INTERFACE_ENDPOINT_PER_AZ_HOUR,
  NLB_PER_HOUR,
  TGW_ATTACHMENT_PER_HOUR,
} from './testbed-cost.js';

export const SEED002_OUTPUTS = {
  region: 'Seed002Region',
  cluster: 'Seed002Cluster',
  clientService: 'Seed002ClientService',
  /** The client task's net.ipv4.tcp_tw_reuse (ECS systemControls): the plan's http probes state it. */
  tcpTwReuse: 'Seed002TcpTwReuse',
  queueUrl: 'Seed002ClientQueueUrl',
  /** JSON { A, B, F, L1, L2 }: the Cloud Map names of the direct-IP servers' tasks. */
  serverNames: 'Seed002ServerNames',
  serviceConnectHost: 'Seed002ServiceConnectHost',
  endpointDnsName: 'Seed002EndpointDnsName',
  nlbDnsName: 'Seed002NlbDnsName',
  latticeDnsName: 'Seed002LatticeDnsName',
  /** Optional, added by the operator: JSON { A: ip, … } of the running tasks (docs/testbed.md). */
  taskIps: 'Seed002TaskIps',
} as const;

/** A stack output that maps path ids to hosts (server names, task IPs): JSON text in CloudFormation. */
const hostsSchema = z.record(z.string(), z.string());

export const SEED002_PATH_IDS = ['A', 'B', 'D', 'F', 'G', 'G-prime', 'H', 'L1', 'L2'] as const;

/** The seed's HTTP matrix: keep-alive on/off × concurrency 1/16 × body 1 KB / 1 MB, 10,000 requests × 3 trials. */
export function seed002HttpProbes(count = 10_000, trials = 3, tcpTwReuse?: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const keepAlive of [true, false])
    for (const concurrency of [1, 16])
      for (const payloadBytes of [1024, 1_048_576])
        out.push({
          kind: 'http',
          name: `http-${keepAlive ? 'ka' : 'noka'}-c${concurrency}-${payloadBytes === 1024 ? '1k' : '1m'}`,
          count,
          trials,
          concurrency,
          keepAlive,
          payloadBytes,
          ...(tcpTwReuse === undefined ? {} : { tcpTwReuse }),
        });
  return out;
}

export function isSeed002Outputs(outputs: Record<string, Record<string, string>>): boolean {
  return Object.values(outputs).some((m) => typeof m?.[SEED002_OUTPUTS.cluster] === 'string');
}

/** The nine-path plan; a missing or malformed output is named in TestbedOutputsError. */
export function seed002Plan(
  outputs: Record<string, Record<string, string>>,
  opts: { name?: string; count?: number; trials?: number } = {},
) {
  const stack = Object.values(outputs).find((m) => typeof m?.[SEED002_OUTPUTS.cluster] === 'string') ?? {};
  const problems: string[] = [];
  const need = (k: keyof typeof SEED002_OUTPUTS): string => {
    const v = stack[SEED002_OUTPUTS[k]];
    if (typeof v !== 'string' || v === '') {
      problems.push(`${SEED002_OUTPUTS[k]}: missing`);
      return '';
    }
    return v;
  };
  const json = (k: keyof typeof SEED002_OUTPUTS, optional = false): Record<string, string> => {
    const v = stack[SEED002_OUTPUTS[k]];
    if (v === undefined && optional) return {};
    try {
      const o = hostsSchema.safeParse(JSON.parse(v ?? ''));
      if (o.success) return o.data;
    } catch {
      // reported below
    }
    problems.push(`${SEED002_OUTPUTS[k]}: expected a JSON object of path id → host, got ${JSON.stringify(v)}`);
    return {};
  };
  const region = need('region');
  const cluster = need('cluster');
  const service = need('clientService');
  const queueUrl = need('queueUrl');
  // The task's tcp_tw_reuse (an older stack has no such output): each trial records it in force,
  // and a trial that finds another value says it could not be set.
  const twText = stack[SEED002_OUTPUTS.tcpTwReuse];
  const tcpTwReuse = twText === undefined ? undefined : Number(twText);
  if (tcpTwReuse !== undefined && ![0, 1, 2].includes(tcpTwReuse))
    problems.push(`${SEED002_OUTPUTS.tcpTwReuse}: expected 0, 1 or 2, got ${JSON.stringify(twText)}`);
  const names = json('serverNames');
  const ips = json('taskIps', true);
  const direct = (id: string): string => {
    const h = ips[id] ?? names[id];
    if (typeof h !== 'string' || h === '') problems.push(`${SEED002_OUTPUTS.serverNames}: no host for path ${id}`);
    return h ?? '';
  };
  const hosts = {
    A: direct('A'),
    B: direct('B'),
    D: need('serviceConnectHost'),
    F: direct('F'),
    G: need('endpointDnsName'),
    'G-prime': need('nlbDnsName'),
    H: need('latticeDnsName'),
    L1: direct('L1'),
    L2: direct('L2'),
  };
  if (problems.length) throw new TestbedOutputsError(problems);
  const http = TARGET_PORTS.http;
  const tcpConnect = [{ kind: 'tcp-connect', count: 3000, intervalMs: 20, timeoutMs: 400 }];
  const by = Object.keys(ips).length ? 'task IP' : 'Cloud Map name of the task';
  return {
    name: opts.name ?? 'seed-002-ecs-http',
    defaults: {
      client: { kind: 'ecs-task', cluster, service, queueUrl, region },
      reboot: false,
      creditWaitSeconds: 30,
      probes: seed002HttpProbes(opts.count, opts.trials, tcpTwReuse),
    },
    paths: [
      { id: 'A', method: 'same-vpc', label: `same VPC, direct (${by})`, target: { host: hosts.A, port: http } },
      { id: 'B', method: 'vpc-peering', label: `VPC peering, direct (${by})`, target: { host: hosts.B, port: http } },
      {
        id: 'D',
        method: 'service-connect',
        label: 'VPC peering + ECS Service Connect (Envoy on both sides)',
        target: { host: hosts.D, port: http },
      },
      {
        id: 'F',
        method: 'transit-gateway',
        label: `Transit Gateway, direct (${by})`,
        target: { host: hosts.F, port: http },
      },
      {
        id: 'G',
        method: 'privatelink',
        label: 'PrivateLink (interface endpoint → endpoint service → NLB)',
        target: { host: hosts.G, port: http },
      },
      {
        id: 'G-prime',
        method: 'nlb',
        label: "VPC peering + the same internal NLB directly (G − G-prime is PrivateLink's own cost)",
        target: { host: hosts['G-prime'], port: http },
      },
      { id: 'H', method: 'lattice', label: 'VPC Lattice (HTTP listener)', target: { host: hosts.H, port: 80 } },
      {
        id: 'L1',
        method: 'same-vpc',
        label: 'same AZ (TCP connect)',
        target: { host: hosts.L1, port: TARGET_PORTS.tcp },
        probes: tcpConnect,
      },
      {
        id: 'L2',
        method: 'same-vpc',
        label: 'cross AZ (TCP connect)',
        target: { host: hosts.L2, port: TARGET_PORTS.tcp },
        probes: tcpConnect,
      },
    ],
    compare: SEED002_COMPARE.map((c) => ({ ...c })),
    ratios: SEED002_RATIOS.map((r) => ({ ...r })),
  };
}

/**
 * Seed 002's within-path ratios, on every path with the HTTP matrix: keep-alive off ÷ on (a new
 * TCP connection per request, ≈ 3.5× in the seed) and 16 connections ÷ 1 (≈ 4.0×), at 1 KB.
 * The lab twin's plan asks for the same.
 */
export const SEED002_RATIOS = [
  { probe: 'http-noka-c1-1k', baseline: 'http-ka-c1-1k' },
  { probe: 'http-ka-c16-1k', baseline: 'http-ka-c1-1k' },
] as const;

/**
 * Seed 002's comparisons: B − A (peering), F − B (Transit Gateway), D − B (Service Connect),
 * G − B (PrivateLink), H − B (Lattice), G − G′ (PrivateLink's own cost over the NLB), and the
 * AZ pair L2 − L1. The lab twin's plan (plans/lab-seed-002.json) asks for the same.
 */
export const SEED002_COMPARE = [
  { path: 'B', baseline: 'A' },
  { path: 'F', baseline: 'B' },
  { path: 'D', baseline: 'B' },
  { path: 'G', baseline: 'B' },
  { path: 'H', baseline: 'B' },
  { path: 'G', baseline: 'G-prime' },
  { path: 'L2', baseline: 'L1' },
] as const;

/** VPC Lattice, per service-hour (Tokyo; AWS public price list, not from a seed). */
export const LATTICE_SERVICE_PER_HOUR = 0.0325;
/** NAT gateway, per hour (Tokyo; AWS public price list): one per VPC pulls public images and reaches ECS. */
export const NAT_GATEWAY_PER_HOUR = 0.062;

/** What infra/testbed/seed002.ts creates that bills by the hour (the synth test checks the counts). */
export const SEED002_INVENTORY = {
  instanceType: 'c6i.large',
  /** One client host + one host per server service (A, B, D, F, G, H, L1, L2). */
  instances: 9,
  /** Client and F-server VPC attachments. */
  tgwAttachments: 2,
  /** The PrivateLink consumer endpoint in two AZs. */
  interfaceEndpointAzs: 2,
  nlbs: 1,
  latticeServices: 1,
  natGateways: 3,
} as const;

/** The fixed monthly bill of the seed-002 testbed (730 h), one line per item, and its total. */
export function seed002CostNote(inv = SEED002_INVENTORY): string {
  const h = HOURS_PER_MONTH;
  const price = INSTANCE_PER_HOUR[inv.instanceType] ?? 0;
  const lines: [string, string, number][] = [
    ['ECS hosts (EC2)', `${inv.instances} × ${inv.instanceType} × $${price}/h`, inv.instances * price * h],
    [
      'NAT gateways',
      `${inv.natGateways} × $${NAT_GATEWAY_PER_HOUR}/h (+ $/GB by use)`,
      inv.natGateways * NAT_GATEWAY_PER_HOUR * h,
    ],
    [
      'Transit Gateway attachments',
      `${inv.tgwAttachments} × $${TGW_ATTACHMENT_PER_HOUR}/h`,
      inv.tgwAttachments * TGW_ATTACHMENT_PER_HOUR * h,
    ],
    [
      'Interface endpoint (PrivateLink)',
      `${inv.interfaceEndpointAzs} endpoint-AZs × $${INTERFACE_ENDPOINT_PER_AZ_HOUR}/h`,
      inv.interfaceEndpointAzs * INTERFACE_ENDPOINT_PER_AZ_HOUR * h,
    ],
    ['Network Load Balancer', `${inv.nlbs} × $${NLB_PER_HOUR}/h (+ NLCU by use)`, inv.nlbs * NLB_PER_HOUR * h],
    [
      'VPC Lattice service',
      `${inv.latticeServices} × $${LATTICE_SERVICE_PER_HOUR}/h (+ $/GB and requests by use)`,
      inv.latticeServices * LATTICE_SERVICE_PER_HOUR * h,
    ],
  ];
  const total = lines.reduce((n, l) => n + l[2], 0);
  return [
    'seed-002 testbed, fixed cost per month (730 h, Tokyo prices; estimates):',
    ...lines.map(([item, detail, m]) => `  ${item.padEnd(34)} ${detail.padEnd(48)} $${m.toFixed(2)}`),
    `  ${'total'.padEnd(34)} ${''.padEnd(48)} $${total.toFixed(2)}`,
    'Destroy it after the measurement (cdk destroy -c testbed=seed-002): a day costs about 1/30 of this.',
  ].join('\n');
}
