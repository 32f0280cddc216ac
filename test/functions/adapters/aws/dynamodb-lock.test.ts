/** DynamoRunLock against a mocked DynamoDB client. */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { DescribeExecutionCommand, ExecutionDoesNotExist, SFNClient } from '@aws-sdk/client-sfn';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, RunLockedError } from '../../../../core/errors.js';
import { executionArn } from '../../../../functions/adapters/aws/aws-deps.js';
import { DynamoRunLock, executionActiveCheck } from '../../../../functions/adapters/aws/dynamodb-lock.js';

const ddb = mockClient(DynamoDBClient);
const now = new Date('2026-01-01T00:00:00Z');
const epoch = now.getTime() / 1000;
const lock = new DynamoRunLock(new DynamoDBClient({ region: 'ap-northeast-1' }), {
  table: 'locks',
  holder: 'lambda:ValidatePlan',
  ttlSeconds: 3600,
  now: () => now,
});
const ccf = () => new ConditionalCheckFailedException({ $metadata: {}, message: 'The conditional request failed' });

const sfn = mockClient(SFNClient);
const SM = 'arn:aws:states:ap-northeast-1:123456789012:stateMachine:Pathbench-Measurement';
const heldBy = (runId: string) => ({
  Item: {
    pk: { S: 'pathbench-run-lock' },
    runId: { S: runId },
    holder: { S: 'lambda:ValidatePlan' },
    acquiredAt: { S: '2025-12-31T23:00:00.000Z' },
    expiresAt: { N: String(epoch + 100) },
  },
});
/** A lock that may take over from an ended run, checked through (mocked) Step Functions. */
const takeoverLock = () =>
  new DynamoRunLock(new DynamoDBClient({ region: 'ap-northeast-1' }), {
    table: 'locks',
    holder: 'lambda:ValidatePlan',
    ttlSeconds: 3600,
    now: () => now,
    isRunActive: executionActiveCheck(new SFNClient({ region: 'ap-northeast-1' }), SM, { now: () => now }),
  });

beforeEach(() => {
  ddb.reset();
  sfn.reset();
});

