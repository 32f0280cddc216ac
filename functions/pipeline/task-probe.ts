/**
 * The probe of a path whose client is a task of an ECS service (docs/aws.md, "Clients inside an
 * ECS task"). PrepareTaskProbe builds the queue message; the state machine itself sends it with
 * `sqs:sendMessage.waitForTaskToken` and waits for the task client's SendTaskSuccess /
 * SendTaskFailure (bounded by HeartbeatSeconds and TimeoutSeconds from this message), then
 * EndTaskProbe records which task ran it. Nothing here waits.
 */

import {
  heartbeatSecondsFor,
  isTaskClient,
  type TaskProbe,
  type TaskResult,
  taskQueueUrl,
  taskResultSchema,
} from '../../core/ecs-client.js';
import { RunAbortedError } from '../../core/errors.js';
import { keys } from '../../core/keys.js';
import type { Deps } from '../ports.js';
import type { PathRef } from './contracts.js';
import { probeTiming } from './limits.js';
import { stepEnded, stepStarted, updatePath } from './manifest.js';
import { ownershipLost } from './route-journal.js';
import { loadResolvedPlan } from './validate.js';

/** What the SQS Task state reads: QueueUrl, the message's probe, its HeartbeatSecondsPath and TimeoutSecondsPath. */
export interface TaskProbeState {
  queueUrl: string;
  probe: TaskProbe;
  heartbeatSeconds: number;
  timeoutSeconds: number;
}

export async function prepareTaskProbe(deps: Deps, ref: PathRef): Promise<TaskProbeState> {
  const plan = await loadResolvedPlan(deps, ref.runId);
  const path = plan.paths.find((p) => p.id === ref.pathId);
  if (!path) throw new Error(`path ${ref.pathId} not in plan`);
  if (!isTaskClient(path.client)) throw new Error(`path ${ref.pathId}: client is not a task client (kind ecs-task)`);
  // Same guard as SendProbe: a run that was stopped sends no probe.
  const lost = await ownershipLost(deps, ref.runId);
  if (lost) throw new RunAbortedError(`PrepareTaskProbe refused: ${lost}; no probe sent`);
  const now = deps.now();
  const { expected, timeoutSeconds } = probeTiming(path.probes);
  const heartbeatSeconds = heartbeatSecondsFor(expected);
  const probe: TaskProbe = {
    runId: ref.runId,
    pathId: ref.pathId,
    specKey: keys.spec(ref.runId, ref.pathId, path.client.instanceId),
    rawPrefix: keys.clientRawPrefix(ref.pathId, ref.runId, path.client.instanceId),
    service: path.client.service,
    sentAt: now.toISOString(),
    heartbeatSeconds,
    timeoutSeconds: Math.max(timeoutSeconds, heartbeatSeconds),
  };
  const queueUrl = taskQueueUrl(path.client, deps.accountId);
  await updatePath(deps.store, ref.runId, ref.pathId, (p) => {
    stepStarted(p, 'Probe', now);
  });
  deps.log.info('task probe prepared', { ...ref, queueUrl, heartbeatSeconds, timeoutSeconds: probe.timeoutSeconds });
  return { queueUrl, probe, heartbeatSeconds, timeoutSeconds: probe.timeoutSeconds };
}

/** After SendTaskSuccess: the Probe step ends and the task that ran it is recorded. */
export async function endTaskProbe(deps: Deps, input: PathRef & { result: unknown }): Promise<TaskResult> {
  const parsed = taskResultSchema.safeParse(input.result);
  const result: TaskResult = parsed.success ? parsed.data : { files: 0, agentExitCode: -1 };
  await updatePath(deps.store, input.runId, input.pathId, (p) => {
    stepEnded(p, 'Probe', deps.now());
    p.task = { ...(p.task ?? {}), taskArn: result.taskArn, taskId: result.taskId };
    if (!parsed.success) {
      const n = 'the task client reported success without a readable result';
      if (!p.notes.includes(n)) p.notes.push(n);
    }
    if (result.agentExitCode !== 0) {
      const n = `the agent in task ${result.taskId ?? '?'} exited ${result.agentExitCode}: failed probes are listed in agent.json`;
      if (!p.notes.includes(n)) p.notes.push(n);
    }
  });
  deps.log.info('task probe done', { runId: input.runId, pathId: input.pathId, ...result });
  return result;
}
