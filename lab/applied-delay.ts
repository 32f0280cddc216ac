/**
 * The delay the lab actually applied, from the NFQUEUE helper's own log (lab/native/nfq-delay.c,
 * `--log`): one 32-byte record per released packet with its arrival time and release − arrival.
 * A path's applied round trip is the sum over its directions (grouped by destination address)
 * of the median delay its packets got there, in a time window (the path's probes in a run, a
 * calibration round). Where the helper holds both directions it also sees every TCP handshake
 * whole: a SYN's arrival to its SYN-ACK's release is the round trip through the helper's
 * namespace (both delays, the far side's hops and stack), all of a connect's RTT but the client's
 * own link. Load that makes the helper release late shows up here as in the probe's
 * figure, so the two can be compared where the fixed target cannot (docs/lab.md, "Truth").
 */
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { median, nearestRank } from '../core/stats.js';
import type { LabRole } from './profiles/lab-profile.js';

export const RECORD_BYTES = 32;
/** Class byte bit: the arrival time is the kernel's receive timestamp. */
const KERNEL_STAMP = 0x80;
/** Records are in release order; an arrival can precede an earlier-released one's by at most the largest delay. */
const ORDER_SLACK_NS = 2_000_000_000n;

export interface AppliedRecord {
  /** Arrival, ns since the epoch. */
  arrivalNs: bigint;
  appliedNs: number;
  /** Dotted IPv4 addresses. */
  src: string;
  dst: string;
  queue: number;
  tcpFlags: number;
  sport: number;
  dport: number;
  cls: number;
  kernelStamp: boolean;
}

/** The helper's log for the delay namespace of `role` (rotated to `<file>.1` past 256 MB). */
export function appliedLogPath(dir: string, role: LabRole): string {
  return join(dir, `applied-${role.replace(/[^a-z0-9-]/gi, '_')}.bin`);
}

