/**
 * The local stand-in for a task client's SQS queue and for Step Functions' task-token callbacks,
 * so a local run of a plan with an `ecs-task` client goes through the same ASL branch
 * (PrepareTaskProbe → ProbeTask `sqs:sendMessage.waitForTaskToken` → EndTaskProbe) as on AWS.
 *
 * One loopback HTTP server speaks the AWS JSON 1.0 protocol for the calls the ECS worker makes
 * — SQS ReceiveMessage / DeleteMessage / SendMessage and Step Functions SendTaskHeartbeat /
 * SendTaskSuccess / SendTaskFailure — so the ECS worker (agent/ecs-worker.ts) runs with the
 * real SDK clients, pointed here by AWS_ENDPOINT_URL_SQS / AWS_ENDPOINT_URL_SFN.
 *
 * `resolver` is the ProbeTask state's local integration (local/asl-interpreter.ts): it mints the task
 * token aws-local-stepfunctions does not have, puts the message on the queue and settles when the
 * client calls back, failing with States.HeartbeatTimeout when no beat comes within the
 * message's heartbeatSeconds (the library enforces TimeoutSecondsPath itself, not heartbeats).
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { taskProbeSchema } from '../core/ecs-client.js';
import { type IntegrationResolver, LOCAL_TASK_TOKEN } from './asl-interpreter.js';

interface Queued {
  id: string;
  body: string;
  receipt?: string;
  visibleAt: number;
}

interface Waiting {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  heartbeatMs: number;
  timer?: NodeJS.Timeout;
}

const ACCOUNT = '000000000000';
/** An AWS JSON-protocol request (SQS, Step Functions): an object of the operation's fields. */
const requestBodySchema = z.record(z.string(), z.unknown());

function md5(s: string): string {
  return createHash('md5').update(s, 'utf8').digest('hex');
}

class AwsError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

function namedError(name: string, message: string): Error {
  const e = new Error(message);
  e.name = name;
  return e;
}

