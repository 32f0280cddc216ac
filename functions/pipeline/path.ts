/**
 * The per-path steps of the Map iteration: begin, reboot (stop / start / bounded polls), route
 * swap, probe send and bounded poll, failure record. Each is one short task; every wait happens
 * in the state machine.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { ClientNetwork } from '../../core/client-network.js';
import { isTaskClient } from '../../core/ecs-client.js';
import {
  errorMessage,
  InstanceCapacityError,
  PollTimeoutError,
  ProbeCommandFailedError,
  ProbeTimeoutError,
  RouteSwapError,
  RunAbortedError,
} from '../../core/errors.js';
import type { JournalEntry } from '../../core/journal-entry.js';
import { keys, routeKey } from '../../core/keys.js';
import type { PathManifest, ProbeCommandState } from '../../core/path-manifest.js';
import type { ClientRef, RouteEntry } from '../../core/resolved-plan.js';
import { routeRefusal, viaTarget } from '../../core/route-policy.js';
import type { Deps } from '../ports.js';
import type { FailureInput, PathRef, PollState } from './contracts.js';
import { POLL_LIMITS, probePollBound, probeTiming } from './limits.js';
import { loadManifest, pathEntry, stepEnded, stepStarted, updateManifest } from './manifest.js';
import { journalOriginal, ownershipLost, restoreJournaled } from './route-journal.js';
import { salvageOutput } from './salvage.js';
import { loadResolvedPlan } from './validate.js';

export { estimateSeconds, POLL_LIMITS } from './limits.js';

/** What BeginPath tells the state machine: a client that is not running is started even when the path does not ask for a reboot. */
export interface BeginOutput {
  clientRunning: boolean;
}

/**
 * Mark the path running and record the client's network facts (instance type, AZ id, baseline
 * and peak bandwidth: `client` in the manifest; CollectOutput flags trials at the baseline with
 * them). Facts the fleet cannot give are a note, never a failed path: they describe the
 * measurement, they are not part of it. Also looks at the client's state: after a start that
 * failed (no capacity) the client stays stopped, and a `reboot: false` path would only fail at
 * SendProbe — `clientRunning: false` makes the state machine start it first.
 */
export async function beginPath(deps: Deps, ref: PathRef): Promise<BeginOutput> {
  const plan = await loadResolvedPlan(deps, ref.runId);
  const path = plan.paths.find((p) => p.id === ref.pathId);
  if (!path) throw new Error(`path ${ref.pathId} not in plan`);
  if (isTaskClient(path.client)) return beginTaskPath(deps, ref, path.client);
  let client: ClientNetwork | undefined;
  const notes: string[] = [];
  try {
    client = await deps.fleet.network(path.client);
  } catch (e) {
    notes.push(`client network facts (instance type, baseline / peak bandwidth) unavailable: ${errorMessage(e)}`);
    deps.log.warn('client network facts unavailable', { ...ref, error: errorMessage(e) });
  }
  let clientRunning = true;
  try {
    const info = await deps.fleet.describe(path.client);
    clientRunning = info.state === 'running';
    if (!clientRunning && !path.reboot)
      notes.push(
        `client ${path.client.instanceId} was ${info.state} when the path began (an earlier start failed?): started before probing although the path asks for no reboot`,
      );
  } catch (e) {
    // Unknown state: go on as planned; SendProbe reports a client that cannot take the command.
    deps.log.warn('client state unavailable', { ...ref, error: errorMessage(e) });
  }
  await updateManifest(deps.store, ref.runId, (m) => {
    const p = pathEntry(m, ref.pathId);
    p.status = 'running';
    p.startedAt = deps.now().toISOString();
    p.clientKind = 'ec2-instance';
    if (client) p.client = client;
    for (const n of notes) note(p, n);
  });
  deps.log.info('path started', { ...ref, clientRunning, ...(client ?? {}) });
  return { clientRunning };
}

/**
 * A task client has no instance the pipeline stops, starts or describes: the service keeps its
 * task running, and a task that is not there shows as a heartbeat timeout at the probe. So the
 * path only records the client kind and service; reboot is refused by the plan.
 */
