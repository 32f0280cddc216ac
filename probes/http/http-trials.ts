/**
 * The http probe's per-trial figures and the warnings they earn. CollectOutput feeds each trial's
 * sample records through an HttpTrialTally and reads the agent's sidecar (`<trial>.meta.json`:
 * the client's TIME_WAIT count before/after, tcp_tw_reuse, the ephemeral port range), so every
 * trial keeps its own requests per second, throughput, p50/p99 and TCP facts (the seed compared
 * three trials). Then, over all the path's http probes at once:
 *
 * - `time-wait-pressure` (TIME_WAIT_RULE): a keep-alive-off trial whose connects failed with
 *   EADDRNOTAVAIL (`ephemeral-ports-exhausted`), or whose TIME_WAIT count reached 80 % of the
 *   ephemeral port range, or whose p50 is ≥ 3× the matching keep-alive-on cell's (same matrix,
 *   concurrency and body size) with TIME_WAIT at ≥ 50 % of the range. The seed's keep-alive-off
 *   runs were 3–25× slower until `tcp_tw_reuse`: that measures the client's port table, not the path.
 * - `nic-bound` (NIC_RULE): a trial whose throughput reached 90 % of the client's NIC bandwidth
 *   (its peak, else its baseline, as recorded at BeginPath), or sat at the baseline of an
 *   instance that can burst above it — measuring the instance, not the path (the seed's
 *   1 MB × 16 streams read 12.4 Gbit/s, the instance's NIC).
 */
import { z } from 'zod';
import type { ClientNetwork } from '../../core/client-network.js';
import type { SampleRecord } from '../../core/sample-record.js';
import { HTTP_PAIR_METRIC } from './http.schema.js';

/** One http trial's figures, kept per trial so trials can be compared (manifest, summary). */
export const httpTrialSchema = z.object({
  trial: z.number(),
  /** Requests made and answered 2xx. */
  requests: z.number(),
  ok: z.number(),
  /** Failed requests by reason (e.g. { "ephemeral-ports-exhausted": 12 }). */
  errors: z.record(z.string(), z.number()).optional(),
  /** First request start → last request end, ms. */
  wallMs: z.number(),
  /** Successful requests per second over the trial's wall time. */
  rps: z.number(),
  /** Body bytes received × 8 per second over the trial's wall time. */
  throughputBps: z.number(),
  /** Nearest-rank p50 / p99 of the trial's successful requests, ms. */
  p50: z.number().nullable(),
  p99: z.number().nullable(),
  /** The client's sockets in TIME_WAIT (its whole network namespace) before and after the trial. */
  timeWaitBefore: z.number().optional(),
  timeWaitAfter: z.number().optional(),
  /**
   * Those towards the trial's target (its address and port): the ones that hold ports a new
   * connection to the target cannot take (a connection is unique by its four-tuple).
   */
  timeWaitToTargetBefore: z.number().optional(),
  timeWaitToTargetAfter: z.number().optional(),
  /** `net.ipv4.tcp_tw_reuse` during the trial. */
  tcpTwReuse: z.number().optional(),
  /** `net.ipv4.ip_local_port_range` during the trial, and its size. */
  portRange: z.tuple([z.number(), z.number()]).optional(),
  ephemeralPorts: z.number().optional(),
});
export type HttpTrial = z.output<typeof httpTrialSchema>;

export const TIME_WAIT_FLAG = 'time-wait-pressure';
export const NIC_FLAG = 'nic-bound';

export const TIME_WAIT_RULE = {
  /** TIME_WAIT after the trial at this share of the ephemeral range is pressure by itself. */
  fullShare: 0.8,
  /** With a p50 this many times the keep-alive-on cell's … */
  slowdown: 3,
  /** … TIME_WAIT at this share of the range is enough. */
  slowShare: 0.5,
} as const;

export const NIC_RULE = {
  /** Throughput at this share of the NIC's bandwidth (peak, else baseline) reaches it. */
  share: 0.9,
  /** Within ± this share of the baseline counts as sitting at the baseline (instances that burst). */
  baselineBand: 0.1,
} as const;

/** Nearest-rank percentile of sorted values (as queries/percentiles.sql). */
function rank(sorted: Float64Array, q: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];
}