export class LocalTaskQueue {
  private server?: Server;
  private port = 0;
  private readonly queues = new Map<string, Queued[]>();
  private readonly waiting = new Map<string, Waiting>();
  private readonly receivers = new Set<() => void>();
  /** Every call the clients made, by operation (tests and progress). */
  readonly calls: string[] = [];

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((e) => this.reply(res, 500, { __type: 'InternalFailure', message: String(e) }));
    });
    await new Promise<void>((resolve, reject) => {
      this.server?.once('error', reject);
      this.server?.listen(0, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The local URL of a queue by name (the same shape as SQS's, on loopback). */
  queueUrl(name: string): string {
    return `${this.endpoint}/${ACCOUNT}/${name}`;
  }

  /** Environment for an ECS worker process using this queue. */
  clientEnv(): Record<string, string> {
    return {
      AWS_ENDPOINT_URL_SQS: this.endpoint,
      AWS_ENDPOINT_URL_SFN: this.endpoint,
      AWS_REGION: 'local',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    };
  }

  private queue(url: string): Queued[] {
    const name = url.split('/').pop() ?? '';
    if (!name) throw new AwsError('QueueDoesNotExist', `no queue in ${url}`);
    let q = this.queues.get(name);
    if (!q) {
      q = [];
      this.queues.set(name, q);
    }
    return q;
  }

  send(url: string, body: string): string {
    const id = randomUUID();
    this.queue(url).push({ id, body, visibleAt: 0 });
    for (const wake of [...this.receivers]) wake();
    return id;
  }

  /** Messages not yet deleted, by queue name. */
  depth(name: string): number {
    return this.queues.get(name)?.length ?? 0;
  }

  /** The ProbeTask state's local integration: SQS SendMessage with a task token, settled by the callbacks. */
  resolver(): IntegrationResolver {
    return async (input, { signal }) => {
      const p = input as { QueueUrl?: unknown; MessageBody?: unknown };
      if (typeof p.QueueUrl !== 'string') throw namedError('SQS.InvalidParameterValue', 'QueueUrl missing');
      const body = p.MessageBody as { probe?: unknown; taskToken?: unknown };
      if (body?.taskToken !== LOCAL_TASK_TOKEN)
        throw namedError('States.Runtime', 'the message body carries no $$.Task.Token');
      const probe = taskProbeSchema.parse(body.probe);
      const token = `local-${randomUUID()}`;
      const settled = new Promise<unknown>((resolve, reject) => {
        const w: Waiting = { resolve, reject, heartbeatMs: probe.heartbeatSeconds * 1000 };
        this.waiting.set(token, w);
        this.arm(token, w);
      });
      // The state's TimeoutSeconds (local/asl-interpreter.ts leaves it to this resolver).
      const timeout = setTimeout(
        () => this.settle(token, namedError('States.Timeout', `no result within ${probe.timeoutSeconds} s`)),
        probe.timeoutSeconds * 1000,
      );
      const onAbort = () => this.settle(token, namedError('States.Aborted', 'execution ended'));
      signal.addEventListener('abort', onAbort, { once: true });
      this.send(p.QueueUrl, JSON.stringify({ probe, taskToken: token }));
      try {
        return await settled;
      } finally {
        clearTimeout(timeout);
        signal.removeEventListener('abort', onAbort);
      }
    };
  }

  private arm(token: string, w: Waiting): void {
    if (w.timer) clearTimeout(w.timer);
    w.timer = setTimeout(
      () => this.settle(token, namedError('States.HeartbeatTimeout', `no heartbeat within ${w.heartbeatMs / 1000} s`)),
      w.heartbeatMs,
    );
  }

  private settle(token: string, outcome: Error | { output: unknown }): void {
    const w = this.waiting.get(token);
    if (!w) return;
    this.waiting.delete(token);
    if (w.timer) clearTimeout(w.timer);
    if (outcome instanceof Error) w.reject(outcome);
    else w.resolve(outcome.output);
  }

  private waiter(token: unknown): Waiting {
    const w = typeof token === 'string' ? this.waiting.get(token) : undefined;
    if (!w) throw new AwsError('TaskTimedOut', 'Task Timed Out');
    return w;
  }

  private async receive(url: string, max: number, waitSeconds: number, visibility: number): Promise<unknown> {
    const q = this.queue(url);
    const until = Date.now() + waitSeconds * 1000;
    for (;;) {
      const now = Date.now();
      const ready = q.filter((m) => m.visibleAt <= now).slice(0, Math.max(1, max));
      if (ready.length || now >= until) {
        return {
          Messages: ready.map((m) => {
            m.receipt = randomUUID();
            m.visibleAt = now + visibility * 1000;
            return { MessageId: m.id, ReceiptHandle: m.receipt, MD5OfBody: md5(m.body), Body: m.body };
          }),
        };
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.receivers.delete(wake);
          clearTimeout(t);
          resolve();
        };
        const t = setTimeout(wake, Math.min(until - now, 1000));
        this.receivers.add(wake);
      });
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const target = String(req.headers['x-amz-target'] ?? '');
    const op = target.split('.').pop() ?? '';
    let body: Record<string, unknown>;
    try {
      const parsed = requestBodySchema.safeParse(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'));
      if (!parsed.success)
        return this.reply(res, 400, { __type: 'SerializationException', message: 'body is not a JSON object' });
      body = parsed.data;
    } catch {
      return this.reply(res, 400, { __type: 'SerializationException', message: 'body is not JSON' });
    }
    this.calls.push(op);
    try {
      switch (target) {
        case 'AmazonSQS.ReceiveMessage':
          return this.reply(
            res,
            200,
            await this.receive(
              String(body.QueueUrl),
              Number(body.MaxNumberOfMessages ?? 1),
              Math.min(20, Number(body.WaitTimeSeconds ?? 0)),
              Number(body.VisibilityTimeout ?? 30),
            ),
          );
        case 'AmazonSQS.DeleteMessage': {
          const q = this.queue(String(body.QueueUrl));
          const i = q.findIndex((m) => m.receipt === body.ReceiptHandle);
          if (i < 0) throw new AwsError('ReceiptHandleIsInvalid', 'receipt handle is not current');
          q.splice(i, 1);
          return this.reply(res, 200, {});
        }
        case 'AmazonSQS.SendMessage': {
          const text = String(body.MessageBody ?? '');
          const id = this.send(String(body.QueueUrl), text);
          return this.reply(res, 200, { MessageId: id, MD5OfMessageBody: md5(text) });
        }
        case 'AWSStepFunctions.SendTaskHeartbeat': {
          const w = this.waiter(body.taskToken);
          this.arm(String(body.taskToken), w);
          return this.reply(res, 200, {});
        }
        case 'AWSStepFunctions.SendTaskSuccess': {
          this.waiter(body.taskToken);
          let output: unknown;
          try {
            output = JSON.parse(String(body.output));
          } catch {
            throw new AwsError('InvalidOutput', 'output is not JSON');
          }
          this.settle(String(body.taskToken), { output });
          return this.reply(res, 200, {});
        }
        case 'AWSStepFunctions.SendTaskFailure': {
          this.waiter(body.taskToken);
          this.settle(
            String(body.taskToken),
            namedError(String(body.error ?? 'States.TaskFailed'), String(body.cause ?? '')),
          );
          return this.reply(res, 200, {});
        }
        default:
          throw new AwsError('UnknownOperationException', `${target || '(no X-Amz-Target)'} is not served locally`);
      }
    } catch (e) {
      if (e instanceof AwsError) return this.reply(res, 400, { __type: e.type, message: e.message });
      throw e;
    }
  }

  private reply(res: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/x-amz-json-1.0',
      'content-length': Buffer.byteLength(text),
      'x-amzn-requestid': randomUUID(),
    });
    res.end(text);
  }

  async close(): Promise<void> {
    for (const token of [...this.waiting.keys()]) this.settle(token, namedError('States.Aborted', 'queue closed'));
    for (const wake of [...this.receivers]) wake();
    await new Promise<void>((resolve) => {
      if (!this.server) return resolve();
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
