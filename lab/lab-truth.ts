/**
 * A lab run's truth per path: what the delay helper applied to the path's packets while the path
 * was measured (lab/applied-delay.ts) next to the round trip the lab was to emulate. The local
 * driver adds it to the run's summary (`paths[].lab`) and notes a path whose achieved round trip
 * strays from its target as a lab error: its figures then measure the lab, not the path.
 */
import type { RunManifest } from '../core/run-manifest.js';
import type { LabTruth, Summary } from '../core/run-summary.js';
import { type AppliedRecord, appliedLogPath, appliedRtt, readAppliedWindow } from './applied-delay.js';
import { readState } from './lab-state.js';
import { type LabOptions, labLocation } from './location.js';
import type { LabPathDef, LabProfile } from './profiles/lab-profile.js';
import { labProfile } from './profiles/profile-by-name.js';

/**
 * The bare topology's round trip (veths, two stacks) where the lab was not calibrated: what the
 * uncalibrated profiles take off their added delays, too.
 */
export const BARE_RTT_GUESS_MS = 0.08;

/** How far a path's achieved round trip may stray from its target before it is a lab error. */
export function labTolerance(targetMs: number): number {
  return Math.max(0.03 * targetMs, 0.02);
}

const round4 = (x: number) => Number(x.toFixed(4));

/** The helper queues a path's packets take: its own, and its way back's when that has one. */
export function pathQueues(p: LabPathDef): number[] {
  return p.reverse ? [p.queue, p.reverse.queue] : [p.queue];
}

/**
 * The profile path whose delay a plan path's packets went through in `records` (its window):
 * the queue carrying most packets to or from the target, and that queue's path to this target.
 */
function pathOf(
  profile: LabProfile,
  records: readonly AppliedRecord[],
  host: string,
): { def: LabPathDef; records: AppliedRecord[] } | undefined {
  const mine = records.filter((r) => r.dst === host || r.src === host);
  const counts = new Map<number, number>();
  for (const r of mine) counts.set(r.queue, (counts.get(r.queue) ?? 0) + 1);
  const queue = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
  if (queue === undefined) return undefined;
  // An asymmetric path's way back has a queue of its own (LabPathDef.reverse): both are its.
  const candidates = profile.paths.filter(
    (p) => (p.queue === queue || p.reverse?.queue === queue) && p.match.length > 0,
  );
  const def = candidates.find((p) => p.targetIp === host) ?? candidates[0];
  if (!def) return undefined;
  const queues = pathQueues(def);
  return { def, records: mine.filter((r) => queues.includes(r.queue)) };
}

/**
 * The lab's truth for one path measured from `fromMs` to `toMs` (ms since the epoch): undefined
 * when the lab has no helper log for it (netem, or no delay of its own).
 */
export function pathTruth(
  dir: string,
  profile: LabProfile,
  cal: { bareRttUs?: Record<string, number>; clientLegUs?: Record<string, number> },
  host: string,
  fromMs: number,
  toMs: number,
): LabTruth | undefined {
  const roles = [...new Set(profile.paths.map((p) => p.delayRole))];
  const records = roles.flatMap((role) => readAppliedWindow(appliedLogPath(dir, role), fromMs, toMs));
  const found = pathOf(profile, records, host);
  if (!found) return undefined;
  // A path of mixed routes (seed 004's AZ pairs) is judged on its own route, the helper's first
  // delay class, whose round trip is the target: the median of the mixture lies between routes.
  const mixed = !!found.def.mix || (found.def.routes?.length ?? 0) > 0;
  const own = mixed ? found.records.filter((r) => r.cls === 0) : found.records;
  const applied = appliedRtt(own, pathQueues(found.def));
  if (!applied) return undefined;
  const id = found.def.id;
  const target = found.def.rttMs;
  // Best: the handshakes the helper saw whole plus the client's own link; else the applied
  // delays plus the bare topology (both from the last calibration, else the usual guess).
  const leg = cal.clientLegUs?.[id];
  const bareUs = cal.bareRttUs?.[id];
  const byHandshake = applied.handshakeMs !== undefined && leg !== undefined;
  const achieved = byHandshake
    ? applied.handshakeMs! + leg / 1000
    : applied.rttMs + (bareUs === undefined ? BARE_RTT_GUESS_MS : bareUs / 1000);
  // The helper's part, of the same packets: the handshakes' own applied delays where they made
  // the achieved figure (a bulk transfer's queued packets in the window would inflate the
  // directions' medians past the handshake, and leave a negative bare part).
  const appliedMs = byHandshake ? applied.handshakeAppliedMs! : applied.rttMs;
  const range = byHandshake ? applied.handshakeAppliedP10P90Ms! : [applied.p10Ms, applied.p90Ms];
  const bareMs = achieved - appliedMs;
  return {
    targetRttMs: target,
    achievedRttMs: round4(achieved),
    appliedRttMs: round4(appliedMs),
    appliedP10P90Ms: [round4(range[0]), round4(range[1])],
    bareRttMs: round4(bareMs),
    packets: applied.packets,
    labError: Math.abs(achieved - target) > labTolerance(target),
  };
}

/** The note a path whose achieved round trip strays from its target gets. */
export function labErrorNote(t: LabTruth): string {
  const off = ((t.achievedRttMs - t.targetRttMs) / t.targetRttMs) * 100;
  return (
    `lab error: the lab achieved a round trip of ${t.achievedRttMs.toFixed(3)} ms against its target ` +
    `${t.targetRttMs} ms (${off >= 0 ? '+' : ''}${off.toFixed(1)} %, beyond ±${labTolerance(t.targetRttMs).toFixed(3)} ms): ` +
    'this path’s figures measure the lab’s delay, not the path it stands for'
  );
}

/**
 * The summary with each lab path's truth (`lab`) from the helper logs over the path's time in
 * the manifest, and a lab-error note where it strays; unchanged without a lab state or helper logs.
 */
export function addLabTruth(opts: LabOptions, summary: Summary, manifest: RunManifest, plan: PlanTargets): Summary {
  const { dir } = labLocation(opts);
  const state = readState(dir);
  if (state?.delay.mechanism !== 'nfqueue') return summary;
  const profile = labProfile(state.profile);
  const paths = summary.paths.map((p) => {
    const m = manifest.paths.find((x) => x.id === p.id);
    const host = plan.get(p.id);
    if (!m?.startedAt || !host) return p;
    const truth = pathTruth(
      dir,
      profile,
      state.delay,
      host,
      Date.parse(m.startedAt),
      Date.parse(m.endedAt ?? summary.endedAt ?? new Date().toISOString()),
    );
    if (!truth) return p;
    return { ...p, lab: truth, ...(truth.labError ? { notes: [...(p.notes ?? []), labErrorNote(truth)] } : {}) };
  });
  return { ...summary, paths };
}

/** Plan path id → its target host. */
export type PlanTargets = Map<string, string>;

/** The local driver's hook: a lab run's summary with the lab's truth added (createLabPorts().truth). */
export type LabTruthFn = (summary: Summary, manifest: RunManifest, plan: PlanTargets) => Summary;
