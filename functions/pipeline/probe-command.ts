/**
 * The probe command on an instance client: SendProbe sends it once (a retry resumes the command
 * already sent) and PollProbe polls it, bounded by its deadline and a number of polls, waiting a
 * bounded grace for a stopped command's last upload.
 */
import { PollTimeoutError, ProbeCommandFailedError, ProbeTimeoutError, RunAbortedError } from '../../core/errors.js';
import { keys } from '../../core/keys.js';
import type { ProbeCommandState } from '../../core/path-manifest.js';
import type { ClientRef } from '../../core/resolved-plan.js';
import type { Deps } from '../ports.js';
import type { PathRef } from './contracts.js';
import { probePollBound, probeTiming } from './limits.js';
import { closeCreditWait, loadPath, stepEnded, stepStarted, updatePath } from './manifest.js';
import { ownershipLost } from './route-journal.js';
import { loadResolvedPlan } from './validate.js';

export type ProbeState = ProbeCommandState;

export async function sendProbe(deps: Deps, ref: PathRef & { client: ClientRef }): Promise<ProbeState> {
  const sent = (await loadPath(deps.store, ref.runId, ref.pathId)).probeCommand;
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
  // an agent whose output nobody collects: check before sending, and cancel after.
  const lostBefore = await ownershipLost(deps, ref.runId);
  if (lostBefore) throw new RunAbortedError(`SendProbe refused: ${lostBefore}; no probe sent`);
  const now = deps.now();
  // Self-calibration and agent start-up come on top of the probes; probeTiming allows for them.
  const { likelyProbing, likely, timeoutSeconds } = probeTiming(path.probes);
  const { commandId } = await deps.runner.send({
    runId: ref.runId,
    pathId: ref.pathId,
    client: ref.client,
    specKey: keys.spec(ref.runId, ref.pathId, path.client.instanceId),
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
    expectedSeconds: likely,
    deadline: new Date(now.getTime() + timeoutSeconds * 1000).toISOString(),
    // First look when the probes alone are likely done; later polls close in on the expected
    // time, then back off (nextPollSeconds) until the deadline, which allows for the worst case.
    waitSeconds: Math.min(MAX_WAIT_SECONDS, Math.max(1, Math.ceil(likelyProbing))),
    done: false,
  };
  await updatePath(deps.store, ref.runId, ref.pathId, (p) => {
    closeCreditWait(p, now);
    stepStarted(p, 'Probe', now);
    p.probeCommand = state;
  });
  deps.log.info('probe sent', { ...ref, commandId, expectedSeconds: likely });
  return state;
}

/** What a stopped command's trap uploads last (functions/adapters/aws/probe-document.ts). */
export const STOP_MARKER = 'interrupted.json';

/** Longest single Wait: a Wait is cheap, but a stuck command should be noticed within minutes. */
export const MAX_WAIT_SECONDS = 300;

/**
 * Seconds until the next poll: a quarter of the time left until the probe should be done, so a
 * long probe costs a handful of polls, not hundreds; past that time, half the time it has run
 * over (a probe slower than likely, e.g. pingpong on a long path, is found in a few polls that
 * grow 1.5× each). Always at least the fleet's poll interval and at most MAX_WAIT_SECONDS.
 */
export function nextPollSeconds(probe: ProbeState, now: Date, minSeconds: number): number {
  const remaining = (Date.parse(probe.sentAt) + probe.expectedSeconds * 1000 - now.getTime()) / 1000;
  const wait = remaining > 0 ? remaining / 4 : -remaining / 2;
  return Math.min(MAX_WAIT_SECONDS, Math.max(minSeconds, Math.ceil(wait)));
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
    await updatePath(deps.store, input.runId, input.pathId, (p) => {
      stepEnded(p, 'Probe', deps.now());
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
