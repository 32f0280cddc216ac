/**
 * The task client's AWS adapters against the real SDK command shapes (aws-sdk-client-mock): the
 * queue calls, the Step Functions callbacks and the S3 store.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import {
  SendTaskFailureCommand,
  SendTaskHeartbeatCommand,
  SendTaskSuccessCommand,
  SFNClient,
  TaskTimedOut,
} from '@aws-sdk/client-sfn';
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { tokenGone } from '../../agent/ecs-worker.js';
import { AwsTaskChannel, S3TaskStore } from '../../agent/ecs-worker-aws.js';

const sqs = mockClient(SQSClient);
const sfn = mockClient(SFNClient);
const s3 = mockClient(S3Client);
const URL = 'https://sqs.ap-northeast-1.amazonaws.com/123456789012/pathbench-client-c-svc';

afterEach(() => {
  sqs.reset();
  sfn.reset();
  s3.reset();
});

describe('AwsTaskChannel', () => {
  const channel = new AwsTaskChannel(
    new SQSClient({ region: 'ap-northeast-1' }),
    new SFNClient({ region: 'ap-northeast-1' }),
    URL,
  );

  it('receives one message with a long poll and deletes it by receipt', async () => {
    sqs.on(ReceiveMessageCommand).resolves({ Messages: [{ Body: '{"x":1}', ReceiptHandle: 'rh-1' }] });
    sqs.on(DeleteMessageCommand).resolves({});
    const m = await channel.receive(30, new AbortController().signal);
    expect(m).toEqual({ body: '{"x":1}', receipt: 'rh-1' });
    expect(sqs.commandCalls(ReceiveMessageCommand)[0].args[0].input).toEqual({
      QueueUrl: URL,
      MaxNumberOfMessages: 1,
      WaitTimeSeconds: 20,
      VisibilityTimeout: 60,
    });
    await channel.delete('rh-1');
    expect(sqs.commandCalls(DeleteMessageCommand)[0].args[0].input).toEqual({ QueueUrl: URL, ReceiptHandle: 'rh-1' });
  });

  it('returns nothing for an empty poll', async () => {
    sqs.on(ReceiveMessageCommand).resolves({});
    expect(await channel.receive(5, new AbortController().signal)).toBeUndefined();
  });

  it('sends heartbeats, success with JSON output, and failure within the service limits', async () => {
    sfn.on(SendTaskHeartbeatCommand).resolves({});
    sfn.on(SendTaskSuccessCommand).resolves({});
    sfn.on(SendTaskFailureCommand).resolves({});
    await channel.heartbeat('tok');
    await channel.success('tok', { files: 3, agentExitCode: 0, taskId: 'abc' });
    await channel.failure('tok', 'E'.repeat(300), 'c'.repeat(40_000));
    expect(sfn.commandCalls(SendTaskHeartbeatCommand)[0].args[0].input).toEqual({ taskToken: 'tok' });
    expect(JSON.parse(sfn.commandCalls(SendTaskSuccessCommand)[0].args[0].input.output as string)).toEqual({
      files: 3,
      agentExitCode: 0,
      taskId: 'abc',
    });
    const f = sfn.commandCalls(SendTaskFailureCommand)[0].args[0].input;
    expect(f.error?.length).toBe(256);
    expect(f.cause?.length).toBe(32_768);
  });

  it('a heartbeat refused because the state timed out reads as "token gone"', async () => {
    sfn.on(SendTaskHeartbeatCommand).rejects(new TaskTimedOut({ message: 'Task Timed Out', $metadata: {} }));
    const e = await channel.heartbeat('tok').catch((x: unknown) => x);
    expect(tokenGone(e)).toBe(true);
    expect(tokenGone(new Error('network'))).toBe(false);
  });
});

describe('S3TaskStore', () => {
  const store = new S3TaskStore(new S3Client({ region: 'ap-northeast-1' }), 'bucket');

  it('reads the spec and reports a missing one as undefined', async () => {
    s3.on(GetObjectCommand, { Key: 'specs/a' }).resolves({
      Body: { transformToString: async () => '{"spec":1}' } as never,
    });
    s3.on(GetObjectCommand, { Key: 'specs/b' }).rejects(new NoSuchKey({ message: 'no', $metadata: {} }));
    expect(await store.getText('specs/a')).toBe('{"spec":1}');
    expect(await store.getText('specs/b')).toBeUndefined();
  });

  it('uploads a raw file under its key with its length', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'task-store-'));
    try {
      const f = join(dir, '1.jsonl');
      await writeFile(f, 'abc\n');
      s3.on(PutObjectCommand).resolves({});
      await store.putFile('raw/path=D/run=r/client=svc/tcp-connect/1.jsonl', f);
      const input = s3.commandCalls(PutObjectCommand)[0].args[0].input;
      expect(input.Bucket).toBe('bucket');
      expect(input.Key).toBe('raw/path=D/run=r/client=svc/tcp-connect/1.jsonl');
      expect(input.ContentLength).toBe(4);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