async function beginTaskPath(
  deps: Deps,
  ref: PathRef,
  client: ClientRef & { cluster: string; service: string },
): Promise<BeginOutput> {
  await updateManifest(deps.store, ref.runId, (m) => {
    const p = pathEntry(m, ref.pathId);
    p.status = 'running';
    p.startedAt = deps.now().toISOString();
    p.clientKind = 'ecs-task';
    p.task = { cluster: client.cluster, service: client.service };
    note(
      p,
      `client is a task of ECS service ${client.service} (cluster ${client.cluster}): probes sent through its queue; no instance facts recorded`,
    );
  });
  deps.log.info('path started', { ...ref, clientKind: 'ecs-task', service: client.service });
  return { clientRunning: true };
}

export async function stopClient(deps: Deps, ref: PathRef & { client: ClientRef }): Promise<PollState> {
  const now = deps.now();
  await updateManifest(deps.store, ref.runId, (m) => {
    const p = pathEntry(m, ref.pathId);
    stepStarted(p, 'Reboot', now);
    if (!deps.fleet.rebootable)
      note(p, `nothing rebooted: the ${deps.driver} fleet for ${ref.client.instanceId} has no instance to stop`);
  });
  await deps.fleet.stop(ref.client);
  deps.log.info('client stopping', { ...ref, instanceId: ref.client.instanceId });
  return { attempt: 0, since: now.toISOString(), waitSeconds: deps.fleet.pollSeconds, done: false };
}

export async function startClient(deps: Deps, ref: PathRef & { client: ClientRef }): Promise<PollState> {
  const now = deps.now();
  await deps.fleet.start(ref.client);
  deps.log.info('client starting', { ...ref, instanceId: ref.client.instanceId });
  return { attempt: 0, since: now.toISOString(), waitSeconds: deps.fleet.pollSeconds, done: false };
}

export async function describeClient(
  deps: Deps,
  input: PathRef & { client: ClientRef; want: 'stopped' | 'ready'; poll: PollState },
): Promise<PollState> {
  // `since` only while waiting for ready: a capacity state reason left by an earlier failed
  // start must not fail a later wait for "stopped".
  const info = await deps.fleet.describe(input.client, input.want === 'ready' ? input.poll.since : undefined);
  const attempt = input.poll.attempt + 1;
  if (info.state === 'terminated' || info.state === 'shutting-down') {
    throw new InstanceCapacityError(`client ${input.client.instanceId} is ${info.state}`);
  }
  if (input.want === 'ready' && info.state === 'stopped' && attempt > 1) {
    // A start that falls back to stopped: EC2 had no capacity for the instance type.
    throw new InstanceCapacityError(
      `client ${input.client.instanceId} fell back to stopped after start${info.stateReason ? ` (${info.stateReason})` : ''}`,
    );
  }
  const done = input.want === 'stopped' ? info.state === 'stopped' : info.state === 'running' && info.commandReady;
  if (!done && attempt >= POLL_LIMITS[input.want]) {
    throw new PollTimeoutError(
      `client ${input.client.instanceId} not ${input.want} after ${attempt} polls (last state ${info.state}${info.commandReady ? '' : ', command channel not ready'})`,
    );
  }
  if (done && input.want === 'ready') {
    await updateManifest(deps.store, input.runId, (m) => {
      const p = pathEntry(m, input.pathId);
      stepEnded(p, 'Reboot', deps.now(), 'succeeded', deps.fleet.rebootable ? undefined : 'no-op: nothing to reboot');
      p.provenance = {
        ...(p.provenance ?? {}),
        client: { instanceId: info.instanceId, azId: info.azId, instanceType: info.instanceType },
      };
    });
  }
  return { attempt, since: input.poll.since, waitSeconds: deps.fleet.pollSeconds, done };
}

export { viaTarget };

/** Verify with a few short retries: route APIs are eventually consistent. */
async function verifyRoute(deps: Deps, r: Omit<RouteEntry, 'via'>, target: string, attempts = 5): Promise<boolean> {
  for (let i = 0; i < attempts; i++) {
    if (await deps.routes.verify(r, target)) return true;
    await (deps.sleep ?? sleep)(200 * 2 ** i);
  }
  return false;
}

/** Targets a route's current state must not have for a run to change it (see swapRoutes). */
function untouchable(r: Omit<RouteEntry, 'via'>, current: string): string | undefined {
  const name = `${r.region} ${r.routeTableId} ${r.destination}`;
  if (current === 'local') return `${name} is the VPC's local route: it cannot be replaced or restored`;
  if (current.startsWith('unknown:')) {
    return `${name} has a target pathbench cannot record (${current}): it could not be put back, so it is not changed`;
  }
  return undefined;
}

