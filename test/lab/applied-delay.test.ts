/**
 * The delay helper's log as the lab reads it (lab/applied-delay.ts, lab/lab-truth.ts): records
 * written as lab/native/nfq-delay.c lays them out, read back by time window (rotated generation
 * included), a path's applied round trip as the sum of its directions' medians, handshakes paired
 * SYN → SYN-ACK, and a summary path's truth with its lab-error verdict.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AppliedRecord,
  appliedLogPath,
  appliedRtt,
  decodeRecords,
  handshakeRtts,
  RECORD_BYTES,
  readAppliedWindow,
} from '../../lab/applied-delay.js';
import { labErrorNote, labTolerance, pathTruth } from '../../lab/lab-truth.js';
import { seed000Profile } from '../../lab/profiles/seed-000-profile.js';
import { seed004Profile } from '../../lab/profiles/seed-004-profile.js';

interface Rec {
  /** Arrival, ms after T0. */
  atMs: number;
  appliedUs: number;
  src: string;
  dst: string;
  queue: number;
  flags?: number;
  sport?: number;
  dport?: number;
  /** The helper's delay class (a mixed path's route); 0 when not given. */
  cls?: number;
}

/** Encode records exactly as the helper writes them (little-endian, addresses and ports in network order). */
function encode(recs: Rec[]): Buffer {
  const buf = Buffer.alloc(recs.length * RECORD_BYTES);
  recs.forEach((r, i) => {
    const at = i * RECORD_BYTES;
    // in integer ns: a float of ns since the epoch loses the sub-µs digits
    buf.writeBigUInt64LE(BigInt(T0) * 1_000_000n + BigInt(Math.round(r.atMs * 1e6)), at);
    buf.writeUInt32LE(Math.round(r.appliedUs * 1000), at + 8);
    Buffer.from(r.src.split('.').map(Number)).copy(buf, at + 12);
    Buffer.from(r.dst.split('.').map(Number)).copy(buf, at + 16);
    buf.writeUInt16LE(r.queue, at + 20);
    buf[at + 22] = r.flags ?? 0;
    buf[at + 23] = 0x80 | (r.cls ?? 0);
    buf.writeUInt16BE(r.sport ?? 0, at + 24);
    buf.writeUInt16BE(r.dport ?? 0, at + 26);
  });
  return buf;
}

const T0 = 1_800_000_000_000; // ms since the epoch
const CLIENT = '10.0.1.10';
const A = '10.0.2.10';

/** `n` connects to A through queue 1: SYN out (oneWayUs), SYN-ACK back (oneWayUs), the far side taking farUs. */
function connects(n: number, oneWayUs: number, farUs: number, startMs = 0, firstPort = 40000): Rec[] {
  const out: Rec[] = [];
  for (let i = 0; i < n; i++) {
    const t = startMs + i * 10;
    const sport = firstPort + i;
    out.push({ atMs: t, appliedUs: oneWayUs, src: CLIENT, dst: A, queue: 1, flags: 0x02, sport, dport: 7000 });
    const back = t + (oneWayUs + farUs) / 1000;
    out.push({
      atMs: back,
      appliedUs: oneWayUs,
      src: A,
      dst: CLIENT,
      queue: 1,
      flags: 0x12,
      sport: 7000,
      dport: sport,
    });
  }
  return out;
}

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('the helper log', () => {
  it('decodes the C layout, dropping a torn last record', () => {
    const buf = encode([
      { atMs: 0, appliedUs: 65.5, src: CLIENT, dst: A, queue: 1, flags: 0x02, sport: 40001, dport: 7000 },
    ]);
    const [r, ...rest] = decodeRecords(Buffer.concat([buf, buf.subarray(0, 10)]));
    expect(rest).toEqual([]);
    expect(r).toMatchObject({
      appliedNs: 65500,
      src: CLIENT,
      dst: A,
      queue: 1,
      tcpFlags: 2,
      sport: 40001,
      dport: 7000,
    });
    expect(r.kernelStamp).toBe(true);
    expect(r.arrivalNs).toBe(BigInt(T0) * 1_000_000n);
  });

  it('reads a window across the rotated and the current file', () => {
    dir = mkdtempSync(join(tmpdir(), 'applied-'));
    const file = appliedLogPath(dir, 'router');
    const all = connects(200, 65, 20);
    writeFileSync(`${file}.1`, encode(all.slice(0, 150)));
    writeFileSync(file, encode(all.slice(150)));
    const got = readAppliedWindow(file, T0 + 500, T0 + 1500);
    // connects 50..150 (their SYNs at T0+500..1500, SYN-ACKs 0.15 ms later: the last one outside)
    expect(got.length).toBe(201);
    expect(got.every((r) => r.arrivalNs >= BigInt(T0 + 500) * 1_000_000n)).toBe(true);
    expect(readAppliedWindow(join(dir, 'none.bin'), T0, T0 + 1)).toEqual([]);
  });

  it('sums the directions’ medians and pairs handshakes', () => {
    const recs = decodeRecords(encode([...connects(99, 65, 20), ...connects(1, 900, 20, 5000, 50000)]));
    const a = appliedRtt(recs, 1)!;
    expect(a.rttMs).toBeCloseTo(0.13, 6);
    expect(a.directions.map((d) => d.dst).sort()).toEqual([CLIENT, A]);
    // SYN arrival → SYN-ACK release: both delays and the far side
    expect(a.handshakes).toBe(100);
    expect(a.handshakeMs).toBeCloseTo(0.15, 6);
    expect(appliedRtt(recs, 2)).toBeUndefined();
    // a SYN-ACK without its SYN (only one direction held, or outside the window) pairs with nothing
    expect(handshakeRtts(recs.filter((r: AppliedRecord) => r.tcpFlags === 0x12))).toEqual([]);
  });
});

