/**
 * Throttling seen in the NIC's own counters. EC2's ENA driver counts every packet it queued or
 * dropped because the instance exceeded an allowance (`ethtool -S`: `bw_in_allowance_exceeded`,
 * `bw_out_allowance_exceeded`, `pps_allowance_exceeded`, `conntrack_allowance_exceeded`,
 * `linklocal_allowance_exceeded`). The agent reads them before and after every trial (the
 * sidecar's `nic`); a trial during which one grew measured the instance's allowance, not only the
 * path, and its samples carry `throttled:<allowance>`.
 *
 * The lab twin has no ENA: its client's burst credits are a tbf token bucket on its egress, and
 * the same allowance reads from that qdisc (`tc -s -j qdisc`: its overlimits plus drops count as
 * `bw_out`). Pure: parsing and arithmetic; the agent's reader is probes/run-kit/nic.ts.
 */
import { z } from 'zod';

/** The allowances, by the short name the flag carries, and the ENA counter of each. */
export const NIC_ALLOWANCES = {
  bw_in: 'bw_in_allowance_exceeded',
  bw_out: 'bw_out_allowance_exceeded',
  pps: 'pps_allowance_exceeded',
  conntrack: 'conntrack_allowance_exceeded',
  linklocal: 'linklocal_allowance_exceeded',
} as const;
export type NicAllowance = keyof typeof NIC_ALLOWANCES;
const ALLOWANCES = Object.keys(NIC_ALLOWANCES) as NicAllowance[];

/** What each allowance is, for notes. */
export const NIC_ALLOWANCE_TEXT: Record<NicAllowance, string> = {
  bw_in: 'inbound bandwidth',
  bw_out: 'outbound bandwidth',
  pps: 'packets per second',
  conntrack: 'tracked connections',
  linklocal: 'link-local services (DNS, metadata, time sync) rate',
};

export const THROTTLED_PREFIX = 'throttled:';

/** Counters by allowance (only those the source has). */
const countersSchema = z.partialRecord(z.enum(ALLOWANCES as [NicAllowance, ...NicAllowance[]]), z.number());
export type NicCounters = z.output<typeof countersSchema>;

/** One reading: where from (`ena`: ethtool -S; `tbf`: the lab's token bucket) and on which device. */
export interface NicSnapshot {
  source: 'ena' | 'tbf';
  dev: string;
  counters: NicCounters;
}

/** A trial's readings, as its sidecar keeps them. */
export const nicTrialSchema = z.object({
  source: z.enum(['ena', 'tbf']),
  dev: z.string(),
  before: countersSchema,
  after: countersSchema,
});
export type NicTrial = z.output<typeof nicTrialSchema>;

/**
 * The allowance counters in `ethtool -S` output ("NIC statistics:" then "     name: value" lines);
 * undefined when it has none of them (not an ENA device, or a driver without them).
 */
export function parseEthtoolStats(text: string): NicCounters | undefined {
  const out: NicCounters = {};
  for (const line of text.split('\n')) {
    const m = /^\s*([A-Za-z0-9_]+):\s*(\d+)\s*$/.exec(line);
    if (!m) continue;
    const a = ALLOWANCES.find((k) => NIC_ALLOWANCES[k] === m[1]);
    if (a) out[a] = Number(m[2]);
  }
  return Object.keys(out).length ? out : undefined;
}

/**
 * The root tbf qdisc's shaping in `tc -s -j qdisc show dev D` output: overlimits (a packet waited
 * for tokens) plus drops (a packet found the queue full) as `bw_out`; undefined without a tbf at
 * the root or for output that is not tc's JSON.
 */
export function parseTbfStats(json: string): NicCounters | undefined {
  let list: unknown;
  try {
    list = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (!Array.isArray(list)) return undefined;
  const tbf = list.find(
    (q): q is { overlimits?: unknown; drops?: unknown } =>
      typeof q === 'object' &&
      q !== null &&
      (q as { kind?: unknown }).kind === 'tbf' &&
      (q as { root?: unknown }).root === true,
  );
  if (!tbf) return undefined;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return { bw_out: n(tbf.overlimits) + n(tbf.drops) };
}

/**
 * How much each allowance's counter grew over a trial. A counter that went down was reset (the
 * device or qdisc was replaced): its growth is unknown and it is left out.
 */
export function allowanceGrowth(trial: NicTrial): Partial<Record<NicAllowance, number>> {
  const out: Partial<Record<NicAllowance, number>> = {};
  for (const a of ALLOWANCES) {
    const b = trial.before[a];
    const e = trial.after[a];
    if (b === undefined || e === undefined || e < b) continue;
    out[a] = e - b;
  }
  return out;
}

/** The allowances that grew, in the fixed order of NIC_ALLOWANCES. */
export function throttledAllowances(trial: NicTrial): NicAllowance[] {
  const g = allowanceGrowth(trial);
  return ALLOWANCES.filter((a) => (g[a] ?? 0) > 0);
}

/** The samples' flag for a trial during which these allowances grew: `throttled:bw_out`, `throttled:bw_out+pps`. */
export function throttledFlag(allowances: readonly NicAllowance[]): string {
  return `${THROTTLED_PREFIX}${allowances.join('+')}`;
}

/** The sidecar's `nic`, when it has a well-formed one (older agents, other tools: none). */
export function nicTrialOf(sidecar: string | undefined): NicTrial | undefined {
  if (!sidecar) return undefined;
  try {
    const r = z.object({ nic: nicTrialSchema }).safeParse(JSON.parse(sidecar));
    return r.success ? r.data.nic : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The path's note for one throttled trial: which allowance, by how much, read where, e.g.
 * "iperf3-tcp trial 1: the NIC throttled it for exceeding the outbound bandwidth allowance
 * (bw_out_allowance_exceeded +1234 on ens5); its figures measure the instance's allowance, not
 * only the path".
 */
export function formatThrottledNote(
  probe: string,
  t: { trial: number; source: NicTrial['source']; dev: string; grew: Record<string, number> },
): string {
  const grown = ALLOWANCES.filter((a) => (t.grew[a] ?? 0) > 0);
  const what = `${grown.map((a) => NIC_ALLOWANCE_TEXT[a]).join(' and ')} allowance${grown.length > 1 ? 's' : ''}`;
  const counters =
    t.source === 'ena'
      ? grown.map((a) => `${NIC_ALLOWANCES[a]} +${t.grew[a]}`).join(', ')
      : `the lab's token bucket: +${t.grew.bw_out ?? 0} overlimits and drops`;
  return `${probe} trial ${t.trial}: the NIC throttled it for exceeding the ${what} (${counters} on ${t.dev}); its figures measure the instance's allowance, not only the path`;
}