/** One trial's figures, from its sample records as they stream by. */
export class HttpTrialTally {
  private lat: number[] = [];
  private requests = 0;
  private ok = 0;
  private bytes = 0;
  private first = Number.POSITIVE_INFINITY;
  private last = Number.NEGATIVE_INFINITY;
  private errors: Record<string, number> = {};

  add(r: SampleRecord): void {
    // A paired probe's reference requests (another path's target) are not this trial's figures.
    if (r.metric === HTTP_PAIR_METRIC) return;
    this.requests++;
    if (r.t_start < this.first) this.first = r.t_start;
    if (r.t_end > this.last) this.last = r.t_end;
    if (r.ok && typeof r.value === 'number') {
      this.ok++;
      this.lat.push(r.value);
      if (typeof r.bytes === 'number') this.bytes += r.bytes;
    } else {
      const e = typeof r.error === 'string' ? r.error : 'error';
      this.errors[e] = (this.errors[e] ?? 0) + 1;
    }
  }

  /** The trial's figures, with the sidecar's TCP facts when it has them. */
  finish(trial: number, sidecar: string | undefined): HttpTrial {
    const wallMs = this.requests && this.last > this.first ? this.last - this.first : 0;
    const sorted = Float64Array.from(this.lat).sort();
    const t: HttpTrial = {
      trial,
      requests: this.requests,
      ok: this.ok,
      wallMs: round(wallMs, 3),
      rps: wallMs > 0 ? round((this.ok * 1000) / wallMs, 1) : 0,
      throughputBps: wallMs > 0 ? Math.round((this.bytes * 8 * 1000) / wallMs) : 0,
      p50: rank(sorted, 0.5),
      p99: rank(sorted, 0.99),
    };
    if (Object.keys(this.errors).length) t.errors = this.errors;
    Object.assign(t, sidecarFacts(sidecar));
    return t;
  }
}

const round = (v: number, digits: number): number => Math.round(v * 10 ** digits) / 10 ** digits;

/** The TCP facts of an http sidecar; a missing or damaged one gives none (the figures still count). */
export function sidecarFacts(text: string | undefined): Partial<HttpTrial> {
  if (!text) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return {};
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
  const m: Record<string, unknown> = { ...parsed };
  const out: Partial<HttpTrial> = {};
  const count = (v: unknown): number | undefined =>
    Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : undefined;
  const before = count(m.timeWaitBefore);
  const after = count(m.timeWaitAfter);
  const toTargetBefore = count(m.timeWaitToTargetBefore);
  const toTargetAfter = count(m.timeWaitToTargetAfter);
  const reuse = count(m.tcpTwReuse);
  const ports = count(m.ephemeralPorts);
  if (before !== undefined) out.timeWaitBefore = before;
  if (after !== undefined) out.timeWaitAfter = after;
  if (toTargetBefore !== undefined) out.timeWaitToTargetBefore = toTargetBefore;
  if (toTargetAfter !== undefined) out.timeWaitToTargetAfter = toTargetAfter;
  if (reuse !== undefined) out.tcpTwReuse = reuse;
  if (ports !== undefined) out.ephemeralPorts = ports;
  const range = m.portRange;
  if (Array.isArray(range) && range.length === 2 && range.every((x) => count(x) !== undefined))
    out.portRange = [range[0], range[1]];
  return out;
}

/** What the warnings need of an http probe. */
export interface HttpProbeTrials {
  probe: string;
  keepAlive: boolean;
  concurrency: number;
  payloadBytes: number;
  matrix?: string;
  trials: HttpTrial[];
}

export interface HttpWarning {
  probe: string;
  flag: typeof TIME_WAIT_FLAG | typeof NIC_FLAG;
  trials: number[];
  text: string;
}

const fmtBps = (bps: number): string =>
  bps >= 1e9 ? `${(bps / 1e9).toFixed(2)} Gbit/s` : `${(bps / 1e6).toFixed(0)} Mbit/s`;

