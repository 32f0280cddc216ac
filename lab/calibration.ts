/**
 * Calibration of the paths' delays: a start value per path (the last calibration made with the
 * same mechanism and clock, else a guess), then a closed loop that measures TCP-connect p50
 * from the client (kernel tcpi_rtt, the figure a run reports as connect_rtt_ms) and moves each
 * path's added delay by its error until every path is on target.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { median } from '../core/stats.js';
import { appliedLogPath, appliedRtt, readAppliedWindow } from './applied-delay.js';
import type { LabBuilder } from './builder.js';
import { applyDelays } from './delay.js';
import { LabCommandError } from './lab-errors.js';
import type { DelayMechanism } from './lab-state.js';
import { BARE_RTT_GUESS_MS, pathQueues } from './lab-truth.js';
import { type ConnectMeter, type MeterClock, robustP50 } from './measure.js';
import { setNextHop } from './next-hop.js';
import type { LabPathDef } from './profiles/lab-profile.js';

/**
 * Calibration sampling per path and measurement: the median p50 of 5 short rounds of 20
 * connects 10 ms apart, so up to two rounds spoiled by a neighbour's load burst do not count.
 */
const CALIBRATION_SAMPLING = { rounds: 5, count: 20, intervalMs: 10 };

/** `<state dir>/calibration.json`: the last calibration's delays, a starting point for the next (any other shape: none). */
const savedCalibrationSchema = z.object({
  mechanism: z.string(),
  clock: z.string().optional(),
  addedRttUs: z.record(z.string(), z.number()),
});

function previousCalibration(
  dir: string,
  mechanism: DelayMechanism,
  clock: MeterClock,
): Record<string, number> | undefined {
  try {
    const read = savedCalibrationSchema.safeParse(JSON.parse(readFileSync(join(dir, 'calibration.json'), 'utf8')));
    if (!read.success) return undefined;
    const c = read.data;
    // A calibration made with another clock (the old application timer) is off by its bias.
    return c.mechanism === mechanism && c.clock === clock ? c.addedRttUs : undefined;
  } catch {
    return undefined;
  }
}

/** Set every path's starting added delay: the previous calibration's when it fits, else the guess. */
export function seedDelays(b: LabBuilder, clock: MeterClock): void {
  const prev = previousCalibration(b.dir, b.state.delay.mechanism, clock);
  for (const p of b.profile.paths)
    b.state.delay.addedRttUs[p.id] = prev?.[p.id] ?? Math.max(0, Math.round((p.rttMs - BARE_RTT_GUESS_MS) * 1000));
}

/** Per path: the probe's p50 and, with the NFQUEUE helper, the round trip it applied meanwhile (ms). */
type Measured = Record<string, { p50: number; applied?: number; handshake?: number }>;

/**
 * Connect p50 per path from the client: the median of several short rounds' p50s, so a
 * burst of load on a busy machine moves one round, not the calibration; and the delay the
 * helper applied to the path's packets over the same time (lab/applied-delay.ts).
 */
async function measureAll(b: LabBuilder, meter: ConnectMeter, paths: readonly LabPathDef[]): Promise<Measured> {
  const out: Measured = {};
  const measureOne = async (p: LabPathDef) => {
    try {
      const from = Date.now();
      const r = await robustP50(meter, b.ns('client'), p.targetIp, b.profile.ports.tcp, CALIBRATION_SAMPLING);
      const to = Date.now();
      const applied =
        b.state.delay.mechanism === 'nfqueue'
          ? appliedRtt(
              readAppliedWindow(appliedLogPath(b.dir, p.delayRole), from, to).filter(
                (x) => x.dst === p.targetIp || x.src === p.targetIp,
              ),
              pathQueues(p),
            )
          : undefined;
      out[p.id] = {
        p50: r.p50,
        ...(applied ? { applied: applied.rttMs } : {}),
        ...(applied?.handshakeMs !== undefined ? { handshake: applied.handshakeMs } : {}),
      };
    } catch (e: unknown) {
      throw new LabCommandError(`calibration of path ${p.id}: ${(e as Error).message}`, { cause: e });
    }
  };
  for (const p of paths.filter((x) => x.nextHop !== 'tgw')) await measureOne(p);
  const viaTgw = paths.filter((x) => x.nextHop === 'tgw');
  if (viaTgw.length > 0) {
    await setNextHop(b, 'tgw');
    try {
      for (const p of viaTgw) await measureOne(p);
    } finally {
      await setNextHop(b, b.profile.defaultNextHop!);
    }
  }
  return out;
}

