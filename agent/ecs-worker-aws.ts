/**
 * The ECS worker's AWS adapters: its queue (SQS ReceiveMessage / DeleteMessage), the state
 * machine's callbacks (SendTaskHeartbeat / SendTaskSuccess / SendTaskFailure) and the data bucket
 * (GetObject of the spec, PutObject of raw files). Locally the SQS and Step Functions clients are
 * pointed at the driver's loopback queue (AWS_ENDPOINT_URL_SQS / AWS_ENDPOINT_URL_SFN), and the
 * store is a directory (DirTaskStore).
 */
import { createReadStream } from 'node:fs';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { GetObjectCommand, NoSuchKey, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  SendTaskFailureCommand,
  SendTaskHeartbeatCommand,
  SendTaskSuccessCommand,
  type SFNClient,
} from '@aws-sdk/client-sfn';
import { DeleteMessageCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { TaskResult } from '../core/ecs-client.js';
import type { ReceivedMessage, TaskChannel, TaskStore } from './ecs-worker.js';

export class AwsTaskChannel implements TaskChannel {
  constructor(
    private readonly sqs: SQSClient,
    private readonly sfn: SFNClient,
    private readonly queueUrl: string,
  ) {}

  async receive(waitSeconds: number, signal: AbortSignal): Promise<ReceivedMessage | undefined> {
    const out = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.queueUrl,
        MaxNumberOfMessages: 1,
        WaitTimeSeconds: Math.min(20, Math.max(0, waitSeconds)),
        // Deleted right after receipt (ecs-worker.ts); the timeout only covers that gap.
        VisibilityTimeout: 60,
      }),
      { abortSignal: signal },
    );
    const m = out.Messages?.[0];
    if (!m?.Body || !m.ReceiptHandle) return undefined;
    return { body: m.Body, receipt: m.ReceiptHandle };
  }

  async delete(receipt: string): Promise<void> {
    await this.sqs.send(new DeleteMessageCommand({ QueueUrl: this.queueUrl, ReceiptHandle: receipt }));
  }

  async heartbeat(token: string): Promise<void> {
    await this.sfn.send(new SendTaskHeartbeatCommand({ taskToken: token }));
  }

  async success(token: string, output: TaskResult): Promise<void> {
    await this.sfn.send(new SendTaskSuccessCommand({ taskToken: token, output: JSON.stringify(output) }));
  }

  async failure(token: string, error: string, cause: string): Promise<void> {
    // Step Functions limits error to 256 and cause to 32,768 characters.
    await this.sfn.send(
      new SendTaskFailureCommand({ taskToken: token, error: error.slice(0, 256), cause: cause.slice(0, 32_768) }),
    );
  }
}

export class S3TaskStore implements TaskStore {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async getText(key: string): Promise<string | undefined> {
    try {
      const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return await out.Body?.transformToString('utf8');
    } catch (e) {
      if (e instanceof NoSuchKey || (e as { name?: string }).name === 'NoSuchKey') return undefined;
      throw e;
    }
  }

  async putFile(key: string, file: string): Promise<void> {
    const { size } = await stat(file);
    await this.s3.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: createReadStream(file), ContentLength: size }),
    );
  }
}

/** The local driver's data directory, laid out as local/dir-store.ts lays it out (atomic renames). */
export class DirTaskStore implements TaskStore {
  constructor(private readonly root: string) {}

  private file(key: string): string {
    if (key.split('/').some((s) => s === '..' || s === '')) throw new Error(`bad key ${key}`);
    return join(this.root, ...key.split('/'));
  }

  async getText(key: string): Promise<string | undefined> {
    try {
      return await readFile(this.file(key), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  }

  async putFile(key: string, file: string): Promise<void> {
    const dest = this.file(key);
    await mkdir(dirname(dest), { recursive: true });
    const tmp = `${dest}.${process.pid}.tmp`;
    await writeFile(tmp, await readFile(file));
    await rename(tmp, dest);
  }
}
