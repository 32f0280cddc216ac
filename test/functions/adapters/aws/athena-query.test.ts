/** AthenaQueryEngine against a mocked Athena client: parameters, token, polling, paging, failures. */
import {
  AthenaClient,
  BatchGetQueryExecutionCommand,
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  ListQueryExecutionsCommand,
  type QueryExecution,
  StartQueryExecutionCommand,
  StopQueryExecutionCommand,
} from '@aws-sdk/client-athena';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { QueryFailedError } from '../../../../core/errors.js';
import {
  AthenaQueryEngine,
  clientRequestToken,
  SETTLE_RECENT,
  sqlLiteral,
} from '../../../../functions/adapters/aws/athena-query.js';

const athena = mockClient(AthenaClient);
const sleeps: number[] = [];
const engine = new AthenaQueryEngine(new AthenaClient({ region: 'ap-northeast-1' }), {
  workgroup: 'pathbench',
  database: 'pathbench',
  bucket: 'pb-data',
  maxWaitMs: 2_000,
  sleep: async (ms) => {
    sleeps.push(ms);
  },
  salt: () => `salt-${++salts}`,
});
let salts = 0;
const cols = [
  { Name: 'path_id', Type: 'varchar' },
  { Name: 'n', Type: 'bigint' },
  { Name: 'p50', Type: 'double' },
  { Name: 'ok', Type: 'boolean' },
];
const row = (...v: (string | undefined)[]) => ({ Data: v.map((x) => (x === undefined ? {} : { VarCharValue: x })) });

/** GetQueryResults in two pages: A on the first (after the header row), B, whose p50 is `bP50`, on the second. */
function twoPages(bP50: string | undefined): void {
  athena
    .on(GetQueryResultsCommand)
    .resolvesOnce({
      ResultSet: {
        ResultSetMetadata: { ColumnInfo: cols },
        Rows: [row('path_id', 'n', 'p50', 'ok'), row('A', '300', '0.21', 'true')],
      },
      NextToken: 'page2',
    })
    .resolvesOnce({ ResultSet: { Rows: [row('B', '299', bP50, 'false')] } });
}

beforeEach(() => {
  athena.reset();
  sleeps.length = 0;
});