/**
 * Closed loop: measure p50 per path, move each path's added delay by its error, repeat. `only`:
 * those paths alone (a drifted one), the others' delays and calibration kept as they are.
 */
export async function calibrate(
  b: LabBuilder,
  meter: ConnectMeter,
  nfqBin: string | undefined,
  only?: readonly string[],
): Promise<void> {
  const { profile, state } = b;
  const paths = only ? profile.paths.filter((p) => only.includes(p.id)) : profile.paths;
  const tolerance = (target: number) => Math.max(0.01 * target, 0.02);
  let measured: Record<string, number> = {};
  let applied: Record<string, number | undefined> = {};
  // The bare topology per round and path: probe − applied (what a run's achieved figure adds).
  const bare: Record<string, number[]> = {};
  // The client's link per round and path: probe − the handshake through the delay namespace.
  const clientLeg: Record<string, number[]> = {};
  const rounds = 6;
  for (let round = 1; round <= rounds; round++) {
    const m = await measureAll(b, meter, paths);
    measured = Object.fromEntries(Object.entries(m).map(([id, v]) => [id, v.p50]));
    applied = Object.fromEntries(Object.entries(m).map(([id, v]) => [id, v.applied]));
    for (const [id, v] of Object.entries(m)) {
      if (v.applied !== undefined) bare[id] = [...(bare[id] ?? []), v.p50 - v.applied];
      if (v.handshake !== undefined) clientLeg[id] = [...(clientLeg[id] ?? []), v.p50 - v.handshake];
    }
    // A path already at zero added delay cannot get faster: the bare topology is the floor.
    const off = paths.filter(
      (p) =>
        Math.abs(measured[p.id] - p.rttMs) > tolerance(p.rttMs) &&
        !(measured[p.id] > p.rttMs && (state.delay.addedRttUs[p.id] ?? 0) === 0),
    );
    const appliedText = (id: string) => (applied[id] === undefined ? '' : ` (applied ${applied[id]!.toFixed(3)})`);
    const line = `calibration round ${round} (${meter.clock}): ${paths.map((p) => `${p.id} ${measured[p.id].toFixed(3)}/${p.rttMs}${appliedText(p.id)}`).join(' ')} ms`;
    b.log(line);
    // Kept next to the state so a later accuracy complaint can be traced to how it converged.
    appendFileSync(join(b.dir, 'calibration.log'), `${new Date().toISOString()} ${line}\n`);
    if (off.length === 0 || round === rounds) break;
    // Damped after the first round: the first step removes the start guess's bias, later
    // errors are partly noise, and a full step would chase it back and forth.
    const gain = round === 1 ? 1 : 0.7;
    for (const p of off) {
      // Bounded step: one noisy round (a busy machine) must not throw a path far off.
      const limit = Math.max(300, 200 * p.rttMs);
      const step = Math.max(-limit, Math.min(limit, gain * (p.rttMs - measured[p.id]) * 1000));
      const next = (state.delay.addedRttUs[p.id] ?? 0) + step;
      state.delay.addedRttUs[p.id] = Math.max(0, Math.round(next));
    }
    await applyDelays(b, nfqBin);
  }
  state.delay.calibration = Object.fromEntries([
    ...Object.entries(state.delay.calibration ?? {}).filter(([id]) => !paths.some((p) => p.id === id)),
    ...paths.map((p) => [
      p.id,
      {
        targetMs: p.rttMs,
        measuredMs: Number(measured[p.id].toFixed(4)),
        ...(applied[p.id] === undefined ? {} : { appliedMs: Number(applied[p.id]!.toFixed(4)) }),
      },
    ]),
  ]);
  // The median over the rounds: the bare topology does not change with the delays.
  const us = (per: Record<string, number[]>) =>
    Object.fromEntries(Object.entries(per).map(([id, xs]) => [id, Math.round(median(xs) * 1000)]));
  state.delay.bareRttUs = { ...state.delay.bareRttUs, ...us(bare) };
  state.delay.clientLegUs = { ...state.delay.clientLegUs, ...us(clientLeg) };
  b.save();
  writeFileSync(
    join(b.dir, 'calibration.json'),
    `${JSON.stringify({ mechanism: state.delay.mechanism, clock: meter.clock, addedRttUs: state.delay.addedRttUs }, null, 2)}\n`,
  );
}
