/**
 * The client's reboot as short tasks: stop, start, and the bounded polls (DescribeClient) until it
 * is stopped or ready; every wait between them happens in the state machine.
 */
import { InstanceCapacityError, PollTimeoutError } from '../../core/errors.js';
import type { ClientRef } from '../../core/resolved-plan.js';
import type { Deps } from '../ports.js';
import type { PathRef, PollState } from './contracts.js';
import { POLL_LIMITS } from './limits.js';
import { addNote, stepEnded, stepStarted, updatePath } from './manifest.js';

export async function stopClient(deps: Deps, ref: PathRef & { client: ClientRef }): Promise<PollState> {
  const now = deps.now();
  await updatePath(deps.store, ref.runId, ref.pathId, (p) => {
    stepStarted(p, 'Reboot', now);
    if (!deps.fleet.rebootable)
      addNote(p, `nothing rebooted: the ${deps.driver} fleet for ${ref.client.instanceId} has no instance to stop`);
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
    await updatePath(deps.store, input.runId, input.pathId, (p) => {
      stepEnded(p, 'Reboot', deps.now(), 'succeeded', deps.fleet.rebootable ? undefined : 'no-op: nothing to reboot');
      p.provenance = {
        ...(p.provenance ?? {}),
        client: { instanceId: info.instanceId, azId: info.azId, instanceType: info.instanceType },
      };
    });
  }
  return { attempt, since: input.poll.since, waitSeconds: deps.fleet.pollSeconds, done };
}
