/**
 * RunLock on DynamoDB: one item, taken with a conditional put (free, expired, or already this
 * execution's: run id and start time) and a TTL attribute so a crashed run cannot hold the lock forever. When an `isRunActive` check
 * is given, a lock whose holder run has already ended is taken over at once instead of blocking
 * every run until the TTL.
 */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { DescribeExecutionCommand, SFNClient } from '@aws-sdk/client-sfn';
import { RunLockedError } from '../../../core/errors.js';
import type { LockInfo, Logger, RunLock } from '../../ports.js';
import { type AwsPort, executionArn } from './aws-deps.js';
import { isAwsError } from './sdk-errors.js';

export interface DynamoRunLockConfig {
  table: string;
  /** Who takes the lock (shown to the next run that finds it taken). */
  holder: string;
  /** Lock lifetime; a run longer than this loses its lock. Default 24 h. */
  ttlSeconds?: number;
  now?: () => Date;
  /**
   * Whether the run that holds the lock may still be using it. False lets a new run take the
   * lock over; absent means never take over (wait for release or TTL).
   */
  isRunActive?: (runId: string) => Promise<boolean>;
  log?: Logger;
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

  async acquire(runId: string, startedAt?: string): Promise<void> {
    // A retried ValidatePlan of the same execution (same run id and start time) must succeed,
    // hence "or already ours"; a second start reusing the run id has another start time.
    const ours = startedAt === undefined ? 'runId = :runId' : '(runId = :runId AND runStartedAt = :startedAt)';
    const free = `attribute_not_exists(pk) OR expiresAt < :now OR ${ours}`;
    try {
      await this.put(runId, startedAt, free, (nowEpoch) => ({
        ':now': { N: String(nowEpoch) },
        ':runId': { S: runId },
        ...(startedAt === undefined ? {} : { ':startedAt': { S: startedAt } }),
      }));
      return;
    } catch (e) {
      if (!isConditionFailed(e)) throw e;
      const held = await this.current();
      const who = held ? `run ${held.runId} (${held.holder}, since ${held.acquiredAt})` : 'another run';
      if (!held || !(await this.holderEnded(held.runId))) {
        const reused = held?.runId === runId ? ' (a run with this id holds it: choose another run id)' : '';
        throw new RunLockedError(`another run holds the lock: ${who}${reused}`, { cause: e });
      }
      try {
        // Only if the ended run still holds it: a run that took it in between keeps it.
        await this.put(runId, startedAt, 'runId = :old AND acquiredAt = :oldAt', () => ({
          ':old': { S: held.runId },
          ':oldAt': { S: held.acquiredAt },
        }));
      } catch (e2) {
        if (!isConditionFailed(e2)) throw e2;
        throw new RunLockedError(`another run took the lock first (after ${who} ended)`, { cause: e2 });
      }
      this.config.log?.warn('run lock taken over from an ended run', {
        runId,
        from: held.runId,
        since: held.acquiredAt,
      });
    }
  }

  private async put(
    runId: string,
    startedAt: string | undefined,
    condition: string,
    values: (nowEpoch: number) => Record<string, { S: string } | { N: string }>,
  ): Promise<void> {
    const now = this.now();
    const nowEpoch = Math.floor(now.getTime() / 1000);
    await this.ddb.send(
      new PutItemCommand({
        TableName: this.config.table,
        Item: {
          pk: { S: PK },
          runId: { S: runId },
          holder: { S: this.config.holder },
          acquiredAt: { S: now.toISOString() },
          expiresAt: { N: String(nowEpoch + this.ttlSeconds) },
          ...(startedAt === undefined ? {} : { runStartedAt: { S: startedAt } }),
        },
        ConditionExpression: condition,
        ExpressionAttributeValues: values(nowEpoch),
      }),
    );
  }

  /** True only when the check says the holder run has ended; no check or a failed check keeps the lock. */
  private async holderEnded(holderRunId: string): Promise<boolean> {
    if (!this.config.isRunActive) return false;
    try {
      return !(await this.config.isRunActive(holderRunId));
    } catch (e) {
      this.config.log?.warn('could not check the lock holder; lock kept', {
        holder: holderRunId,
        error: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
      });
      return false;
    }
  }

  /** Deletes the item only while it is this run's (and this execution's, when startedAt is given). */
  async release(runId: string, startedAt?: string): Promise<void> {
    try {
      await this.ddb.send(
        new DeleteItemCommand({
          TableName: this.config.table,
          Key: { pk: { S: PK } },
          ConditionExpression:
            startedAt === undefined ? 'runId = :runId' : 'runId = :runId AND runStartedAt = :startedAt',
          ExpressionAttributeValues: {
            ':runId': { S: runId },
            ...(startedAt === undefined ? {} : { ':startedAt': { S: startedAt } }),
          },
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
    return {
      runId: item.runId.S,
      holder: item.holder?.S ?? 'unknown',
      acquiredAt: item.acquiredAt?.S ?? 'unknown',
      ...(item.runStartedAt?.S ? { startedAt: item.runStartedAt.S } : {}),
    };
  }
}

function isConditionFailed(e: unknown): boolean {
  return e instanceof ConditionalCheckFailedException || isAwsError(e, 'ConditionalCheckFailedException');
}

/**
 * `isRunActive` for DynamoRunLock: the run id is the execution name, so DescribeExecution tells
 * whether the holder still runs. An execution that ended less than `graceSeconds` ago still
 * counts as active: the cleanup rule may be restoring its routes right now, and a new run that
 * swapped routes in between would record the ended run's targets as its "originals".
 */
export function executionActiveCheck(
  sfn: SFNClient,
  stateMachineArn: string,
  opts: { graceSeconds?: number; now?: () => Date } = {},
): (runId: string) => Promise<boolean> {
  const graceMs = (opts.graceSeconds ?? 900) * 1000;
  const now = opts.now ?? (() => new Date());
  return async (runId) => {
    const out = await sfn.send(new DescribeExecutionCommand({ executionArn: executionArn(stateMachineArn, runId) }));
    if (out.status === 'RUNNING' || out.status === 'PENDING_REDRIVE') return true;
    if (!out.stopDate) return true;
    return now().getTime() - out.stopDate.getTime() < graceMs;
  };
}

/**
 * The lock port of a Lambda. With `lock` (not just `lock:read`) and the state machine's ARN, a
 * lock whose holder execution has ended may be taken over: only `lock` grants DescribeExecution.
 */
export const dynamoLock: AwsPort<'lock'> = ({ cfg, log, needs }) => {
  const isRunActive =
    needs.includes('lock') && cfg.stateMachineArn
      ? executionActiveCheck(new SFNClient({ region: cfg.region }), cfg.stateMachineArn)
      : undefined;
  return new DynamoRunLock(new DynamoDBClient({ region: cfg.region }), {
    table: cfg.lockTable,
    holder: cfg.holder,
    ...(isRunActive ? { isRunActive } : {}),
    log,
  });
};