const ip = (b: Buffer, at: number) => `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;

/** Decode whole records from `buf` (a torn last record, still being written, is left out). */
export function decodeRecords(buf: Buffer): AppliedRecord[] {
  const out: AppliedRecord[] = [];
  for (let at = 0; at + RECORD_BYTES <= buf.length; at += RECORD_BYTES) {
    const cls = buf[at + 23];
    out.push({
      arrivalNs: buf.readBigUInt64LE(at),
      appliedNs: buf.readUInt32LE(at + 8),
      src: ip(buf, at + 12),
      dst: ip(buf, at + 16),
      queue: buf.readUInt16LE(at + 20),
      tcpFlags: buf[at + 22],
      sport: buf.readUInt16BE(at + 24),
      dport: buf.readUInt16BE(at + 26),
      cls: cls & ~KERNEL_STAMP,
      kernelStamp: (cls & KERNEL_STAMP) !== 0,
    });
  }
  return out;
}

function readAt(fd: number, record: number, count: number): Buffer {
  const buf = Buffer.alloc(count * RECORD_BYTES);
  const n = readSync(fd, buf, 0, buf.length, record * RECORD_BYTES);
  return buf.subarray(0, n - (n % RECORD_BYTES));
}

/** Records of one log file whose arrival lies in [fromNs, toNs]; found by bisection, not a full read. */
function readWindow(file: string, fromNs: bigint, toNs: bigint): AppliedRecord[] {
  if (!existsSync(file)) return [];
  const fd = openSync(file, 'r');
  try {
    const total = Math.floor(fstatSync(fd).size / RECORD_BYTES);
    const arrivalOf = (i: number) => readAt(fd, i, 1).readBigUInt64LE(0);
    // First record that may be in the window: release order is arrival order within the slack.
    let lo = 0;
    let hi = total;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (arrivalOf(mid) < fromNs - ORDER_SLACK_NS) lo = mid + 1;
      else hi = mid;
    }
    const out: AppliedRecord[] = [];
    const chunk = 65_536;
    for (let i = lo; i < total; i += chunk) {
      const recs = decodeRecords(readAt(fd, i, Math.min(chunk, total - i)));
      for (const r of recs) if (r.arrivalNs >= fromNs && r.arrivalNs <= toNs) out.push(r);
      if (recs.length > 0 && recs[recs.length - 1].arrivalNs > toNs + ORDER_SLACK_NS) break;
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

/** Records of the helper log `file` (and its rotated generation) with arrival in [from, to] (ms since the epoch). */
export function readAppliedWindow(file: string, fromMs: number, toMs: number): AppliedRecord[] {
  const from = BigInt(Math.floor(fromMs)) * 1_000_000n;
  const to = BigInt(Math.ceil(toMs)) * 1_000_000n;
  return [...readWindow(`${file}.1`, from, to), ...readWindow(file, from, to)];
}

export interface AppliedRtt {
  /** Sum over the directions of the median applied delay, ms: the round trip the lab added. */
  rttMs: number;
  /** The same from the directions' 10th and 90th percentiles, ms. */
  p10Ms: number;
  p90Ms: number;
  packets: number;
  /** Per direction (destination address): packets and median one-way delay, ms. */
  directions: { dst: string; packets: number; medianMs: number }[];
  /** Share of the packets whose arrival was the kernel's timestamp (else the helper's clock). */
  kernelStampShare: number;
  /**
   * Median SYN arrival → SYN-ACK release over the handshakes seen whole (ms), and how many;
   * absent where the helper holds one direction only.
   */
  handshakeMs?: number;
  handshakes?: number;
  /**
   * The helper's part of those handshakes (SYN's applied + SYN-ACK's applied), median and 10th /
   * 90th percentile, ms: the applied delay of the packets the latency probes time, not of a bulk
   * transfer's packets queued behind each other in the same window.
   */
  handshakeAppliedMs?: number;
  handshakeAppliedP10P90Ms?: [number, number];
}

const SYN = 0x02;
const ACK = 0x10;

/**
 * Every handshake whose two packets are in `records`: SYN arrival → its SYN-ACK's release (ms),
 * and the helper's part of it, the two packets' applied delays summed (ms).
 */
export function handshakes(records: readonly AppliedRecord[]): { rttMs: number; appliedMs: number }[] {
  const syns = new Map<string, AppliedRecord>();
  for (const r of records)
    if ((r.tcpFlags & (SYN | ACK)) === SYN) syns.set(`${r.src}:${r.sport}>${r.dst}:${r.dport}`, r);
  const out: { rttMs: number; appliedMs: number }[] = [];
  for (const r of records) {
    if ((r.tcpFlags & (SYN | ACK)) !== (SYN | ACK)) continue;
    const syn = syns.get(`${r.dst}:${r.dport}>${r.src}:${r.sport}`);
    if (!syn || r.arrivalNs < syn.arrivalNs) continue;
    out.push({
      rttMs: Number(r.arrivalNs - syn.arrivalNs) / 1e6 + r.appliedNs / 1e6,
      appliedMs: (syn.appliedNs + r.appliedNs) / 1e6,
    });
  }
  return out;
}

/** SYN arrival → its SYN-ACK's release, ms, for every handshake whose two packets are in `records`. */
export function handshakeRtts(records: readonly AppliedRecord[]): number[] {
  return handshakes(records).map((h) => h.rttMs);
}

/**
 * A queue's applied round trip over `records` (undefined when none of its packets are there);
 * an asymmetric path's two queues (one per direction) together.
 */
export function appliedRtt(records: readonly AppliedRecord[], queue: number | number[]): AppliedRtt | undefined {
  const queues = Array.isArray(queue) ? queue : [queue];
  const mine = records.filter((r) => queues.includes(r.queue));
  if (mine.length === 0) return undefined;
  const byDst = new Map<string, number[]>();
  for (const r of mine) {
    const list = byDst.get(r.dst) ?? [];
    list.push(r.appliedNs / 1e6);
    byDst.set(r.dst, list);
  }
  const directions = [...byDst].map(([dst, ms]) => {
    ms.sort((a, b) => a - b);
    return { dst, packets: ms.length, medianMs: median(ms), p10: nearestRank(ms, 100)!, p90: nearestRank(ms, 900)! };
  });
  const sum = (f: (d: (typeof directions)[number]) => number) => directions.reduce((s, d) => s + f(d), 0);
  const seen = handshakes(mine);
  const rtts = seen.map((h) => h.rttMs).sort((a, b) => a - b);
  const applied = seen.map((h) => h.appliedMs).sort((a, b) => a - b);
  return {
    ...(seen.length > 0
      ? {
          handshakeMs: median(rtts),
          handshakes: seen.length,
          handshakeAppliedMs: median(applied),
          handshakeAppliedP10P90Ms: [nearestRank(applied, 100)!, nearestRank(applied, 900)!] as [number, number],
        }
      : {}),
    rttMs: sum((d) => d.medianMs),
    p10Ms: sum((d) => d.p10),
    p90Ms: sum((d) => d.p90),
    packets: mine.length,
    directions: directions.map(({ dst, packets, medianMs }) => ({ dst, packets, medianMs })),
    kernelStampShare: mine.filter((r) => r.kernelStamp).length / mine.length,
  };
}
