/**
 * RunLock on DynamoDB: one item, taken with a conditional put (free, expired, or already ours)
 * and a TTL attribute so a crashed run cannot hold the lock forever.
 */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { RunLockedError } from '../../core/errors.js';
import type { LockInfo, RunLock } from '../../ports.js';
import { isAwsError } from './util.js';

export interface DynamoRunLockConfig {
  table: string;
  /** Who takes the lock (shown to the next run that finds it taken). */
  holder: string;
  /** Lock lifetime; a run longer than this loses its lock. Default 24 h. */
  ttlSeconds?: number;
  now?: () => Date;
}

const PK = 'pathbench-run-lock';

export class DynamoRunLock implements RunLock {
  private readonly ttlSeconds: number;
  private readonly now: () => Date;

  constructor(
    private readonly ddb: DynamoDBClient,
    private readonly config: DynamoRunLockConfig,
  ) {
    this.ttlSeconds = config.ttlSeconds ?? 24 * 3600;
    this.now = config.now ?? (() => new Date());
  }

  async acquire(runId: string): Promise<void> {
    const now = this.now();
    const nowEpoch = Math.floor(now.getTime() / 1000);
    try {
      await this.ddb.send(
        new PutItemCommand({
          TableName: this.config.table,
          Item: {
            pk: { S: PK },
            runId: { S: runId },
            holder: { S: this.config.holder },
            acquiredAt: { S: now.toISOString() },
            expiresAt: { N: String(nowEpoch + this.ttlSeconds) },
          },
          // A retried ValidatePlan of the same run must succeed, hence "or already ours".
          ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now OR runId = :runId',
          ExpressionAttributeValues: { ':now': { N: String(nowEpoch) }, ':runId': { S: runId } },
        }),
      );
    } catch (e) {
      if (!(e instanceof ConditionalCheckFailedException) && !isAwsError(e, 'ConditionalCheckFailedException')) throw e;
      const held = await this.current();
      const who = held ? `run ${held.runId} (${held.holder}, since ${held.acquiredAt})` : 'another run';
      throw new RunLockedError(`another run holds the lock: ${who}`, { cause: e });
    }
  }

  async release(runId: string): Promise<void> {
    try {
      await this.ddb.send(
        new DeleteItemCommand({
          TableName: this.config.table,
          Key: { pk: { S: PK } },
          ConditionExpression: 'runId = :runId',
          ExpressionAttributeValues: { ':runId': { S: runId } },
        }),
      );
    } catch (e) {
      // Not ours (or already gone): releasing is idempotent.
      if (!isAwsError(e, 'ConditionalCheckFailedException')) throw e;
    }
  }

  async current(): Promise<LockInfo | undefined> {
    const out = await this.ddb.send(
      new GetItemCommand({ TableName: this.config.table, Key: { pk: { S: PK } }, ConsistentRead: true }),
    );
    const item = out.Item;
    if (!item?.runId?.S) return undefined;
    const expiresAt = Number(item.expiresAt?.N ?? '0');
    // TTL deletion lags by up to days; an expired item is free.
    if (expiresAt < Math.floor(this.now().getTime() / 1000)) return undefined;
    return { runId: item.runId.S, holder: item.holder?.S ?? 'unknown', acquiredAt: item.acquiredAt?.S ?? 'unknown' };
  }
}
