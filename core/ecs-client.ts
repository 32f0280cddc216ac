/**
 * Clients inside an ECS task (docs/aws.md, "Clients inside an ECS task"): the plan's
 * `{ kind: 'ecs-task', cluster, service, queueUrl?, region }`, the message the state machine sends
 * to the client service's queue with a Step Functions task token, and the timing that bounds it.
 * Shared by the pipeline (functions/pipeline/task-probe.ts), the task client
 * (agent/ecs-worker.ts) and the local queue (local/local-queue.ts).
 */
import { z } from 'zod';
import type { ClientRef } from './resolved-plan.js';

export type PlanClient =
  | { kind?: 'ec2-instance'; instanceId: string; region: string }
  | { kind: 'ecs-task'; cluster: string; service: string; queueUrl?: string; region: string };

/** Every task-client queue's name starts with this (the pipeline's SendMessage grant matches it). */
export const TASK_QUEUE_PREFIX = 'pathbench-client-';

/** The queue a client service reads when the plan names none: one per service (infra/testbed/seed002.ts). */
export function taskQueueName(cluster: string, service: string): string {
  return `${TASK_QUEUE_PREFIX}${cluster}-${service}`.slice(0, 80);
}

/** The plan's client as the pipeline carries it (ClientRef): a task client's id is its service name. */
export function resolveClient(c: PlanClient): ClientRef {
  if (c.kind !== 'ecs-task') return { instanceId: c.instanceId, region: c.region };
  return {
    kind: 'ecs-task',
    instanceId: c.service,
    region: c.region,
    cluster: c.cluster,
    service: c.service,
    ...(c.queueUrl ? { queueUrl: c.queueUrl } : {}),
  };
}

export function isTaskClient(c: ClientRef): c is ClientRef & { kind: 'ecs-task'; cluster: string; service: string } {
  return c.kind === 'ecs-task' && typeof c.cluster === 'string' && typeof c.service === 'string';
}

/** The queue URL of a task client: the plan's, else the conventional name in the client's region and account. */
export function taskQueueUrl(c: ClientRef, accountId: string | undefined): string {
  if (c.queueUrl) return c.queueUrl;
  if (!isTaskClient(c)) throw new Error(`client ${c.instanceId} is not a task client`);
  if (!accountId || !/^\d{12}$/.test(accountId))
    throw new Error(
      `client ${c.service}: no queueUrl in the plan and no account id to build one from (PATHBENCH_ACCOUNT_ID); set paths[].client.queueUrl`,
    );
  return `https://sqs.${c.region}.amazonaws.com/${accountId}/${taskQueueName(c.cluster, c.service)}`;
}

/**
 * What the task client needs to run one path's probes. Sent as the `probe` field of the queue
 * message; the task token travels next to it (`taskToken`), put there by the state machine.
 */
export const taskProbeSchema = z.strictObject({
  runId: z.string().min(1),
  pathId: z.string().min(1),
  /** Object key of the path's AgentSpec in the data store. */
  specKey: z.string().min(1),
  /** Where raw output goes: keys.clientRawPrefix(path, run, service). */
  rawPrefix: z.string().min(1),
  /** The client service this message is for; a task of another service refuses it. */
  service: z.string().min(1),
  sentAt: z.string().min(1),
  /** The state's HeartbeatSeconds: the client beats at a quarter of it. */
  heartbeatSeconds: z.number().int().min(10),
  /** The state's TimeoutSeconds: the client stops the agent before it. */
  timeoutSeconds: z.number().int().min(10),
});
export type TaskProbe = z.infer<typeof taskProbeSchema>;

export const taskMessageSchema = z.object({ probe: taskProbeSchema, taskToken: z.string().min(1) });
export type TaskMessage = z.infer<typeof taskMessageSchema>;

/** What the task client reports with SendTaskSuccess (kept small: state payload). */
export const taskResultSchema = z.object({
  taskArn: z.string().optional(),
  taskId: z.string().optional(),
  files: z.number().int().min(0),
  agentExitCode: z.number().int(),
});
export type TaskResult = z.infer<typeof taskResultSchema>;

/**
 * HeartbeatSeconds for a probe: long enough that a busy client (a 1 MB × 16 HTTP probe saturating
 * its NIC) still gets a beat through, short enough that a message no task took (the service is
 * scaled to 0, its task crashed) fails the path within minutes rather than at the probe timeout.
 */
export function heartbeatSecondsFor(expectedSeconds: number): number {
  return Math.min(300, Math.max(60, Math.ceil(expectedSeconds / 20)));
}

/** How often the client beats: four beats per heartbeat window. */
export function beatEverySeconds(heartbeatSeconds: number): number {
  return Math.max(1, Math.floor(heartbeatSeconds / 4));
}

/** Names the task client fails a task with (SendTaskFailure `error`); the state machine's Catch records them. */
export const TASK_ERRORS = {
  badMessage: 'TaskClient.BadMessage',
  wrongService: 'TaskClient.WrongService',
  agentFailed: 'TaskClient.AgentFailed',
  stale: 'TaskClient.Stale',
  stopped: 'TaskClient.Stopped',
} as const;
