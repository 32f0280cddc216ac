/**
 * The ECS worker: the long-running loop of a client service's ECS task (docs/aws.md, "Clients
 * inside an ECS task"). It takes one probe message at a time from its service's queue, runs the
 * probe agent (`agent.cjs run`, the same agent the SSM document runs on an instance) on the
 * path's spec, beats the state machine's heartbeat while it runs, uploads the raw output under
 * the path's client prefix, and ends the state with SendTaskSuccess or SendTaskFailure.
 *
 * The queue, the callbacks and the store are ports (TaskChannel, TaskStore): the AWS ones
 * (agent/ecs-worker-aws.ts) are SQS, Step Functions and S3; locally the same SQS and Step
 * Functions clients talk to the driver's loopback queue (local/local-queue.ts) and the store is
 * the run's data directory.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { z } from 'zod';
import {
  beatEverySeconds,
  TASK_ERRORS,
  type TaskMessage,
  type TaskResult,
  taskMessageSchema,
} from '../core/ecs-client.js';
import { errorMessage } from '../core/errors.js';

export interface ReceivedMessage {
  body: string;
  receipt: string;
}

export interface TaskChannel {
  /** One long poll; undefined when nothing came. */
  receive(waitSeconds: number, signal: AbortSignal): Promise<ReceivedMessage | undefined>;
  delete(receipt: string): Promise<void>;
  heartbeat(token: string): Promise<void>;
  success(token: string, output: TaskResult): Promise<void>;
  failure(token: string, error: string, cause: string): Promise<void>;
}

export interface TaskStore {
  getText(key: string): Promise<string | undefined>;
  /** Upload one local file under `key`. */
  putFile(key: string, file: string): Promise<void>;
}

export interface EcsWorkerOptions {
  channel: TaskChannel;
  store: TaskStore;
  /** This task's service: a message for another service is refused. */
  service: string;
  taskArn?: string;
  /** dist/agent.cjs. */
  agentPath: string;
  /** Node to run the agent with (default: this process's). */
  node?: string;
  log: (message: string, data?: Record<string, unknown>) => void;
  /** Seconds of one receive long poll (SQS allows at most 20). */
  waitSeconds?: number;
  now?: () => Date;
}

/** Errors of SendTaskHeartbeat that mean the state no longer waits: stop the agent. */
const TOKEN_GONE = new Set(['TaskTimedOut', 'InvalidToken', 'TaskDoesNotExist']);

export function tokenGone(e: unknown): boolean {
  const name = (e as { name?: string }).name ?? '';
  return TOKEN_GONE.has(name);
}

function taskIdOf(arn: string | undefined): string | undefined {
  return arn?.split('/').pop();
}

/** Every file under dir, as paths relative to it with forward slashes. */
async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    out.push(relative(dir, join(e.parentPath, e.name)).split(sep).join('/'));
  }
  return out.sort();
}

/**
 * Handle one received message to its end: the state machine hears success or failure (unless
 * its token is gone), the raw output that exists is uploaded either way. Never throws for a bad
 * message or a failed agent; throws only when the channel itself fails.
 */