describe('DynamoRunLock', () => {
  it('takes the lock with a conditional put and a TTL', async () => {
    ddb.on(PutItemCommand).resolves({});
    await lock.acquire('run-1');
    expect(ddb.commandCalls(PutItemCommand)[0].args[0].input).toEqual({
      TableName: 'locks',
      Item: {
        pk: { S: 'pathbench-run-lock' },
        runId: { S: 'run-1' },
        holder: { S: 'lambda:ValidatePlan' },
        acquiredAt: { S: '2026-01-01T00:00:00.000Z' },
        expiresAt: { N: String(epoch + 3600) },
      },
      ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now OR runId = :runId',
      ExpressionAttributeValues: { ':now': { N: String(epoch) }, ':runId': { S: 'run-1' } },
    });
  });

  it('throws RunLockedError naming the holder when another run holds it', async () => {
    ddb.on(PutItemCommand).rejects(ccf());
    ddb.on(GetItemCommand).resolves({
      Item: {
        pk: { S: 'pathbench-run-lock' },
        runId: { S: 'run-0' },
        holder: { S: 'lambda:ValidatePlan' },
        acquiredAt: { S: '2025-12-31T23:30:00.000Z' },
        expiresAt: { N: String(epoch + 100) },
      },
    });
    const e = await lock.acquire('run-1').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RunLockedError);
    expect((e as Error).name).toBe('RunLockedError');
    expect((e as Error).message).toContain('run run-0');
    expect(ddb.commandCalls(GetItemCommand)[0].args[0].input).toEqual({
      TableName: 'locks',
      Key: { pk: { S: 'pathbench-run-lock' } },
      ConsistentRead: true,
    });
  });

  it('names the holder execution: put and release are conditional on run id and start time', async () => {
    ddb.on(PutItemCommand).resolves({});
    ddb.on(DeleteItemCommand).resolves({});
    await lock.acquire('run-1', '2026-01-01T00:00:00.000Z');
    const put = ddb.commandCalls(PutItemCommand)[0].args[0].input;
    expect(put.Item?.runStartedAt).toEqual({ S: '2026-01-01T00:00:00.000Z' });
    expect(put.ConditionExpression).toBe(
      'attribute_not_exists(pk) OR expiresAt < :now OR (runId = :runId AND runStartedAt = :startedAt)',
    );
    await lock.release('run-1', '2026-01-01T00:00:00.000Z');
    expect(ddb.commandCalls(DeleteItemCommand)[0].args[0].input).toEqual({
      TableName: 'locks',
      Key: { pk: { S: 'pathbench-run-lock' } },
      ConditionExpression: 'runId = :runId AND runStartedAt = :startedAt',
      ExpressionAttributeValues: { ':runId': { S: 'run-1' }, ':startedAt': { S: '2026-01-01T00:00:00.000Z' } },
    });
  });

  it('releases only its own lock; a failed condition is fine', async () => {
    ddb.on(DeleteItemCommand).resolvesOnce({}).rejectsOnce(ccf());
    await lock.release('run-1');
    await expect(lock.release('run-1')).resolves.toBeUndefined();
    expect(ddb.commandCalls(DeleteItemCommand)[0].args[0].input).toEqual({
      TableName: 'locks',
      Key: { pk: { S: 'pathbench-run-lock' } },
      ConditionExpression: 'runId = :runId',
      ExpressionAttributeValues: { ':runId': { S: 'run-1' } },
    });
  });

  it('propagates other errors', async () => {
    ddb.on(DeleteItemCommand).rejects(Object.assign(new Error('throttled'), { name: 'ThrottlingException' }));
    await expect(lock.release('run-1')).rejects.toThrow('throttled');
  });

  it('reports an expired lock as free', async () => {
    ddb.on(GetItemCommand).resolves({
      Item: { pk: { S: 'pathbench-run-lock' }, runId: { S: 'run-0' }, expiresAt: { N: String(epoch - 1) } },
    });
    expect(await lock.current()).toBeUndefined();
  });

  it('without an isRunActive check never takes over, and does not ask Step Functions', async () => {
    ddb.on(PutItemCommand).rejects(ccf());
    ddb.on(GetItemCommand).resolves(heldBy('run-0'));
    await expect(lock.acquire('run-1')).rejects.toBeInstanceOf(RunLockedError);
    expect(ddb.commandCalls(PutItemCommand)).toHaveLength(1);
    expect(sfn.commandCalls(DescribeExecutionCommand)).toHaveLength(0);
  });

  it('takes the lock over from an execution that ended, conditional on the old holder', async () => {
    ddb.on(PutItemCommand).rejectsOnce(ccf()).resolves({});
    ddb.on(GetItemCommand).resolves(heldBy('run-0'));
    sfn.on(DescribeExecutionCommand).resolves({ status: 'ABORTED', stopDate: new Date('2025-12-31T23:30:00Z') });
    await takeoverLock().acquire('run-1');
    expect(sfn.commandCalls(DescribeExecutionCommand)[0].args[0].input).toEqual({
      executionArn: 'arn:aws:states:ap-northeast-1:123456789012:execution:Pathbench-Measurement:run-0',
    });
    const puts = ddb.commandCalls(PutItemCommand).map((c) => c.args[0].input);
    expect(puts).toHaveLength(2);
    expect(puts[1]).toEqual({
      TableName: 'locks',
      Item: {
        pk: { S: 'pathbench-run-lock' },
        runId: { S: 'run-1' },
        holder: { S: 'lambda:ValidatePlan' },
        acquiredAt: { S: '2026-01-01T00:00:00.000Z' },
        expiresAt: { N: String(epoch + 3600) },
      },
      ConditionExpression: 'runId = :old AND acquiredAt = :oldAt',
      ExpressionAttributeValues: { ':old': { S: 'run-0' }, ':oldAt': { S: '2025-12-31T23:00:00.000Z' } },
    });
  });

  it('keeps the lock of a running execution, or one that ended moments ago (its cleanup may be running)', async () => {
    ddb.on(PutItemCommand).rejects(ccf());
    ddb.on(GetItemCommand).resolves(heldBy('run-0'));
    sfn
      .on(DescribeExecutionCommand)
      .resolvesOnce({ status: 'RUNNING' })
      .resolvesOnce({ status: 'FAILED', stopDate: new Date(now.getTime() - 60_000) });
    const l = takeoverLock();
    await expect(l.acquire('run-1')).rejects.toThrow(/another run holds the lock: run run-0/);
    await expect(l.acquire('run-1')).rejects.toBeInstanceOf(RunLockedError);
    expect(ddb.commandCalls(PutItemCommand)).toHaveLength(2);
  });

  it('keeps the lock when the holder cannot be checked (unknown execution, throttling)', async () => {
    ddb.on(PutItemCommand).rejects(ccf());
    ddb.on(GetItemCommand).resolves(heldBy('run-0'));
    sfn
      .on(DescribeExecutionCommand)
      .rejects(new ExecutionDoesNotExist({ $metadata: {}, message: 'no such execution' }));
    await expect(takeoverLock().acquire('run-1')).rejects.toBeInstanceOf(RunLockedError);
    expect(ddb.commandCalls(PutItemCommand)).toHaveLength(1);
  });

  it('loses a takeover race with RunLockedError', async () => {
    ddb.on(PutItemCommand).rejects(ccf());
    ddb.on(GetItemCommand).resolves(heldBy('run-0'));
    sfn.on(DescribeExecutionCommand).resolves({ status: 'TIMED_OUT', stopDate: new Date('2025-12-31T12:00:00Z') });
    const e = await takeoverLock()
      .acquire('run-1')
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RunLockedError);
    expect((e as Error).message).toMatch(/another run took the lock first \(after run run-0/);
    expect(ddb.commandCalls(PutItemCommand)).toHaveLength(2);
  });

  it('builds execution ARNs from the state machine ARN and rejects anything else', () => {
    expect(executionArn('arn:aws-cn:states:cn-north-1:1:stateMachine:M', 'r')).toBe(
      'arn:aws-cn:states:cn-north-1:1:execution:M:r',
    );
    expect(() => executionArn('arn:aws:lambda:ap-northeast-1:1:function:F', 'r')).toThrow(ConfigError);
  });
});
