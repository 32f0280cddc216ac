/**
 * QueryEngine on Athena: SQL from queries/ with `?` parameters passed as ExecutionParameters
 * (SQL literals, pattern-checked), idempotent starts per call (ClientRequestToken), bounded polling with
 * back-off, paged results typed by the result-set metadata, partition registration.
 */
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AthenaClient,
  BatchGetQueryExecutionCommand,
  type ColumnInfo,
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  ListQueryExecutionsCommand,
  StartQueryExecutionCommand,
  StopQueryExecutionCommand,
} from '@aws-sdk/client-athena';
import { QueryFailedError } from '../../../core/errors.js';
import { SAFE_ID } from '../../../core/fields.js';
import { checkRunId } from '../../../core/keys.js';
import {
  type QueryExecutionCall,
  selectStatementCall,
  sqlLiteral,
  unloadParquetCopy,
} from '../../../queries/unload.js';
import type { QueryEngine, QueryParam, Sleep } from '../../ports.js';
import type { AwsPort } from './aws-deps.js';

export { sqlLiteral };

export interface AthenaQueryEngineConfig {
  workgroup: string;
  database: string;
  /** Data bucket holding samples/path=…/run=…/ (JSONL) and parquet/path=…/run=…/. */
  bucket: string;
  /** The Parquet table the queries read (parquet/path=…/run=…/); defaults to "samples". */
  table?: string;
  /** The raw JSONL table (samples/path=…/run=…/); defaults to "<table>_jsonl". */
  jsonlTable?: string;
  /** Upper bound for one query, including queueing (stay below the Lambda timeout). */
  maxWaitMs?: number;
  sleep?: Sleep;
  /** One fresh value per call (tests pin it); default a random UUID. */
  salt?: () => string;
}

/**
 * Idempotency token (64 hex chars, Athena wants 32–128) for one `query()` call. The SDK resends
 * the same StartQueryExecution input on its own retries, so those share the token and start one
 * execution; `salt` is new for every call, because Athena answers a reused token with the old
 * execution forever, and a re-run after a FAILED query would never run it again.
 */
export function clientRequestToken(label: string, sql: string, params: QueryParam[], salt: string): string {
  return createHash('sha256')
    .update(JSON.stringify([label, sql, params, salt]))
    .digest('hex');
}

/** How many of the workgroup's most recent executions `settle` looks through. */
export const SETTLE_RECENT = 200;

/** A statement with its whitespace runs made single spaces, for comparing texts. */
const squeeze = (sql: string) => sql.replace(/\s+/g, ' ').trim();

const NUMERIC = new Set(['tinyint', 'smallint', 'integer', 'int', 'bigint', 'double', 'float', 'real', 'decimal']);

function typed(value: string | undefined, column: ColumnInfo | undefined): unknown {
  if (value === undefined) return null;
  const type = (column?.Type ?? 'varchar').toLowerCase();
  if (NUMERIC.has(type)) return Number(value);
  if (type === 'boolean') return value === 'true';
  return value;
}

export class AthenaQueryEngine implements QueryEngine {
  private readonly table: string;
  private readonly jsonlTable: string;
  private readonly maxWaitMs: number;
  private readonly sleep: Sleep;
  private readonly salt: () => string;

  constructor(
    private readonly athena: AthenaClient,
    private readonly config: AthenaQueryEngineConfig,
  ) {
    this.table = config.table ?? 'samples';
    this.jsonlTable = config.jsonlTable ?? `${this.table}_jsonl`;
    this.maxWaitMs = config.maxWaitMs ?? 240_000;
    this.sleep = config.sleep ?? sleep;
    this.salt = config.salt ?? randomUUID;
  }

  async query(sql: string, params: QueryParam[], label: string): Promise<Record<string, unknown>[]> {
    const literals = params.map(sqlLiteral);
    const id = await this.start(sql, literals, clientRequestToken(label, sql, params, this.salt()), label);
    await this.wait(id, label);
    return this.results(id);
  }