/**
 * Point each of the path's routes at its target. Every route is read first and nothing changes
 * if one of them cannot be put back (the VPC's local route, an unknown target kind). Each
 * original is journaled (write-once, before the change), and before and after each change the
 * run must still own the run lock and not be stopped: a SwapRoutes still running after its
 * execution was stopped undoes its own changes instead of leaving them behind (issue 17).
 */
export async function swapRoutes(deps: Deps, ref: PathRef): Promise<void> {
  const plan = await loadResolvedPlan(deps, ref.runId);
  const path = plan.paths.find((p) => p.id === ref.pathId);
  if (!path) throw new Error(`path ${ref.pathId} not in plan`);
  await updateManifest(deps.store, ref.runId, (m) => {
    const p = pathEntry(m, ref.pathId);
    closeCreditWait(p, deps.now());
    stepStarted(p, 'SwapRoutes', deps.now());
  });
  const before: string[] = [];
  for (const route of path.routes) {
    const { via, ...r } = route;
    const refusal = routeRefusal(deps.allowedRoutes, r, viaTarget(via));
    if (refusal) before.push(refusal);
    const problem = untouchable(r, await deps.routes.read(r));
    if (problem) before.push(problem);
  }
  if (before.length) throw new RouteSwapError(before.join('; '));

  const changed: JournalEntry[] = [];
  const guard = async (when: string) => {
    const lost = await ownershipLost(deps, ref.runId);
    if (!lost) return;
    const undo = await restoreJournaled(deps, changed);
    deps.log.warn('SwapRoutes lost the run: undoing its own changes', { runId: ref.runId, when, lost, ...undo });
    throw new RouteSwapError(
      `SwapRoutes stopped ${when}: ${lost}; undid ${undo.restored} route change(s)${undo.errors.length ? `, could not undo: ${undo.errors.join('; ')}` : ''}`,
    );
  };
  for (const route of path.routes) {
    const { via, ...r } = route;
    const target = viaTarget(via);
    await guard(`before changing ${routeKey(r)}`);
    const current = await deps.routes.read(r);
    const problem = untouchable(r, current);
    if (problem) throw new RouteSwapError(problem);
    // Journal the original before touching anything: whatever happens next (a failed point, a
    // route that never turns active, a crash, a stop), the route can be put back.
    const entry = await journalOriginal(
      deps,
      ref.runId,
      {
        ...r,
        original: current,
        originalUsable: current === 'none' || (await deps.routes.verify(r, current)),
        at: deps.now().toISOString(),
        pathId: ref.pathId,
      },
      target,
    );
    await updateManifest(deps.store, ref.runId, (m) => {
      const c = m.routeChanges.find((x) => routeKey(x) === routeKey(r));
      if (c) c.current = target;
      else m.routeChanges.push({ ...r, original: entry.original, current: target });
    });
    await guard(`before changing ${routeKey(r)}`);
    if (current !== target) {
      changed.push(entry);
      await deps.routes.point(r, target);
    }
    await guard(`after changing ${routeKey(r)}`);
    if (!(await verifyRoute(deps, r, target))) {
      throw new RouteSwapError(`${r.region} ${r.routeTableId} ${r.destination} did not become active via ${target}`);
    }
    deps.log.info('route swapped', { region: r.region, routeTableId: r.routeTableId, from: current, to: target });
  }
  await updateManifest(deps.store, ref.runId, (m) => {
    stepEnded(pathEntry(m, ref.pathId), 'SwapRoutes', deps.now());
  });
}

/** The wait between reboot (or path start) and the next step is the credit refill wait. */
function closeCreditWait(p: PathManifest, now: Date): void {
  if (p.steps.some((s) => s.name === 'WaitForCredits')) return;
  const reboot = p.steps.find((s) => s.name === 'Reboot');
  const startedAt = reboot?.endedAt ?? p.startedAt ?? now.toISOString();
  const ms = Math.max(0, now.getTime() - Date.parse(startedAt));
  p.steps.push({ name: 'WaitForCredits', status: 'succeeded', startedAt, endedAt: now.toISOString(), ms });
}

export type ProbeState = ProbeCommandState;