describe('a path’s truth', () => {
  it('is the handshake plus the client’s link, a lab error only beyond max(3 %, 20 µs) of the target', () => {
    dir = mkdtempSync(join(tmpdir(), 'applied-'));
    // A's target 0.21 ms: 0.13 applied + 0.02 far side + 0.05 client link = 0.20 (within 0.02 ms)
    writeFileSync(appliedLogPath(dir, 'router'), encode(connects(100, 65, 20)));
    const cal = { clientLegUs: { A: 50 }, bareRttUs: { A: 70 } };
    const t = pathTruth(dir, seed000Profile(), cal, A, T0 - 1, T0 + 2000)!;
    expect(t).toMatchObject({
      targetRttMs: 0.21,
      achievedRttMs: 0.2,
      appliedRttMs: 0.13,
      packets: 200,
      labError: false,
    });
    // without the client's link from a calibration: applied + the bare topology
    expect(pathTruth(dir, seed000Profile(), { bareRttUs: { A: 70 } }, A, T0 - 1, T0 + 2000)?.achievedRttMs).toBe(0.2);
    // 30 µs more per direction: 0.26 ms, beyond A's tolerance of 0.02 ms
    writeFileSync(appliedLogPath(dir, 'router'), encode(connects(100, 95, 20)));
    const off = pathTruth(dir, seed000Profile(), cal, A, T0 - 1, T0 + 2000)!;
    expect(off.achievedRttMs).toBeCloseTo(0.26, 6);
    expect(off.labError).toBe(true);
    expect(labErrorNote(off)).toMatch(
      /^lab error: the lab achieved a round trip of 0\.260 ms against its target 0\.21 ms \(\+23\.8 %/,
    );
    // nothing of the path's in the window: no truth
    expect(pathTruth(dir, seed000Profile(), cal, A, T0 + 10_000, T0 + 20_000)).toBeUndefined();
    expect(labTolerance(0.21)).toBe(0.02);
    expect(labTolerance(13.32)).toBeCloseTo(0.3996, 6);
  });

  it('of a path of mixed routes is its own route’s (the first delay class), not the mixture’s median', () => {
    dir = mkdtempSync(join(tmpdir(), 'applied-'));
    const profile = seed004Profile();
    const def = profile.paths.find((p) => (p.routes?.length ?? 0) > 0)!;
    const [from] = def.match[0].filter((x) => /^\d/.test(x)).map((x) => x.replace('/32', ''));
    // 45 % on the path's own route (class 0), 55 % on a longer one: the mixture's median is the longer
    const recs: Rec[] = Array.from({ length: 100 }, (_, i) => ({
      atMs: i,
      appliedUs: i % 20 < 9 ? def.rttMs * 1000 - 60 : def.rttMs * 1000 + 200,
      cls: i % 20 < 9 ? 0 : 1,
      src: from,
      dst: def.targetIp,
      queue: def.queue,
    }));
    writeFileSync(appliedLogPath(dir, def.delayRole), encode(recs));
    const t = pathTruth(dir, profile, { bareRttUs: { [def.id]: 60 } }, def.targetIp, T0 - 1, T0 + 2000)!;
    expect(t.appliedRttMs).toBeCloseTo(def.rttMs - 0.06, 6);
    expect(t.achievedRttMs).toBeCloseTo(def.rttMs, 6);
    expect(t.labError).toBe(false);
    expect(t.packets).toBe(45);
  });

  it('takes the helper’s part from the handshakes themselves, not from a bulk transfer queued in the same window', () => {
    dir = mkdtempSync(join(tmpdir(), 'applied-'));
    // 100 handshakes (65 µs each way) and, meanwhile, 400 iperf3 segments each way held 200 µs
    // (queued behind each other): the directions' medians say 0.4 ms, the handshakes 0.13 ms.
    const bulk: Rec[] = Array.from({ length: 800 }, (_, i) => ({
      atMs: i * 1.2,
      appliedUs: 200,
      src: i % 2 ? A : CLIENT,
      dst: i % 2 ? CLIENT : A,
      queue: 1,
      flags: 0x10,
      sport: i % 2 ? 5201 : 50000,
      dport: i % 2 ? 50000 : 5201,
    }));
    writeFileSync(appliedLogPath(dir, 'router'), encode([...connects(100, 65, 20), ...bulk]));
    const t = pathTruth(dir, seed000Profile(), { clientLegUs: { A: 50 }, bareRttUs: { A: 70 } }, A, T0 - 1, T0 + 2000)!;
    expect(t.achievedRttMs).toBeCloseTo(0.2, 6);
    expect(t.appliedRttMs).toBeCloseTo(0.13, 6);
    expect(t.appliedP10P90Ms).toEqual([0.13, 0.13]);
    // far side + client link: never negative
    expect(t.bareRttMs).toBeCloseTo(0.07, 6);
  });
});