  /** Both tables get the partition: the JSONL one at samples/…, the Parquet one at parquet/…. */
  async registerPartition(pathId: string, runId: string): Promise<void> {
    if (!SAFE_ID.test(pathId)) throw new QueryFailedError(`unsafe path id: ${JSON.stringify(pathId)}`);
    checkRunId(runId);
    const where = `path=${pathId}/run=${runId}/`;
    for (const [table, prefix] of [
      [this.jsonlTable, 'samples'],
      [this.table, 'parquet'],
    ]) {
      // Partition values cannot be ExecutionParameters in DDL; both were pattern-checked above.
      const sql =
        `ALTER TABLE ${table} ADD IF NOT EXISTS PARTITION (path='${pathId}', run='${runId}') ` +
        `LOCATION 's3://${this.config.bucket}/${prefix}/${where}'`;
      const label = `partition-${table}-${pathId}-${runId}`;
      const id = await this.start(sql, [], clientRequestToken(label, sql, [], this.salt()), label);
      await this.wait(id, label);
    }
  }

  /** The copy's UNLOAD (queries/unload.ts) in this engine's workgroup and database. */
  copyCall(pathId: string, runId: string): QueryExecutionCall {
    if (!SAFE_ID.test(pathId)) throw new QueryFailedError(`unsafe path id: ${JSON.stringify(pathId)}`);
    checkRunId(runId);
    return {
      QueryString: unloadParquetCopy(this.config.bucket, pathId, runId),
      WorkGroup: this.config.workgroup,
      QueryExecutionContext: { Database: this.config.database },
    };
  }

  /** A SELECT from queries/ with its parameters as literals, in this engine's workgroup and database. */
  selectCall(sql: string, params: QueryParam[]): QueryExecutionCall {
    return selectStatementCall(sql, params, this.config.workgroup, this.config.database);
  }

  /**
   * What the state machine's `.sync` integration does, from a Lambda or the CLI (`pathbench
   * parquet --aws`): start the call, wait for its end. UNLOAD names its own files; the Parquet
   * table reads every file of the partition's location. Athena does not say how many rows it wrote.
   */
  async execute(call: QueryExecutionCall): Promise<{ rows?: number; queryExecutionId: string }> {
    if (call.WorkGroup !== this.config.workgroup || call.QueryExecutionContext.Database !== this.config.database)
      throw new QueryFailedError(
        `query call for workgroup ${call.WorkGroup} / database ${call.QueryExecutionContext.Database}, not this engine's ${this.config.workgroup} / ${this.config.database}`,
      );
    const label = call.QueryString.trim().split(/\s/, 1)[0].toLowerCase();
    const literals = call.ExecutionParameters ?? [];
    const id = await this.start(
      call.QueryString,
      literals,
      clientRequestToken(label, call.QueryString, literals, this.salt()),
      label,
    );
    await this.wait(id, label);
    return { queryExecutionId: id };
  }

  /** GetQueryResults of an execution that succeeded, every page, typed by the result-set metadata. */
  resultRows(queryExecutionId: string): Promise<Record<string, unknown>[]> {
    return this.results(queryExecutionId);
  }

  /**
   * Stop every run of this call still queued or running in the workgroup, and wait for each to
   * end (QueryEngine.settle). Looks at the workgroup's SETTLE_RECENT most recent executions:
   * the run to stop is one a just-stopped state machine execution started.
   */
  async settle(call: QueryExecutionCall): Promise<number> {
    const ids: string[] = [];
    let token: string | undefined;
    do {
      const out = await this.athena.send(
        new ListQueryExecutionsCommand({ WorkGroup: this.config.workgroup, MaxResults: 50, NextToken: token }),
      );
      ids.push(...(out.QueryExecutionIds ?? []));
      token = out.NextToken;
    } while (token && ids.length < SETTLE_RECENT);
    const same = (q: string | undefined) => q !== undefined && squeeze(q) === squeeze(call.QueryString);
    const running: string[] = [];
    for (let i = 0; i < Math.min(ids.length, SETTLE_RECENT); i += 50) {
      const out = await this.athena.send(
        new BatchGetQueryExecutionCommand({ QueryExecutionIds: ids.slice(i, Math.min(i + 50, SETTLE_RECENT)) }),
      );
      for (const q of out.QueryExecutions ?? []) {
        const state = q.Status?.State;
        if (q.QueryExecutionId && same(q.Query) && (state === 'QUEUED' || state === 'RUNNING'))
          running.push(q.QueryExecutionId);
      }
    }
    for (const id of running) {
      await this.athena.send(new StopQueryExecutionCommand({ QueryExecutionId: id }));
      await this.ended(id);
    }
    return running.length;
  }

