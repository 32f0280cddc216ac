/**
 * What the testbed costs: the fixed monthly bill of what its stacks create, and the data-transfer
 * bill of one run of a plan. Unit prices are seed 000 §3.6 (Tokyo, ap-northeast-1) unless a
 * comment says otherwise; they are estimates for a cost note, not a quote. Pure.
 */
import type { ResolvedPlan } from '../../core/resolved-plan.js';

// Seed 000 §3.6, Tokyo unit prices.
/** Transit Gateway attachment (VPC or peering), per attachment-hour. */
export const TGW_ATTACHMENT_PER_HOUR = 0.07;
/** Transit Gateway data processing, per GB. */
export const TGW_DATA_PER_GB = 0.02;
/** Interface VPC endpoint, per endpoint per AZ-hour. */
export const INTERFACE_ENDPOINT_PER_AZ_HOUR = 0.014;
/** VPC endpoint (PrivateLink) data processing, per GB (first PB a month). */
export const ENDPOINT_DATA_PER_GB = 0.01;
/** Network Load Balancer, per hour (NLCU charges come on top and depend on use). */
export const NLB_PER_HOUR = 0.0243;
/** Inter-region transfer Tokyo → Osaka, billed at the sender, per GB. */
export const INTER_REGION_PER_GB = 0.09;
/** The seed's month: 730 hours. */
export const HOURS_PER_MONTH = 730;

/**
 * On-demand instance prices per hour in Tokyo. Not from the seed: AWS public price list
 * (Linux, ap-northeast-1, on-demand); Osaka charges the same for these types.
 */
export const INSTANCE_PER_HOUR: Readonly<Record<string, number>> = {
  'c6i.large': 0.107,
  'c6i.xlarge': 0.214,
  'c6in.large': 0.1323,
  'c7i.large': 0.1124,
  'm6i.large': 0.124,
  'c7g.large': 0.0911,
};

/**
 * Peak ("up to") network bandwidth per instance type in Gbps, from the EC2 instance type
 * documentation; the seed measured 12.41 Gbps with 4 streams on c6i.large.
 */
export const INSTANCE_BURST_GBPS: Readonly<Record<string, number>> = {
  'c6i.large': 12.5,
  'c6i.xlarge': 12.5,
  'c6in.large': 25,
  'c7i.large': 12.5,
  'm6i.large': 12.5,
  'c7g.large': 12.5,
};

/** Counts of the billable things a testbed creates. */
export interface TestbedInventory {
  instanceType: string;
  instances: number;
  /** VPC attachments plus the peering attachment counted on both sides (the seed's "4"). */
  tgwAttachments: number;
  /** Sum over interface endpoints of the AZs each one spans. */
  interfaceEndpointAzs: number;
  nlbs: number;
}

/**
 * What `infra/testbed` deploys with its defaults: 4 instances (client, same-AZ peer, cross-AZ
 * peer, Osaka target); TGW VPC attachments in both regions + the peering attachment on both
 * sides; ssm/ssmmessages/ec2messages in one AZ per VPC (6) + the PrivateLink consumer endpoint
 * in the client AZ (1); one NLB. The infra test checks the template against these counts.
 */
export const DEFAULT_TESTBED_INVENTORY: TestbedInventory = {
  instanceType: 'c6i.large',
  instances: 4,
  tgwAttachments: 4,
  interfaceEndpointAzs: 7,
  nlbs: 1,
};

export interface CostLine {
  item: string;
  detail: string;
  monthly: number;
}