export async function handleMessage(
  opts: EcsWorkerOptions,
  msg: ReceivedMessage,
): Promise<'success' | 'failure' | 'dropped'> {
  const { channel, log } = opts;
  const now = opts.now ?? (() => new Date());
  // Taken off the queue before anything runs: no second task may start a second agent on the
  // same raw keys (the same rule as SendProbe, which is never retried). A task that dies from
  // here on shows as a heartbeat timeout, and the path fails with that reason.
  await channel.delete(msg.receipt);
  let parsed: TaskMessage;
  try {
    parsed = taskMessageSchema.parse(JSON.parse(msg.body));
  } catch (e) {
    const token = tokenFrom(msg.body);
    log('bad probe message', { error: errorMessage(e) });
    if (token) await channel.failure(token, TASK_ERRORS.badMessage, `unreadable probe message: ${errorMessage(e)}`);
    return token ? 'failure' : 'dropped';
  }
  const { probe, taskToken } = parsed;
  if (probe.service !== opts.service) {
    await channel.failure(
      taskToken,
      TASK_ERRORS.wrongService,
      `message for service ${probe.service} reached a task of ${opts.service}: check the plan's queueUrl`,
    );
    return 'failure';
  }
  // A message that waited in the queue past its heartbeat window belongs to a state that
  // already timed out: the first heartbeat says so, and nothing runs.
  try {
    await channel.heartbeat(taskToken);
  } catch (e) {
    if (tokenGone(e)) {
      log('stale probe message dropped', { runId: probe.runId, pathId: probe.pathId, error: errorMessage(e) });
      return 'dropped';
    }
    throw e;
  }
  log('probe received', { runId: probe.runId, pathId: probe.pathId, heartbeatSeconds: probe.heartbeatSeconds });
  const work = await mkdtemp(join(tmpdir(), 'pathbench-task-'));
  const out = join(work, 'out');
  let stopReason: string | undefined;
  try {
    const spec = await opts.store.getText(probe.specKey);
    if (spec === undefined) {
      await channel.failure(taskToken, TASK_ERRORS.badMessage, `no spec at ${probe.specKey}`);
      return 'failure';
    }
    await mkdir(out, { recursive: true });
    const specFile = join(work, 'spec.json');
    await writeFile(specFile, spec);
    const child = spawn(opts.node ?? process.execPath, [opts.agentPath, 'run', '--spec', specFile, '--out', out], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => {
      stderr = (stderr + d).slice(-4000);
    });
    const stop = (why: string): void => {
      if (stopReason) return;
      stopReason = why;
      log('stopping the agent', { why });
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
    };
    const beat = setInterval(() => {
      channel.heartbeat(taskToken).catch((e) => {
        if (tokenGone(e)) stop(`the state no longer waits (${errorMessage(e)})`);
        else log('heartbeat failed', { error: errorMessage(e) });
      });
    }, beatEverySeconds(probe.heartbeatSeconds) * 1000);
    // Stop before the state's own timeout, so the output is uploaded while someone collects it.
    const sentAt = Date.parse(probe.sentAt);
    const stopAt = (Number.isFinite(sentAt) ? sentAt : now().getTime()) + probe.timeoutSeconds * 1000 - 30_000;
    const deadline = setTimeout(
      () => stop(`probe timeout of ${probe.timeoutSeconds} s reached`),
      Math.max(1000, stopAt - now().getTime()),
    );
    const code = await new Promise<number>((resolve) => {
      child.on('error', (e) => {
        stderr += `\n${errorMessage(e)}`;
        resolve(-1);
      });
      child.on('close', (c) => resolve(c ?? -1));
    });
    clearInterval(beat);
    clearTimeout(deadline);
    const files = await filesUnder(out);
    let uploaded = 0;
    const failedUploads: string[] = [];
    for (const f of files) {
      try {
        await opts.store.putFile(`${probe.rawPrefix}${f}`, join(out, ...f.split('/')));
        uploaded++;
      } catch (e) {
        failedUploads.push(`${f}: ${errorMessage(e)}`);
      }
    }
    log('probe done', {
      runId: probe.runId,
      pathId: probe.pathId,
      code,
      uploaded,
      failedUploads: failedUploads.length,
    });
    const result: TaskResult = {
      ...(opts.taskArn ? { taskArn: opts.taskArn, taskId: taskIdOf(opts.taskArn) } : {}),
      files: uploaded,
      agentExitCode: code,
    };
    if (stopReason && /no longer waits/.test(stopReason)) return 'dropped';
    if (code === 0 && !stopReason && failedUploads.length === 0) {
      await channel.success(taskToken, result);
      return 'success';
    }
    const why = [
      stopReason ? `agent stopped: ${stopReason}` : `agent exited ${code}`,
      failedUploads.length ? `${failedUploads.length} upload(s) failed: ${failedUploads.slice(0, 3).join('; ')}` : '',
      stderr.trim() ? `stderr: ${stderr.trim().slice(-500)}` : '',
      `${uploaded} raw file(s) uploaded`,
    ]
      .filter(Boolean)
      .join('; ');
    await channel.failure(taskToken, stopReason ? TASK_ERRORS.stopped : TASK_ERRORS.agentFailed, why.slice(0, 32_000));
    return 'failure';
  } catch (e) {
    // The store or the agent start failed: the state hears it rather than waiting for its timeout.
    await channel.failure(taskToken, TASK_ERRORS.agentFailed, `ECS worker: ${errorMessage(e)}`).catch(() => undefined);
    return 'failure';
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The task token alone, from a message whose probe is unreadable (so the state still hears why). */
const tokenOnlySchema = z.object({ taskToken: z.string().min(1) });

function tokenFrom(body: string): string | undefined {
  try {
    const t = tokenOnlySchema.safeParse(JSON.parse(body));
    return t.success ? t.data.taskToken : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Receive and handle messages one at a time until `signal` aborts (SIGTERM when ECS stops the
 * task). A probe in progress when the signal comes is stopped by the agent's own SIGTERM
 * handling only when ECS signals the whole task; here the loop finishes the message first.
 */
export async function serveTasks(opts: EcsWorkerOptions, signal: AbortSignal): Promise<void> {
  opts.log('ECS worker ready', { service: opts.service, taskArn: opts.taskArn });
  while (!signal.aborted) {
    let msg: ReceivedMessage | undefined;
    try {
      msg = await opts.channel.receive(opts.waitSeconds ?? 20, signal);
    } catch (e) {
      if (signal.aborted) break;
      opts.log('receive failed; retrying in 5 s', { error: errorMessage(e) });
      await new Promise((r) => setTimeout(r, 5000));
      continue;
    }
    if (!msg) continue;
    try {
      await handleMessage(opts, msg);
    } catch (e) {
      opts.log('message handling failed', { error: errorMessage(e) });
    }
  }
  opts.log('ECS worker stopped', {});
}
