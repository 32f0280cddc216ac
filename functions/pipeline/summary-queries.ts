/**
 * The summary's queries as state machine work (docs/architecture.md, "The summary"): PrepareSummary
 * (the SummarizeRun function, `prepare: true`) returns one StartQueryExecution call per query
 * the summary reads, the SummaryQueries Map runs them through Step Functions' Athena integration
 * (`athena:startQueryExecution.sync`, several at once) and SummarizeRun composes the summary
 * from their results by execution id. No Lambda sits waiting on Athena: a busy workgroup delays
 * the Map's tasks, each bounded by its own TimeoutSeconds, not a Lambda's 300 s. Locally the
 * same states run the same SELECTs on DuckDB (local/asl-interpreter.ts's Athena resolver).
 */
import { checkRunId } from '../../core/keys.js';
import { loadQuery } from '../../queries/sql.js';
import type { QueryExecutionCall } from '../../queries/unload.js';
import type { QueryEngine, QueryParam } from '../ports.js';
import type { SummaryQueryExecution } from './contracts.js';
import { withQuery } from './query-rows.js';

/**
 * Every query the summary runs (summary.ts, comparisons.ts, distributions.ts), each with the run
 * id as its one parameter. A query the summary runs that is not here is run in the Lambda after
 * all, and logged (SummaryEngine.fallbacks); a test holds the list to the summary's own calls.
 */
export const SUMMARY_QUERIES = [
  'percentiles',
  'flags',
  'host_part',
  'one_way',
  'percentile_windows',
  'trial_spread',
  'histogram',
  'cdf',
  'series',
  'errors',
] as const;

export interface SummaryQueryItem {
  name: string;
  call: QueryExecutionCall;
}

/** PrepareSummary's output: the items of the SummaryQueries Map. */
export function summaryQueryCalls(engine: Pick<QueryEngine, 'selectCall'>, runId: string): SummaryQueryItem[] {
  checkRunId(runId);
  return SUMMARY_QUERIES.map((name) => ({ name, call: engine.selectCall(loadQuery(name), [runId]) }));
}

/** The query engine SummarizeRun composes from, and the queries it had to run itself. */
export interface SummaryEngine {
  query: QueryEngine;
  /** Labels of the queries that had no result from the Map and ran on the engine here. */
  fallbacks: string[];
}

const sameParams = (a: readonly QueryParam[], b: readonly QueryParam[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * `engine` with the SummaryQueries Map's results in front: a `query` of one of those
 * statements with the run id reads the rows its execution left (resultRows: on Athena
 * GetQueryResults, no wait); anything else runs on the engine and is named in `fallbacks`.
 */
export function summaryEngine(
  engine: QueryEngine,
  runId: string,
  executions: readonly SummaryQueryExecution[],
): SummaryEngine {
  const byText = new Map<string, string>();
  for (const e of executions) {
    if (!(SUMMARY_QUERIES as readonly string[]).includes(e.name))
      throw new Error(`summary query ${e.name} is not one the summary runs (${SUMMARY_QUERIES.join(', ')})`);
    byText.set(loadQuery(e.name), e.QueryExecutionId);
  }
  const fallbacks: string[] = [];
  const query = withQuery(engine, (sql, params, label) => {
    const id = sameParams(params, [runId]) ? byText.get(sql) : undefined;
    if (id !== undefined) return engine.resultRows(id);
    fallbacks.push(label);
    return engine.query(sql, params, label);
  });
  return { query, fallbacks };
}