export interface FixedCost {
  lines: CostLine[];
  monthly: number;
  /** The same without instances, i.e. with every instance stopped (EBS not counted). */
  monthlyWithoutInstances: number;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * Fixed monthly cost (730 h) of the testbed, by item. An instance type without a known price
 * is listed with cost 0 and says so, rather than guessing.
 */
export function fixedMonthlyCost(inv: TestbedInventory = DEFAULT_TESTBED_INVENTORY): FixedCost {
  const h = HOURS_PER_MONTH;
  const instancePrice = INSTANCE_PER_HOUR[inv.instanceType];
  const lines: CostLine[] = [
    {
      item: 'Transit Gateway attachments',
      detail: `${inv.tgwAttachments} × $${TGW_ATTACHMENT_PER_HOUR}/h × ${h} h`,
      monthly: inv.tgwAttachments * TGW_ATTACHMENT_PER_HOUR * h,
    },
    {
      item: 'Interface endpoints',
      detail: `${inv.interfaceEndpointAzs} endpoint-AZs × $${INTERFACE_ENDPOINT_PER_AZ_HOUR}/h × ${h} h`,
      monthly: inv.interfaceEndpointAzs * INTERFACE_ENDPOINT_PER_AZ_HOUR * h,
    },
    {
      item: 'Network Load Balancer',
      detail: `${inv.nlbs} × $${NLB_PER_HOUR}/h × ${h} h (+ NLCU by use)`,
      monthly: inv.nlbs * NLB_PER_HOUR * h,
    },
    {
      item: 'Instances',
      detail:
        instancePrice === undefined
          ? `${inv.instances} × ${inv.instanceType} (price unknown, not counted)`
          : `${inv.instances} × ${inv.instanceType} $${instancePrice}/h × ${h} h (0 while stopped)`,
      monthly: inv.instances * (instancePrice ?? 0) * h,
    },
    { item: 'VPC peering', detail: 'no hourly charge', monthly: 0 },
  ];
  const monthly = lines.reduce((s, l) => s + l.monthly, 0);
  const instances = lines.find((l) => l.item === 'Instances')!.monthly;
  return { lines, monthly, monthlyWithoutInstances: monthly - instances };
}

/** Bytes (decimal) an iperf3 sender moves at `gbps` for `seconds`. */
export function bytesAt(gbps: number, seconds: number): number {
  return (gbps * 1e9 * seconds) / 8;
}

/** Parse an iperf3 bitrate ("1G", "500M", "100K", "2000") into Gbps. */
export function bitrateGbps(bitrate: string): number {
  const m = /^(\d+(?:\.\d+)?)([KMG]?)$/.exec(bitrate);
  if (!m) throw new Error(`not an iperf3 bitrate: ${JSON.stringify(bitrate)}`);
  const scale = { '': 1e-9, K: 1e-6, M: 1e-3, G: 1 }[m[2] as '' | 'K' | 'M' | 'G'];
  return Number(m[1]) * scale;
}

export interface PathTransfer {
  pathId: string;
  bytes: number;
  perGb: number;
  cost: number;
}

export interface RunTransferCost {
  paths: PathTransfer[];
  bytes: number;
  cost: number;
}

export interface RunTransferOptions {
  /** Paths whose traffic crosses regions, with their per-GB rate (transfer + processing). */
  interRegion: Readonly<Record<string, number>>;
  /** The sender's bandwidth ceiling; TCP iperf3 is assumed to run at it (an upper bound). */
  bandwidthGbps: number;
}

/**
 * Per-GB rate of the seed's inter-region paths: transfer, plus TGW or endpoint processing. The
 * NLB-direct paths ride C's and D's (the NLB's capacity units are in its fixed hourly figure).
 */
export const TESTBED_INTER_REGION_RATES: Readonly<Record<string, number>> = {
  C: INTER_REGION_PER_GB,
  'C-NLB': INTER_REGION_PER_GB,
  D: INTER_REGION_PER_GB + TGW_DATA_PER_GB,
  'D-NLB': INTER_REGION_PER_GB + TGW_DATA_PER_GB,
  E: INTER_REGION_PER_GB + ENDPOINT_DATA_PER_GB,
};

/**
 * Upper bound of the data-transfer cost of one run: for each inter-region path, every iperf3
 * probe moves bandwidth × duration × repeats (UDP: its bitrate, capped at the bandwidth);
 * HTTP moves count × trials × payload. Latency and MTU probes are negligible and not counted.
 */
export function runTransferCost(plan: ResolvedPlan, opts: RunTransferOptions): RunTransferCost {
  const paths: PathTransfer[] = [];
  for (const path of plan.paths) {
    const perGb = opts.interRegion[path.id];
    if (perGb === undefined) continue;
    let bytes = 0;
    for (const p of path.probes) {
      if (p.kind === 'iperf3') {
        const gbps =
          p.mode === 'udp' && p.bitrate ? Math.min(bitrateGbps(p.bitrate), opts.bandwidthGbps) : opts.bandwidthGbps;
        bytes += bytesAt(gbps, p.durationSeconds) * p.repeats;
      } else if (p.kind === 'http') {
        bytes += p.count * p.trials * p.payloadBytes;
      }
    }
    paths.push({ pathId: path.id, bytes, perGb, cost: (bytes / 1e9) * perGb });
  }
  return {
    paths,
    bytes: paths.reduce((s, p) => s + p.bytes, 0),
    cost: paths.reduce((s, p) => s + p.cost, 0),
  };
}

const usd = (n: number) => `$${round2(n).toFixed(2)}`;
const gb = (bytes: number) => `${(bytes / 1e9).toFixed(1)} GB`;

function table(rows: string[][]): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) =>
    r.map((c, i) => (i === r.length - 1 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  '),
  );
}

/** A short plain-text cost note: the fixed monthly table and, when given, one run's transfer. */
export function formatCostNote(fixed: FixedCost, run?: RunTransferCost): string {
  const out = ['Testbed fixed cost (Tokyo prices, seed 000 §3.6; 730 h/month):'];
  out.push(
    ...table([
      ['item', 'how', 'per month'],
      ...fixed.lines.map((l) => [l.item, l.detail, usd(l.monthly)]),
      ['total', '', usd(fixed.monthly)],
      ['total, instances stopped', '', usd(fixed.monthlyWithoutInstances)],
    ]).map((l) => `  ${l}`),
  );
  if (run) {
    out.push('', 'One run, inter-region data (upper bound: iperf3 at full bandwidth):');
    out.push(
      ...table([
        ['path', 'data', 'rate', 'cost'],
        ...run.paths.map((p) => [p.pathId, gb(p.bytes), `$${p.perGb.toFixed(2)}/GB`, usd(p.cost)]),
        ['total', gb(run.bytes), '', usd(run.cost)],
      ]).map((l) => `  ${l}`),
    );
  }
  out.push('', 'Stop or destroy the testbed when idle: `pathbench destroy --testbed`.');
  return out.join('\n');
}