export async function sendProbe(deps: Deps, ref: PathRef & { client: ClientRef }): Promise<ProbeState> {
  const m = await loadManifest(deps.store, ref.runId);
  const sent = pathEntry(m, ref.pathId).probeCommand;
  if (sent) {
    // A retried SendProbe (the Lambda failed after SendCommand returned) must not start a
    // second agent on the client: both would write the same raw keys.
    deps.log.warn('probe already sent, resuming its poll', { ...ref, commandId: sent.commandId });
    return sent;
  }
  const plan = await loadResolvedPlan(deps, ref.runId);
  const path = plan.paths.find((p) => p.id === ref.pathId);
  if (!path) throw new Error(`path ${ref.pathId} not in plan`);
  // A SendProbe still running after its execution was stopped (and cleaned up) must not start
  // an agent whose output nobody collects: check before sending, and cancel after (issue 17).
  const lostBefore = await ownershipLost(deps, ref.runId);
  if (lostBefore) throw new RunAbortedError(`SendProbe refused: ${lostBefore}; no probe sent`);
  const now = deps.now();
  // Self-calibration and agent start-up come on top of the probes; probeTiming allows for them.
  const { probing, expected, timeoutSeconds } = probeTiming(path.probes);
  const { commandId } = await deps.runner.send({
    runId: ref.runId,
    pathId: ref.pathId,
    client: ref.client,
    specKey: keys.spec(ref.runId, ref.pathId),
    rawPrefix: keys.clientRawPrefix(ref.pathId, ref.runId, path.client.instanceId),
    timeoutSeconds,
  });
  const lostAfter = await ownershipLost(deps, ref.runId);
  if (lostAfter) {
    await deps.runner.cancel(commandId, ref.client);
    deps.log.warn('SendProbe lost the run: cancelled its own command', { ...ref, commandId, lost: lostAfter });
    throw new RunAbortedError(`SendProbe stopped after sending: ${lostAfter}; cancelled probe command ${commandId}`);
  }
  const state: ProbeState = {
    commandId,
    attempt: 0,
    sentAt: now.toISOString(),
    expectedSeconds: expected,
    deadline: new Date(now.getTime() + timeoutSeconds * 1000).toISOString(),
    // First look when the probes alone could be done; later polls close in on `expected`.
    waitSeconds: Math.min(MAX_WAIT_SECONDS, Math.max(1, Math.ceil(probing))),
    done: false,
  };
  await updateManifest(deps.store, ref.runId, (mm) => {
    const p = pathEntry(mm, ref.pathId);
    closeCreditWait(p, now);
    stepStarted(p, 'Probe', now);
    p.probeCommand = state;
  });
  deps.log.info('probe sent', { ...ref, commandId, expectedSeconds: expected });
  return state;
}

/** What a stopped command's trap uploads last (functions/adapters/aws/probe-document.ts). */
export const STOP_MARKER = 'interrupted.json';

/** Longest single Wait: a Wait is cheap, but a stuck command should be noticed within minutes. */
export const MAX_WAIT_SECONDS = 300;

/**
 * Seconds until the next poll: a quarter of the time left until the probe should be done
 * (at least the fleet's poll interval), so a long probe costs a handful of polls, not hundreds.
 */
export function nextPollSeconds(probe: ProbeState, now: Date, minSeconds: number): number {
  const remaining = (Date.parse(probe.sentAt) + probe.expectedSeconds * 1000 - now.getTime()) / 1000;
  return Math.min(MAX_WAIT_SECONDS, Math.max(minSeconds, Math.ceil(remaining / 4)));
}