/** TIME_WAIT pressure of a keep-alive-off trial, the reasons why, or undefined. */
function timeWaitReasons(t: HttpTrial, on: HttpTrial | undefined): string[] {
  const reasons: string[] = [];
  const exhausted = t.errors?.['ephemeral-ports-exhausted'] ?? 0;
  if (exhausted > 0) reasons.push(`${exhausted} connect(s) failed with EADDRNOTAVAIL`);
  // Towards the target when the agent counted it (the ports a connection to it cannot take),
  // else the whole namespace's (an older agent's sidecar).
  const toTarget = t.timeWaitToTargetAfter !== undefined;
  const tw = toTarget ? t.timeWaitToTargetAfter : t.timeWaitAfter;
  const range = t.ephemeralPorts;
  const share = tw !== undefined && range ? tw / range : undefined;
  if (share !== undefined && share >= TIME_WAIT_RULE.fullShare)
    reasons.push(`${tw} sockets in TIME_WAIT${toTarget ? ' to the target' : ''} for ${range} ephemeral ports`);
  const ratio = on?.p50 && t.p50 ? t.p50 / on.p50 : undefined;
  if (
    ratio !== undefined &&
    ratio >= TIME_WAIT_RULE.slowdown &&
    share !== undefined &&
    share >= TIME_WAIT_RULE.slowShare
  )
    reasons.push(`p50 ×${ratio.toFixed(1)} vs keep-alive on with ${tw} of ${range} ports in TIME_WAIT`);
  return reasons;
}

/** NIC saturation of one trial: the reason, or undefined. */
function nicReason(t: HttpTrial, net: ClientNetwork | undefined): string | undefined {
  const { baselineBps: base, peakBps: peak } = net ?? {};
  const nic = peak ?? base;
  if (!nic || t.throughputBps <= 0) return undefined;
  if (t.throughputBps >= NIC_RULE.share * nic)
    return `${fmtBps(t.throughputBps)}, ${Math.round((100 * t.throughputBps) / nic)} % of the client's ${fmtBps(nic)}`;
  if (base && peak && peak > base * 1.05 && Math.abs(t.throughputBps - base) <= NIC_RULE.baselineBand * base)
    return `${fmtBps(t.throughputBps)}, at the client's baseline ${fmtBps(base)} (burst credits spent?)`;
  return undefined;
}

/** The warnings of a path's http probes (one per probe and flag, listing the trials). */
export function httpWarnings(probes: HttpProbeTrials[], net: ClientNetwork | undefined): HttpWarning[] {
  const out: HttpWarning[] = [];
  for (const p of probes) {
    if (!p.keepAlive) {
      const twin = probes.find(
        (q) =>
          q.keepAlive && q.matrix === p.matrix && q.concurrency === p.concurrency && q.payloadBytes === p.payloadBytes,
      );
      const hits = p.trials
        .map((t) => ({
          t,
          reasons: timeWaitReasons(t, twin?.trials.find((x) => x.trial === t.trial) ?? twin?.trials[0]),
        }))
        .filter((x) => x.reasons.length > 0);
      if (hits.length) {
        const reuse = [...new Set(hits.map((h) => h.t.tcpTwReuse).filter((v) => v !== undefined))];
        out.push({
          probe: p.probe,
          flag: TIME_WAIT_FLAG,
          trials: hits.map((h) => h.t.trial),
          text:
            `${p.probe}: ${TIME_WAIT_FLAG}: keep-alive off ran the client out of ephemeral ports ` +
            `(${hits.map((h) => `trial ${h.t.trial}: ${h.reasons.join(', ')}`).join('; ')}` +
            `${reuse.length ? `; tcp_tw_reuse ${reuse.join('/')}` : ''}): this measures the client's TIME_WAIT, ` +
            'not the path; set net.ipv4.tcp_tw_reuse=1 (plan: tcpTwReuse) or keep connections alive',
        });
      }
    }
    const nic = p.trials.map((t) => ({ t, why: nicReason(t, net) })).filter((x) => x.why);
    if (nic.length)
      out.push({
        probe: p.probe,
        flag: NIC_FLAG,
        trials: nic.map((x) => x.t.trial),
        text:
          `${p.probe}: ${NIC_FLAG}: throughput reached the client's NIC bandwidth ` +
          `(${nic.map((x) => `trial ${x.t.trial}: ${x.why}`).join('; ')}): measuring the instance, not the path`,
      });
  }
  return out;
}
