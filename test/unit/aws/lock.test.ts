/** DynamoRunLock against a mocked DynamoDB client. */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { DynamoRunLock } from '../../../functions/adapters/aws/lock.js';
import { RunLockedError } from '../../../functions/core/errors.js';

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

beforeEach(() => ddb.reset());

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
});