export async function pollProbe(
  deps: Deps,
  input: PathRef & { client: ClientRef; probe: ProbeState },
): Promise<ProbeState> {
  const { probe } = input;
  const inv = await deps.runner.status(probe.commandId, input.client);
  const attempt = probe.attempt + 1;
  const minPoll = Math.max(1, deps.fleet.pollSeconds);
  // Bounded twice: by the deadline, and by the number of polls the deadline allows. The history
  // limit's worst case (limits.ts) counts this many polls a path, the stop grace's included.
  const maxPolls = probePollBound((Date.parse(probe.deadline) - Date.parse(probe.sentAt)) / 1000, minPoll);
  if (inv.status === 'Success') {
    await updateManifest(deps.store, input.runId, (m) => {
      stepEnded(pathEntry(m, input.pathId), 'Probe', deps.now());
    });
    return { ...probe, attempt, done: true, waitSeconds: 0 };
  }
  if (inv.status === 'Cancelled' || inv.status === 'TimedOut') {
    // The stop trap may still be uploading what the agent wrote (interrupted.json comes last):
    // wait for it, bounded, so the failure's salvage reads the whole prefix.
    const grace = deps.runner.stopUploadGraceSeconds ?? 0;
    if (grace > 0) {
      const now = deps.now();
      const stoppedAt = probe.stoppedAt ?? now.toISOString();
      const marker = keys.clientRawPrefix(input.pathId, input.runId, input.client.instanceId) + STOP_MARKER;
      const uploaded = (await deps.store.getText(marker)) !== undefined;
      const left = grace - (now.getTime() - Date.parse(stoppedAt)) / 1000;
      // The grace's polls come out of the same poll budget, so the history bound holds.
      const budgetLeft = attempt < maxPolls;
      if (!uploaded && left > 0 && budgetLeft) {
        if (!probe.stoppedAt)
          deps.log.warn('probe command stopped: waiting for its last upload', {
            ...input,
            commandId: probe.commandId,
            status: inv.status,
            graceSeconds: grace,
          });
        return { ...probe, attempt, stoppedAt, done: false, waitSeconds: Math.max(1, Math.min(5, Math.ceil(left))) };
      }
      if (!uploaded)
        deps.log.warn(
          budgetLeft
            ? 'probe command stopped: its last upload did not arrive within the grace'
            : 'probe command stopped: the poll budget ended the grace before its last upload arrived',
          { ...input, commandId: probe.commandId, graceSeconds: grace, polls: attempt, maxPolls },
        );
    }
  }
  if (inv.status === 'Failed' || inv.status === 'Cancelled' || inv.status === 'TimedOut') {
    throw new ProbeCommandFailedError(
      `probe command ${probe.commandId} ${inv.status}${inv.detail ? `: ${inv.detail}` : ''}`,
    );
  }
  const now = deps.now();
  if (now.getTime() > Date.parse(probe.deadline) || attempt >= maxPolls) {
    // Stop the command first: it must not keep measuring while the next path runs.
    await deps.runner.cancel(probe.commandId, input.client);
    const Err = now.getTime() > Date.parse(probe.deadline) ? ProbeTimeoutError : PollTimeoutError;
    throw new Err(
      `probe command ${probe.commandId} still ${inv.status} after ${attempt} polls (deadline ${probe.deadline}); cancelled`,
    );
  }
  return { ...probe, attempt, done: false, waitSeconds: nextPollSeconds(probe, now, minPoll) };
}

/** How Lambda wraps an error's cause: JSON with the message (and errorType, trace). */
const lambdaCauseSchema = z.object({ errorMessage: z.string() });

/** Lambda wraps causes as JSON ({"errorMessage": …}); keep just the message. */
export function causeMessage(cause: string | undefined): string {
  if (!cause) return '';
  try {
    const o = lambdaCauseSchema.safeParse(JSON.parse(cause));
    if (o.success) return o.data.errorMessage;
  } catch {
    // not JSON: a plain message
  }
  return cause;
}

export async function recordPathFailure(deps: Deps, input: FailureInput): Promise<void> {
  const now = deps.now();
  const error = `${input.error.Error ?? 'Error'}: ${causeMessage(input.error.Cause)}`;
  await updateManifest(deps.store, input.runId, (m) => {
    const p = pathEntry(m, input.pathId);
    p.status = 'failed';
    p.failedStep = input.step;
    p.error = error;
    p.endedAt = now.toISOString();
    for (const s of p.steps) if (s.status === 'running') stepEnded(p, s.name, now, 'failed');
  });
  deps.log.warn('path failed', { runId: input.runId, pathId: input.pathId, step: input.step, error });
  // The probe command ran (at least in part): keep the samples of probes that finished.
  if (input.step === 'PollProbe' || input.step === 'ProbeTask') {
    try {
      await salvageOutput(deps, input, error);
    } catch (e) {
      const why = `could not salvage raw output: ${errorMessage(e)}`;
      deps.log.warn(why, { runId: input.runId, pathId: input.pathId });
      await updateManifest(deps.store, input.runId, (m) => note(pathEntry(m, input.pathId), why));
    }
  }
}

function note(p: PathManifest, text: string): void {
  if (!p.notes.includes(text)) p.notes.push(text);
}