describe('AthenaQueryEngine', () => {
  it('starts in the workgroup with literals, polls with back-off, pages results and types values', async () => {
    athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q-1' });
    athena
      .on(GetQueryExecutionCommand)
      .resolvesOnce({ QueryExecution: { Status: { State: 'QUEUED' } } })
      .resolvesOnce({ QueryExecution: { Status: { State: 'RUNNING' } } })
      .resolves({ QueryExecution: { Status: { State: 'SUCCEEDED' } } });
    twoPages(undefined);
    const sql = 'SELECT path_id, n, p50, ok FROM r WHERE run = ? AND n > ?';
    const rows = await engine.query(sql, ['run-1', 10], 'percentiles-run-1');
    expect(rows).toEqual([
      { path_id: 'A', n: 300, p50: 0.21, ok: true },
      { path_id: 'B', n: 299, p50: null, ok: false },
    ]);
    const start = athena.commandCalls(StartQueryExecutionCommand)[0].args[0].input;
    expect(start).toEqual({
      QueryString: sql,
      WorkGroup: 'pathbench',
      QueryExecutionContext: { Database: 'pathbench' },
      ClientRequestToken: clientRequestToken('percentiles-run-1', sql, ['run-1', 10], `salt-${salts}`),
      ExecutionParameters: ["'run-1'", '10'],
    });
    expect(start.ClientRequestToken).toMatch(/^[0-9a-f]{64}$/);
    expect(sleeps).toEqual([250, 500]);
    expect(athena.commandCalls(GetQueryResultsCommand).map((c) => c.args[0].input.NextToken)).toEqual([
      undefined,
      'page2',
    ]);
  });

  it("a summary query's call: selectCall's literals reach StartQueryExecution through execute; resultRows pages the rows", async () => {
    athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q-sum' });
    athena.on(GetQueryExecutionCommand).resolves({ QueryExecution: { Status: { State: 'SUCCEEDED' } } });
    twoPages('0.5');
    const sql = 'SELECT path_id, n, p50, ok FROM r WHERE run = ?';
    const call = engine.selectCall(sql, ['run-1']);
    expect(call).toEqual({
      QueryString: sql,
      WorkGroup: 'pathbench',
      QueryExecutionContext: { Database: 'pathbench' },
      ExecutionParameters: ["'run-1'"],
    });
    expect(() => engine.selectCall(sql, ["run-1' OR '1'='1"])).toThrow(QueryFailedError);
    expect(await engine.execute(call)).toEqual({ queryExecutionId: 'q-sum' });
    const start = athena.commandCalls(StartQueryExecutionCommand)[0].args[0].input;
    expect(start.ExecutionParameters).toEqual(["'run-1'"]);
    expect(start.QueryString).toBe(sql);
    // Nothing is read until SummarizeRun asks, by id, with no wait.
    expect(athena.commandCalls(GetQueryResultsCommand)).toHaveLength(0);
    const executionsPolled = athena.commandCalls(GetQueryExecutionCommand).length;
    expect(await engine.resultRows('q-sum')).toEqual([
      { path_id: 'A', n: 300, p50: 0.21, ok: true },
      { path_id: 'B', n: 299, p50: 0.5, ok: false },
    ]);
    expect(athena.commandCalls(GetQueryResultsCommand).map((c) => c.args[0].input)).toEqual([
      { QueryExecutionId: 'q-sum', NextToken: undefined },
      { QueryExecutionId: 'q-sum', NextToken: 'page2' },
    ]);
    expect(athena.commandCalls(GetQueryExecutionCommand)).toHaveLength(executionsPolled);
  });

  it('derives the token from query and salt: same inputs same token, anything else differs', () => {
    const a = clientRequestToken('l', 'SELECT ?', ['run-1'], 's1');
    expect(clientRequestToken('l', 'SELECT ?', ['run-1'], 's1')).toBe(a);
    expect(clientRequestToken('l', 'SELECT ?', ['run-2'], 's1')).not.toBe(a);
    expect(clientRequestToken('l', 'SELECT ?', ['run-1'], 's2')).not.toBe(a);
  });

  it('starts a new execution when the same query is run again after it FAILED', async () => {
    athena
      .on(StartQueryExecutionCommand)
      .resolvesOnce({ QueryExecutionId: 'q-1' })
      .resolves({ QueryExecutionId: 'q-2' });
    athena
      .on(GetQueryExecutionCommand, { QueryExecutionId: 'q-1' })
      .resolves({ QueryExecution: { Status: { State: 'FAILED', StateChangeReason: 'throttled' } } });
    athena
      .on(GetQueryExecutionCommand, { QueryExecutionId: 'q-2' })
      .resolves({ QueryExecution: { Status: { State: 'SUCCEEDED' } } });
    athena.on(GetQueryResultsCommand).resolves({ ResultSet: { ResultSetMetadata: { ColumnInfo: [] }, Rows: [] } });
    await expect(engine.query('SELECT ?', ['run-1'], 'summary-run-1')).rejects.toThrow(/FAILED: throttled/);
    await expect(engine.query('SELECT ?', ['run-1'], 'summary-run-1')).resolves.toEqual([]);
    const tokens = athena.commandCalls(StartQueryExecutionCommand).map((c) => c.args[0].input.ClientRequestToken);
    expect(tokens).toHaveLength(2);
    expect(tokens[0]).not.toBe(tokens[1]);
    for (const t of tokens) expect(t).toMatch(/^[0-9a-f]{64}$/);
  });

  it('rejects unsafe parameters before starting anything', async () => {
    expect(() => sqlLiteral("x' OR '1'='1")).toThrow(QueryFailedError);
    expect(() => sqlLiteral(Number.NaN)).toThrow(QueryFailedError);
    await expect(engine.query('SELECT ?', ['a;b'], 'x')).rejects.toBeInstanceOf(QueryFailedError);
    expect(athena.commandCalls(StartQueryExecutionCommand)).toHaveLength(0);
  });

  it('omits ExecutionParameters without parameters', async () => {
    athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q-1' });
    athena.on(GetQueryExecutionCommand).resolves({ QueryExecution: { Status: { State: 'SUCCEEDED' } } });
    athena.on(GetQueryResultsCommand).resolves({ ResultSet: { ResultSetMetadata: { ColumnInfo: [] }, Rows: [] } });
    await engine.query('SELECT 1', [], 'one');
    expect(athena.commandCalls(StartQueryExecutionCommand)[0].args[0].input).not.toHaveProperty('ExecutionParameters');
  });

  it('maps FAILED to QueryFailedError with the state change reason', async () => {
    athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q-1' });
    athena.on(GetQueryExecutionCommand).resolves({
      QueryExecution: { Status: { State: 'FAILED', StateChangeReason: 'COLUMN_NOT_FOUND: line 1:8' } },
    });
    const e = await engine.query('SELECT nope', [], 'bad').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(QueryFailedError);
    expect((e as Error).message).toContain('COLUMN_NOT_FOUND: line 1:8');
  });

  it('gives up after maxWaitMs and stops the query', async () => {
    athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q-9' });
    athena.on(GetQueryExecutionCommand).resolves({ QueryExecution: { Status: { State: 'RUNNING' } } });
    athena.on(StopQueryExecutionCommand).resolves({});
    await expect(engine.query('SELECT 1', [], 'slow')).rejects.toThrow(/did not finish within 2 s/);
    expect(athena.commandCalls(StopQueryExecutionCommand)[0].args[0].input).toEqual({ QueryExecutionId: 'q-9' });
    expect(sleeps.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(2_000);
  });

  it('registers a partition with ADD IF NOT EXISTS in the JSONL and the Parquet table', async () => {
    athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q-1' });
    athena.on(GetQueryExecutionCommand).resolves({ QueryExecution: { Status: { State: 'SUCCEEDED' } } });
    await engine.registerPartition('C', 'run-1');
    expect(athena.commandCalls(StartQueryExecutionCommand).map((c) => c.args[0].input.QueryString)).toEqual([
      "ALTER TABLE samples_jsonl ADD IF NOT EXISTS PARTITION (path='C', run='run-1') LOCATION 's3://pb-data/samples/path=C/run=run-1/'",
      "ALTER TABLE samples ADD IF NOT EXISTS PARTITION (path='C', run='run-1') LOCATION 's3://pb-data/parquet/path=C/run=run-1/'",
    ]);
    await expect(engine.registerPartition("C'", 'run-1')).rejects.toBeInstanceOf(QueryFailedError);
  });

  it("settles a copy: stops this partition's UNLOAD still running, waits for its end, leaves the rest", async () => {
    const call = engine.copyCall('A', 'run-1');
    // 120 recent executions over three pages; among them the stopped execution's UNLOAD (its
    // text reformatted, as Athena may echo it), a finished one, and another partition's.
    const ids = Array.from({ length: 120 }, (_, i) => `q-${i}`);
    athena
      .on(ListQueryExecutionsCommand)
      .resolvesOnce({ QueryExecutionIds: ids.slice(0, 50), NextToken: 't1' })
      .resolvesOnce({ QueryExecutionIds: ids.slice(50, 100), NextToken: 't2' })
      .resolvesOnce({ QueryExecutionIds: ids.slice(100) });
    const runs: Record<string, QueryExecution> = {
      'q-3': { QueryExecutionId: 'q-3', Query: call.QueryString.replace(/\n/g, '\n  '), Status: { State: 'RUNNING' } },
      'q-7': { QueryExecutionId: 'q-7', Query: call.QueryString, Status: { State: 'SUCCEEDED' } },
      'q-60': {
        QueryExecutionId: 'q-60',
        Query: engine.copyCall('B', 'run-1').QueryString,
        Status: { State: 'RUNNING' },
      },
      'q-110': { QueryExecutionId: 'q-110', Query: call.QueryString, Status: { State: 'QUEUED' } },
    };
    athena.on(BatchGetQueryExecutionCommand).callsFake((input: { QueryExecutionIds: string[] }) => ({
      QueryExecutions: input.QueryExecutionIds.map(
        (id) => runs[id] ?? { QueryExecutionId: id, Query: 'SELECT 1', Status: { State: 'RUNNING' } },
      ),
    }));
    athena.on(StopQueryExecutionCommand).resolves({});
    // Each stopped run reads RUNNING once more, then CANCELLED.
    const polls: Record<string, number> = {};
    athena.on(GetQueryExecutionCommand).callsFake((input: { QueryExecutionId: string }) => {
      polls[input.QueryExecutionId] = (polls[input.QueryExecutionId] ?? 0) + 1;
      return { QueryExecution: { Status: { State: polls[input.QueryExecutionId] > 1 ? 'CANCELLED' : 'RUNNING' } } };
    });
    expect(await engine.settle(call)).toBe(2);
    expect(athena.commandCalls(ListQueryExecutionsCommand).map((c) => c.args[0].input)).toEqual([
      { WorkGroup: 'pathbench', MaxResults: 50, NextToken: undefined },
      { WorkGroup: 'pathbench', MaxResults: 50, NextToken: 't1' },
      { WorkGroup: 'pathbench', MaxResults: 50, NextToken: 't2' },
    ]);
    expect(
      athena.commandCalls(BatchGetQueryExecutionCommand).map((c) => c.args[0].input.QueryExecutionIds?.length),
    ).toEqual([50, 50, 20]);
    expect(athena.commandCalls(StopQueryExecutionCommand).map((c) => c.args[0].input.QueryExecutionId)).toEqual([
      'q-3',
      'q-110',
    ]);
    expect(polls).toEqual({ 'q-3': 2, 'q-110': 2 });
    // Nothing to stop: no Stop call, no wait.
    athena.reset();
    athena.on(ListQueryExecutionsCommand).resolves({ QueryExecutionIds: ['q-7'] });
    athena.on(BatchGetQueryExecutionCommand).resolves({ QueryExecutions: [runs['q-7']] });
    expect(await engine.settle(call)).toBe(0);
    expect(athena.commandCalls(StopQueryExecutionCommand)).toHaveLength(0);
  });

  it(`looks through the workgroup's ${SETTLE_RECENT} most recent executions only, and says a run that will not stop`, async () => {
    const call = engine.copyCall('A', 'run-1');
    let page = 0;
    athena.on(ListQueryExecutionsCommand).callsFake(() => {
      page++;
      return { QueryExecutionIds: Array.from({ length: 50 }, (_, i) => `p${page}-${i}`), NextToken: `t${page}` };
    });
    athena.on(BatchGetQueryExecutionCommand).callsFake((input: { QueryExecutionIds: string[] }) => ({
      QueryExecutions: input.QueryExecutionIds.map((id) => ({
        QueryExecutionId: id,
        Query: call.QueryString,
        Status: { State: id === 'p1-0' ? 'RUNNING' : 'SUCCEEDED' },
      })),
    }));
    athena.on(StopQueryExecutionCommand).resolves({});
    athena.on(GetQueryExecutionCommand).resolves({ QueryExecution: { Status: { State: 'RUNNING' } } });
    await expect(engine.settle(call)).rejects.toThrow(/query p1-0 was stopped but still RUNNING after 2 s/);
    expect(page).toBe(SETTLE_RECENT / 50);
    expect(
      athena.commandCalls(BatchGetQueryExecutionCommand).flatMap((c) => c.args[0].input.QueryExecutionIds ?? []),
    ).toHaveLength(SETTLE_RECENT);
  });
});
