/**
 * Entry of the ECS worker bundle (dist/ecs-worker.cjs), the command of a client service's
 * container: `node ecs-worker.cjs`. Configuration from the environment (set by the task
 * definition in infra/testbed/seed-002, or by the local driver):
 *   PATHBENCH_QUEUE_URL    this service's probe queue
 *   PATHBENCH_SERVICE      this service's name (a message for another service is refused)
 *   PATHBENCH_BUCKET       the data bucket (AWS), or PATHBENCH_STORE_DIR (local data directory)
 *   PATHBENCH_AGENT        the agent bundle (default: agent.cjs next to this file)
 *   ECS_CONTAINER_METADATA_URI_V4  set by ECS: the task's ARN is recorded in the manifest
 *   PATHBENCH_TASK_ARN     instead of the metadata endpoint (local runs)
 */
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import { SQSClient } from '@aws-sdk/client-sqs';
import { z } from 'zod';
import { errorMessage } from '../core/errors.js';
import { serveTasks, type TaskStore } from './ecs-worker.js';
import { AwsTaskChannel, DirTaskStore, S3TaskStore } from './ecs-worker-aws.js';

function need(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

/** The task metadata endpoint's `/task` answer, as far as the ECS worker needs it. */
const taskMetadataSchema = z.object({ TaskARN: z.string().optional() });

async function taskArn(): Promise<string | undefined> {
  if (process.env.PATHBENCH_TASK_ARN) return process.env.PATHBENCH_TASK_ARN;
  const uri = process.env.ECS_CONTAINER_METADATA_URI_V4;
  if (!uri) return undefined;
  try {
    const r = await fetch(`${uri}/task`, { signal: AbortSignal.timeout(2000) });
    const meta = taskMetadataSchema.safeParse(await r.json());
    return meta.success ? meta.data.TaskARN : undefined;
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  const log = (message: string, data?: Record<string, unknown>) =>
    process.stderr.write(`${JSON.stringify({ t: new Date().toISOString(), message, ...(data ?? {}) })}\n`);
  const queueUrl = need('PATHBENCH_QUEUE_URL');
  const service = need('PATHBENCH_SERVICE');
  const storeDir = process.env.PATHBENCH_STORE_DIR;
  const store: TaskStore = storeDir
    ? new DirTaskStore(storeDir)
    : new S3TaskStore(new S3Client({}), need('PATHBENCH_BUCKET'));
  const channel = new AwsTaskChannel(new SQSClient({}), new SFNClient({}), queueUrl);
  const stop = new AbortController();
  process.once('SIGTERM', () => stop.abort());
  process.once('SIGINT', () => stop.abort());
  await serveTasks(
    {
      channel,
      store,
      service,
      taskArn: await taskArn(),
      agentPath: process.env.PATHBENCH_AGENT ?? join(__dirname, 'agent.cjs'),
      log,
      waitSeconds: Number(process.env.PATHBENCH_RECEIVE_WAIT_SECONDS ?? 20),
    },
    stop.signal,
  );
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`ecs-worker: ${errorMessage(e)}\n`);
    process.exit(1);
  },
);
