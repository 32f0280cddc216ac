/**
 * Local ECS workers: for a plan with `ecs-task` clients the driver starts the loopback queue
 * (local/local-queue.ts) and one ECS worker process per client service (dist/ecs-worker.cjs,
 * the same loop an ECS task runs), storing into the run's data directory. They run on the
 * host's loopback (not inside a lab namespace: the queue listens on the host's 127.0.0.1).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { isTaskClient, taskQueueUrl } from '../core/ecs-client.js';
import type { ResolvedPlan } from '../core/resolved-plan.js';
import type { Logger } from '../functions/ports.js';
import type { ServiceIntegration } from '../statemachine/asl.js';
import type { IntegrationResolver } from './asl-interpreter.js';
import { LocalTaskQueue } from './local-queue.js';

export const LOCAL_ACCOUNT_ID = '000000000000';

export interface EcsWorkers {
  queue: LocalTaskQueue;
  accountId: string;
  integrations: Partial<Record<ServiceIntegration, IntegrationResolver>>;
  stop(): Promise<void>;
}

export async function startEcsWorkers(opts: {
  plan: ResolvedPlan;
  dataDir: string;
  bundle: string;
  agent: string;
  log: Logger;
  /** Seconds of one receive long poll (short in tests so stop is quick). */
  waitSeconds?: number;
}): Promise<EcsWorkers> {
  const queue = await new LocalTaskQueue().start();
  const children: ChildProcess[] = [];
  const seen = new Set<string>();
  for (const p of opts.plan.paths) {
    if (!isTaskClient(p.client)) continue;
    // The queue is named by the plan's URL (or the convention); locally only its name matters.
    const name = taskQueueUrl(p.client, LOCAL_ACCOUNT_ID).split('/').pop() as string;
    if (seen.has(name)) continue;
    seen.add(name);
    const child = spawn(process.execPath, [opts.bundle], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        ...process.env,
        ...queue.clientEnv(),
        PATHBENCH_QUEUE_URL: queue.queueUrl(name),
        PATHBENCH_SERVICE: p.client.service,
        PATHBENCH_STORE_DIR: opts.dataDir,
        PATHBENCH_AGENT: opts.agent,
        PATHBENCH_TASK_ARN: `arn:aws:ecs:local:${LOCAL_ACCOUNT_ID}:task/${p.client.cluster}/local-${p.client.service}`,
        PATHBENCH_RECEIVE_WAIT_SECONDS: String(opts.waitSeconds ?? 2),
      },
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (d: string) => {
      for (const line of d.split('\n').filter(Boolean)) opts.log.info(`ECS worker ${p.client.service}: ${line}`);
    });
    children.push(child);
    opts.log.info('ECS worker started', { service: p.client.service, queue: name, pid: child.pid });
  }
  const resolver = queue.resolver();
  return {
    queue,
    accountId: LOCAL_ACCOUNT_ID,
    integrations: {
      // The plan's queue URL may be an AWS one: the local queue goes by the URL's last segment.
      'arn:aws:states:::sqs:sendMessage.waitForTaskToken': (input, call) => {
        const i = input as { QueueUrl?: unknown };
        const name = typeof i.QueueUrl === 'string' ? i.QueueUrl.split('/').pop() : undefined;
        return resolver({ ...(input as object), QueueUrl: name ? queue.queueUrl(name) : i.QueueUrl }, call);
      },
    },
    async stop() {
      await Promise.all(
        children.map(
          (c) =>
            new Promise<void>((resolve) => {
              if (c.exitCode !== null || c.signalCode !== null) return resolve();
              c.once('close', () => resolve());
              c.kill('SIGTERM');
              setTimeout(() => c.kill('SIGKILL'), 5000).unref();
            }),
        ),
      );
      await queue.close();
    },
  };
}
