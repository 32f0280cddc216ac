/**
 * DynamoRunLock with the real SDK against dynalite (a DynamoDB implementation) on loopback.
 * First: dynalite answers the calls the lock relies on as the service documents them.
 */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RunLockedError } from '../../../../core/errors.js';
import { DynamoRunLock } from '../../../../functions/adapters/aws/dynamodb-lock.js';
import { type Dynamo, startDynalite } from '../../../helpers/emulators.js';

const TABLE = 'pathbench-locks';
let db: Dynamo;
beforeAll(async () => {
  db = await startDynalite(TABLE);
});
afterAll(async () => {
  await db?.close();
});
beforeEach(async () => {
  await db.client.send(new DeleteItemCommand({ TableName: TABLE, Key: { pk: { S: 'pathbench-run-lock' } } }));
});

const S1 = '2026-01-01T00:00:00.000Z';
const S2 = '2026-01-01T00:05:00.000Z';
const lockAt = (now: Date, isRunActive?: (id: string) => Promise<boolean>) =>
  new DynamoRunLock(db.client, { table: TABLE, holder: 'test', ttlSeconds: 3600, now: () => now, isRunActive });
const lock = () => lockAt(new Date());

describe('dynalite answers as DynamoDB does (checked before trusting it)', () => {
  const item = { pk: { S: 'check' }, runId: { S: 'a' } };

  it('a failed ConditionExpression on PutItem and DeleteItem: ConditionalCheckFailedException, HTTP 400', async () => {
    await db.client.send(new PutItemCommand({ TableName: TABLE, Item: item }));
    const put = await db.client
      .send(new PutItemCommand({ TableName: TABLE, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }))
      .catch((e: unknown) => e);
    expect(put).toBeInstanceOf(ConditionalCheckFailedException);
    expect(put).toMatchObject({ name: 'ConditionalCheckFailedException', $metadata: { httpStatusCode: 400 } });
    expect((put as Error).message).toBe('The conditional request failed');
    const del = await db.client
      .send(
        new DeleteItemCommand({
          TableName: TABLE,
          Key: { pk: { S: 'check' } },
          ConditionExpression: 'runId = :r',
          ExpressionAttributeValues: { ':r': { S: 'b' } },
        }),
      )
      .catch((e: unknown) => e);
    expect(del).toBeInstanceOf(ConditionalCheckFailedException);
    // The item is still there.
    const got = await db.client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'check' } } }));
    expect(got.Item?.runId).toEqual({ S: 'a' });
  });

  it('expressions are validated: an undefined or unused value is a ValidationException', async () => {
    const undef = await db.client
      .send(new PutItemCommand({ TableName: TABLE, Item: item, ConditionExpression: 'runId = :missing' }))
      .catch((e: unknown) => e);
    expect(undef).toMatchObject({ name: 'ValidationException' });
    expect((undef as Error).message).toMatch(/attribute value used in expression is not defined.*:missing/);
    const unused = await db.client
      .send(
        new PutItemCommand({
          TableName: TABLE,
          Item: item,
          ConditionExpression: 'attribute_not_exists(pk)',
          ExpressionAttributeValues: { ':x': { S: 'x' } },
        }),
      )
      .catch((e: unknown) => e);
    expect(unused).toMatchObject({ name: 'ValidationException' });
    expect((unused as Error).message).toMatch(/unused in expressions.*:x/);
  });

  it('a missing table is ResourceNotFoundException', async () => {
    const e = await db.client
      .send(new GetItemCommand({ TableName: 'no-such-table', Key: { pk: { S: 'x' } } }))
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ResourceNotFoundException);
  });
});

describe('DynamoRunLock on dynalite', () => {
  it('takes, shows and releases the lock; a retry of the same execution keeps it', async () => {
    await lock().acquire('run-1', S1);
    await lock().acquire('run-1', S1);
    expect(await lock().current()).toMatchObject({ runId: 'run-1', holder: 'test', startedAt: S1 });
    await expect(lock().acquire('run-2', S2)).rejects.toThrow(/run run-1/);
    await lock().release('run-1', S1);
    expect(await lock().current()).toBeUndefined();
    await lock().release('run-1', S1); // idempotent
  });

  it('a second start reusing the run id is refused and its release leaves the first run’s lock', async () => {
    await lock().acquire('same', S1);
    const e = await lock()
      .acquire('same', S2)
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RunLockedError);
    expect((e as Error).message).toMatch(/choose another run id/);
    await lock().release('same', S2);
    expect(await lock().current()).toMatchObject({ runId: 'same', startedAt: S1 });
    await expect(lock().acquire('third', S2)).rejects.toBeInstanceOf(RunLockedError);
  });

  it('an expired lock is free', async () => {
    await lockAt(new Date(Date.now() - 2 * 3600_000)).acquire('old', S1);
    expect(await lock().current()).toBeUndefined();
    await lock().acquire('new', S2);
    expect(await lock().current()).toMatchObject({ runId: 'new' });
  });

  it('of many concurrent starts, exactly one takes the lock, every time', async () => {
    for (let round = 0; round < 10; round++) {
      const results = await Promise.allSettled(
        Array.from({ length: 12 }, (_, i) => lock().acquire(`r${round}-${i}`, S1)),
      );
      const won = results.filter((r) => r.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(RunLockedError);
      const holder = await lock().current();
      await lock().release(holder?.runId ?? '', S1);
    }
  });

  it('of many concurrent takeovers from an ended run, exactly one wins, every time', async () => {
    // Only the ended-* runs have ended; a taker that just won is running.
    const active = async (runId: string) => !runId.startsWith('ended-');
    for (let round = 0; round < 10; round++) {
      await lock().acquire(`ended-${round}`, S1);
      const results = await Promise.allSettled(
        Array.from({ length: 12 }, (_, i) => lockAt(new Date(), active).acquire(`t${round}-${i}`, S2)),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const holder = await lock().current();
      expect(holder?.runId).toMatch(new RegExp(`^t${round}-`));
      await lock().release(holder?.runId ?? '', S2);
    }
  });
});
