/**
 * functions/pipeline/summary-queries.ts over real DuckDB: PrepareSummary's calls, each run as the
 * SummaryQueries Map runs it (the engine's `execute`), and SummarizeRun composing from their
 * results — the same summary as running the queries in-process, with no query left over (the
 * list holds every query the summary runs, for a measured run and for one that measured nothing).
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { SummaryQueryExecution } from '../../../functions/pipeline/contracts.js';
import { buildSummary, summarizeRun } from '../../../functions/pipeline/summary.js';
import { SUMMARY_QUERIES, summaryEngine, summaryQueryCalls } from '../../../functions/pipeline/summary-queries.js';
import type { Deps } from '../../../functions/ports.js';
import { DirStore } from '../../../local/dir-store.js';
import { DuckDbQueryEngine, LOCAL_WORKGROUP } from '../../../local/duckdb-query.js';
import { loadQuery } from '../../../queries/sql.js';
import { selectStatementCall } from '../../../queries/unload.js';
import { prng, tempDataDir, writeSamples } from '../../helpers/samples.js';

const dirs: string[] = [];
const engines: DuckDbQueryEngine[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) e.close();
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

type Rec = Record<string, unknown>;

function latency(path: string, trial: number, values: (number | null)[], error?: string): Rec[] {
  return values.map((value, seq) => ({
    run_id: 'r1',
    path_id: path,
    probe: 'tcp-connect',
    kind: 'tcp-connect',
    trial,
    seq,
    t_start: trial * 10_000 + seq,
    t_end: trial * 10_000 + seq + 1,
    metric: 'connect_rtt_ms',
    value,
    unit: 'ms',
    ok: value !== null,
    ...(error ? { error } : {}),
  }));
}

async function engineOver(records: Rec[]): Promise<{ engine: DuckDbQueryEngine; store: DirStore }> {
  const dir = await tempDataDir('summary-queries');
  dirs.push(dir);
  await writeSamples(dir, records);
  const engine = await DuckDbQueryEngine.open(dir);
  engines.push(engine);
  return { engine, store: new DirStore(dir) };
}

/** What the SummaryQueries Map does: each call run to its end, its execution id handed on. */
async function runTheMap(engine: DuckDbQueryEngine, runId: string): Promise<SummaryQueryExecution[]> {
  const out: SummaryQueryExecution[] = [];
  for (const { name, call } of summaryQueryCalls(engine, runId)) {
    const { queryExecutionId } = await engine.execute(call);
    out.push({ name, QueryExecutionId: queryExecutionId });
  }
  return out;
}

describe('the summary from the SummaryQueries Map', () => {
  it('PrepareSummary names one SELECT per summary query, the run id as its one literal', () => {
    const engine = {
      selectCall: (sql: string, params: (string | number)[]) =>
        selectStatementCall(sql, params, 'pathbench', 'pathbench'),
    };
    const calls = summaryQueryCalls(engine, '20261204T101500Z-a1b2c3');
    expect(calls.map((c) => c.name)).toEqual([...SUMMARY_QUERIES]);
    for (const c of calls) {
      expect(c.call.QueryString).toBe(loadQuery(c.name));
      expect(c.call.ExecutionParameters).toEqual(["'20261204T101500Z-a1b2c3'"]);
    }
    expect(() => summaryQueryCalls(engine, "r1' OR '1'='1")).toThrow(/unsafe run id/);
  });

  it('composes the same summary as the queries run in-process, none left to run (a measured run)', async () => {
    const rand = prng(11);
    // Two paths of two trials each: comparisons, intervals and the trial spread have rows.
    const { engine, store } = await engineOver(
      [
        ['A', 1],
        ['B', 3],
      ].flatMap(([path, at]) =>
        [1, 2].flatMap((trial) =>
          latency(
            String(path),
            trial,
            Array.from({ length: 200 }, () => Number(at) + rand()),
          ),
        ),
      ),
    );
    const executions = await runTheMap(engine, 'r1');
    const composed = summaryEngine(engine, 'r1', executions);
    const fromMap = await buildSummary({ store, query: composed.query }, 'r1');
    expect(composed.fallbacks).toEqual([]);
    expect(fromMap).toEqual(await buildSummary({ store, query: engine }, 'r1'));
    expect(fromMap.paths.map((p) => p.id)).toEqual(['A', 'B']);
    expect(fromMap.paths[0].results[0].n).toBe(400);
  });

  it('composes the nothing-measured note from the errors query too', async () => {
    const { engine, store } = await engineOver(latency('A', 1, [null, null, null], 'connect: connection refused'));
    const executions = await runTheMap(engine, 'r1');
    const composed = summaryEngine(engine, 'r1', executions);
    const s = await buildSummary({ store, query: composed.query }, 'r1');
    expect(composed.fallbacks).toEqual([]);
    expect(s.notes?.[0]).toMatch(/connection refused ×3/);
  });

  it('runs a query the Map did not leave on the engine, and names it; refuses a name the summary does not run', async () => {
    const { engine, store } = await engineOver(latency('A', 1, [1, 2, 3]));
    const executions = (await runTheMap(engine, 'r1')).filter((e) => e.name !== 'cdf');
    const composed = summaryEngine(engine, 'r1', executions);
    await buildSummary({ store, query: composed.query }, 'r1');
    expect(composed.fallbacks).toEqual(['cdf-r1']);
    expect(() => summaryEngine(engine, 'r1', [{ name: 'drop_tables', QueryExecutionId: 'x' }])).toThrow(
      /not one the summary runs/,
    );
    await expect(engine.resultRows('no-such-execution')).rejects.toThrow(/no results here/);
  });

  it('SummarizeRun: `prepare` returns the calls; with the executions it writes the reports', async () => {
    const { engine, store } = await engineOver(latency('A', 1, [1, 2, 3]));
    const logged: string[] = [];
    const log = { info: () => undefined, warn: (m: string) => logged.push(m), error: () => undefined };
    const deps = { store, query: engine, log } as unknown as Deps;
    const prepared = await summarizeRun(deps, { runId: 'r1', prepare: true });
    expect('queries' in prepared && prepared.queries.every((q) => q.call.WorkGroup === LOCAL_WORKGROUP)).toBe(true);
    const done = await summarizeRun(deps, { runId: 'r1', queries: await runTheMap(engine, 'r1') });
    expect(done).toEqual({ summaryKey: 'reports/run=r1/summary.json', status: 'succeeded' });
    expect(await store.getText('reports/run=r1/summary.json')).toContain('"runId": "r1"');
    expect(logged).toEqual([]);
  });
});
