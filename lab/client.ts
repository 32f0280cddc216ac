/**
 * The lab's client namespace as the pipeline sees it: the argv wrapper that runs the agent in
 * it, and its simulated instance state (stopping → stopped, pending → running over time).
 */
import type { ClientRef } from '../core/resolved-plan.js';
import { LabInputError } from './lab-errors.js';
import type { ClientTrack } from './lab-state.js';
import { labCpu } from './sys.js';

/**
 * Argv prefix that runs a command inside the lab client's namespace (instanceId = namespace),
 * pinned to the delay helpers' CPU (see labCpu) so probes measure the delays, not the VM's
 * cross-CPU wake-ups.
 */
export function labClientWrap(client: ClientRef): (argv: string[]) => string[] {
  if (!/^pb-[a-z0-9-]{1,20}$/.test(client.instanceId)) {
    throw new LabInputError(`lab client instanceId "${client.instanceId}" is not a lab namespace name (pb-…)`);
  }
  const pin = ['taskset', '-c', String(labCpu())];
  return (argv) => ['ip', 'netns', 'exec', client.instanceId, ...pin, ...argv];
}

/** Complete a timed transition (stopping → stopped, pending → running) once its time has come. */
export function resolveClient(track: ClientTrack, now: Date): ClientTrack {
  if (!track.until || now.getTime() < Date.parse(track.until)) return track;
  if (track.state === 'stopping') return { ...track, state: 'stopped', since: track.until, until: undefined };
  if (track.state === 'pending') return { ...track, state: 'running', since: track.until, until: undefined };
  return track;
}