  /** Wait until the execution is in a final state, whichever (bounded like `wait`). */
  private async ended(id: string): Promise<void> {
    let delay = 250;
    let waited = 0;
    for (;;) {
      const out = await this.athena.send(new GetQueryExecutionCommand({ QueryExecutionId: id }));
      const state = out.QueryExecution?.Status?.State;
      if (state === 'SUCCEEDED' || state === 'FAILED' || state === 'CANCELLED') return;
      if (waited >= this.maxWaitMs)
        throw new QueryFailedError(
          `query ${id} was stopped but still ${state ?? 'unknown'} after ${Math.round(this.maxWaitMs / 1000)} s`,
        );
      await this.sleep(delay);
      waited += delay;
      delay = Math.min(delay * 2, 5_000);
    }
  }

  private async start(sql: string, literals: string[], token: string, label: string): Promise<string> {
    const out = await this.athena.send(
      new StartQueryExecutionCommand({
        QueryString: sql,
        WorkGroup: this.config.workgroup,
        QueryExecutionContext: { Database: this.config.database },
        ClientRequestToken: token,
        // An empty ExecutionParameters list is rejected by Athena.
        ...(literals.length > 0 ? { ExecutionParameters: literals } : {}),
      }),
    );
    if (!out.QueryExecutionId) throw new QueryFailedError(`query ${label}: Athena returned no execution id`);
    return out.QueryExecutionId;
  }

  private async wait(id: string, label: string): Promise<void> {
    let delay = 250;
    let waited = 0;
    for (;;) {
      const out = await this.athena.send(new GetQueryExecutionCommand({ QueryExecutionId: id }));
      const status = out.QueryExecution?.Status;
      const state = status?.State;
      if (state === 'SUCCEEDED') return;
      if (state === 'FAILED' || state === 'CANCELLED') {
        throw new QueryFailedError(`query ${label} ${state}: ${status?.StateChangeReason ?? 'no reason given'}`);
      }
      if (waited >= this.maxWaitMs) {
        await this.athena.send(new StopQueryExecutionCommand({ QueryExecutionId: id })).catch(() => undefined);
        throw new QueryFailedError(`query ${label} did not finish within ${Math.round(this.maxWaitMs / 1000)} s`);
      }
      await this.sleep(delay);
      waited += delay;
      delay = Math.min(delay * 2, 5_000);
    }
  }

  private async results(id: string): Promise<Record<string, unknown>[]> {
    const rows: Record<string, unknown>[] = [];
    let token: string | undefined;
    let columns: ColumnInfo[] | undefined;
    let first = true;
    do {
      const out = await this.athena.send(new GetQueryResultsCommand({ QueryExecutionId: id, NextToken: token }));
      columns ??= out.ResultSet?.ResultSetMetadata?.ColumnInfo ?? [];
      const page = out.ResultSet?.Rows ?? [];
      // The first row of the first page repeats the column names.
      for (const row of first ? page.slice(1) : page) {
        const obj: Record<string, unknown> = {};
        columns.forEach((c, i) => {
          obj[c.Name ?? `_col${i}`] = typed(row.Data?.[i]?.VarCharValue, c);
        });
        rows.push(obj);
      }
      first = false;
      token = out.NextToken;
    } while (token);
    return rows;
  }
}

/** The query port of a Lambda: Athena over the samples table of its workgroup and database. */
export const athenaQuery: AwsPort<'query'> = ({ cfg }) =>
  new AthenaQueryEngine(new AthenaClient({ region: cfg.region }), {
    workgroup: cfg.workgroup,
    database: cfg.database,
    bucket: cfg.bucket,
    table: cfg.table,
  });
