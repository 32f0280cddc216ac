/**
 * The run summary (contract in docs/data.md): percentiles from the same SQL on Athena
 * and DuckDB, path status and steps from the manifest when there is one; its renderings for
 * people are report.ts (console table, Markdown, CSV) and report-html.ts.
 */
import { AT_BASELINE_FLAG, formatCreditFlag } from '../../core/credit.js';
import { keys } from '../../core/keys.js';
import { NIC_ALLOWANCES, type NicAllowance, THROTTLED_PREFIX, throttledFlag } from '../../core/nic-allowance.js';
import type { ProbeProvenance } from '../../core/path-manifest.js';
import { unpairedPaths } from '../../core/plan-resolve.js';
import { readResolvedPlan } from '../../core/resolved-plan.js';
import { type RunManifest, readManifest } from '../../core/run-manifest.js';
import type { ResultRow, Summary, SummaryPath } from '../../core/run-summary.js';
import { loadQuery } from '../../queries/sql.js';
import { renderHtml } from '../../report/report-html.js';
import type { Deps } from '../ports.js';
import { addConfidence } from './comparisons.js';
import type { SummarizeInput } from './contracts.js';
import { addDistributions } from './distributions.js';
import { meshSummary } from './mesh-summary.js';
import { pathProvenance } from './provenance.js';
import type { Row } from './query-rows.js';
import { addRegressions, publishSummary } from './regressions.js';
import { runStatus, storeTextReports } from './run-reports.js';
import { writeRunTables } from './run-tables.js';
import { selectionTable } from './selection.js';
import { type SummaryQueryItem, summaryEngine, summaryQueryCalls } from './summary-queries.js';

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export function formatFlag(flag: string, row: Row): string {
  return `${flag}(trial ${num(row.trial)} @ interval ${num(row.first_seq)}, ${num(row.intervals)} intervals)`;
}

/**
 * Build the summary of a run from the samples (and the manifest when present). Works for
 * samples that arrived by other means too: then path ids become the labels and status is
 * inferred from the data.
 */
export async function buildSummary(deps: Pick<Deps, 'store' | 'query'>, runId: string): Promise<Summary> {
  const manifest = await readManifest(deps.store, runId);
  const [rows, flagRows, hostRows, oneWayRows] = await Promise.all([
    deps.query.query(loadQuery('percentiles'), [runId], `percentiles-${runId}`),
    deps.query.query(loadQuery('flags'), [runId], `flags-${runId}`),
    deps.query.query(loadQuery('host_part'), [runId], `host-part-${runId}`),
    deps.query.query(loadQuery('one_way'), [runId], `one-way-${runId}`),
  ]);

  const byPath = new Map<string, ResultRow[]>();
  const figures = (r: Row) => ({
    n: Number(r.n),
    loss: r.loss === null ? 0 : Number(r.loss),
    p50: num(r.p50),
    p95: num(r.p95),
    p99: num(r.p99),
    p999: num(r.p999),
    max: num(r.max),
  });
  // 'all' rows come first for each (path, probe, metric) in the query's order.
  for (const r of rows.filter((x) => x.subset === 'all')) {
    const path = String(r.path);
    const isThroughput = r.metric === 'throughput_bps';
    // The manifest knows the levels before/after a cliff; samples alone only know where.
    const prov = manifest?.paths.find((p) => p.id === path)?.probes.find((p) => p.probe === r.probe);
    const cliffs = prov?.credit;
    const probeFlags = flagRows.filter((f) => f.path === r.path && f.probe === r.probe);
    const other = probeFlags.filter((f) => f.flag !== AT_BASELINE_FLAG && !String(f.flag).startsWith(THROTTLED_PREFIX));
    // `at-baseline` once per result, as the contract names it; which trials is in the path's notes.
    const flags = [
      ...(!isThroughput
        ? []
        : [
            ...(cliffs ? cliffs.map((c) => formatCreditFlag(c)) : other.map((f) => formatFlag(String(f.flag), f))),
            ...(probeFlags.some((f) => f.flag === AT_BASELINE_FLAG) ? [AT_BASELINE_FLAG] : []),
          ]),
      // Any probe's: the NIC throttled one of its trials (once per allowance; which trials: the path's notes).
      ...throttledFlags(prov),
    ];
    const result: ResultRow = {
      probe: String(r.probe),
      metric: String(r.metric),
      unit: String(r.unit),
      ...figures(r),
      flags,
    };
    if (r.metric === 'http_latency_ms') addHttpFigures(result, manifest, path);
    const unflagged = rows.find(
      (x) =>
        x.subset === 'unflagged' &&
        x.path === r.path &&
        x.probe === r.probe &&
        x.metric === r.metric &&
        x.unit === r.unit,
    );
    if (unflagged) result.unflagged = figures(unflagged);
    // The host part and the one-way delays of this group, where its samples carry them.
    const ofGroup = (x: Row) => x.path === r.path && x.probe === r.probe && x.metric === r.metric && x.unit === r.unit;
    const host = hostRows.find(ofGroup);
    if (host && Number(host.n) > 0)
      result.host = {
        n: Number(host.n),
        p50_us: num(host.p50),
        p99_us: num(host.p99),
        ts_source: String(host.ts_source),
      };
    const oneWay = oneWayRows.find(ofGroup);
    if (oneWay && Number(oneWay.n) > 0)
      result.oneWay = {
        n: Number(oneWay.n),
        fwd_p50_us: num(oneWay.fwd_p50),
        rev_p50_us: num(oneWay.rev_p50),
        clock_error_us: Number(oneWay.clock_error_us),
      };
    if (!byPath.has(path)) byPath.set(path, []);
    byPath.get(path)?.push(result);
  }

  const ids = manifest ? manifest.paths.map((p) => p.id) : [...byPath.keys()].sort();
  const paths: SummaryPath[] = ids.map((id) => {
    const mp = manifest?.paths.find((p) => p.id === id);
    const results = byPath.get(id) ?? [];
    const sp: SummaryPath = {
      id,
      label: mp?.label ?? id,
      status: mp?.status ?? (results.length ? 'succeeded' : 'failed'),
      steps: (mp?.steps ?? []).map((s) => ({ name: s.name, status: s.status, ms: s.ms ?? 0 })),
      results,
    };
    if (mp?.failedStep) sp.failedStep = mp.failedStep;
    if (mp?.error) sp.error = mp.error;
    if (mp?.probe_overhead_us) sp.probe_overhead_us = mp.probe_overhead_us;
    const provenance = mp && pathProvenance(mp);
    if (provenance) sp.provenance = provenance;
    const skipped = mp?.probes.filter((p) => p.status === 'skipped').map((p) => ({ probe: p.probe, reason: p.reason }));
    if (skipped?.length) sp.skipped = skipped;
    if (mp?.notes.length) sp.notes = mp.notes;
    if (mp?.az) sp.az = mp.az;
    return sp;
  });
  const { comparisons, ratios } = await addConfidence(deps, runId, rows, paths, manifest);
  const summary: Summary = {
    runId,
    status: manifest ? (manifest.status === 'running' ? runStatus(manifest) : manifest.status) : 'succeeded',
    paths,
  };
  if (manifest) {
    summary.planName = manifest.planName;
    summary.startedAt = manifest.startedAt;
    if (manifest.endedAt) summary.endedAt = manifest.endedAt;
    if (manifest.restore) summary.routesRestored = manifest.restore;
    if (manifest.regression) summary.regressionSettings = manifest.regression;
  }
  if (comparisons.length > 0) summary.comparisons = comparisons;
  if (ratios.length > 0) summary.ratios = ratios;
  if (manifest?.order) summary.order = { mode: manifest.order.mode, index: manifest.order.index, paths: ids };
  const resolved = await readResolvedPlan(deps.store, runId);
  // The selection table prices each path's method from the resolved plan's routes and targets.
  if (paths.some((p) => p.results.some((r) => r.n > 0)))
    summary.selection = selectionTable(paths, manifest ? resolved : undefined);
  const unpaired = unpairedPaths(resolved);
  if (unpaired.length)
    summary.notes = [
      `regression.paired: judged without the pair (after the run's shift): ${unpaired.map((u) => `${u.id} (${u.why})`).join(', ')}`,
    ];
  const meshFacts = new Map((manifest?.paths ?? []).flatMap((p) => (p.mesh ? [[p.id, p.mesh] as const] : [])));
  const mesh = meshSummary(paths, meshFacts);
  if (mesh) summary.mesh = mesh;
  // Histograms, CDFs, modes and throughput series: three more queries, once per run.
  await addDistributions(deps, runId, summary);
  if (!paths.some((p) => p.results.some((r) => r.n > 0))) {
    // Nothing was measured: say so, with the likely cause, instead of a table of 100 % loss.
    const attempted = paths.some((p) => p.results.length > 0);
    const errors = attempted ? await deps.query.query(loadQuery('errors'), [runId], `errors-${runId}`) : [];
    summary.notes = [nothingMeasuredNote(paths, errors), ...(summary.notes ?? [])];
  }
  return summary;
}

/**
 * An http result's requests per second (all trials' successes over their summed wall time), its
 * per-trial figures and its warnings (`time-wait-pressure`, `nic-bound`), from the manifest.
 */
function addHttpFigures(result: ResultRow, manifest: RunManifest | undefined, path: string): void {
  const prov = manifest?.paths.find((p) => p.id === path)?.probes.find((p) => p.probe === result.probe);
  const trials = prov?.httpTrials;
  if (!trials?.length) return;
  const wall = trials.reduce((a, t) => a + t.wallMs, 0);
  const ok = trials.reduce((a, t) => a + t.ok, 0);
  if (wall > 0) result.rps = Math.round((ok * 10_000) / wall) / 10;
  result.httpTrials = trials;
  for (const w of prov?.warnings ?? []) if (!result.flags.includes(w.flag)) result.flags.push(w.flag);
}

/** `throttled:<allowance>` once for each allowance that grew in any trial of the probe. */
function throttledFlags(prov: ProbeProvenance | undefined): string[] {
  const grew = new Set((prov?.throttled ?? []).flatMap((t) => Object.keys(t.grew)));
  return (Object.keys(NIC_ALLOWANCES) as NicAllowance[]).filter((a) => grew.has(a)).map((a) => throttledFlag([a]));
}

/** Why a run measured nothing, from its most common sample errors (queries/errors.sql) or path errors. */
export function nothingMeasuredNote(paths: SummaryPath[], errors: Record<string, unknown>[]): string {
  if (errors.length === 0) {
    const failed = paths.find((p) => p.error);
    return `nothing was measured: no path produced a sample${failed ? ` (${failed.id} failed at ${failed.failedStep}: ${failed.error})` : ''}`;
  }
  const top = errors.map((e) => `${String(e.error)} ×${Number(e.samples)}`).join(', ');
  const main = String(errors[0].error);
  return `nothing was measured: every sample of every path failed (${top}); likely cause: ${likelyCause(main)}`;
}

function likelyCause(error: string): string {
  if (/refused/i.test(error))
    return "nothing listens at the targets (connection refused): start a server on each target (pathbench starts its own only on the loopback plans' ports)";
  if (/timeout|timed out/i.test(error))
    return 'the targets do not answer (timeouts): a wrong address, a firewall or security group, or a route that goes nowhere';
  if (/unreachable|no route/i.test(error)) return 'no route to the targets (unreachable)';
  if (/ephemeral/i.test(error))
    return 'the client ran out of ephemeral ports (TIME_WAIT); enable tcp_tw_reuse or use keep-alive';
  if (/icmp/i.test(error)) return 'ICMP is blocked on the path (an NLB or a security group drops it)';
  return `the most common error is "${error}"`;
}

/** Store summary.json / .md / .csv / .html under reports/run=<id>/. */
export async function storeReports(deps: Pick<Deps, 'store'>, summary: Summary): Promise<void> {
  await storeTextReports(deps, summary);
  await deps.store.put(keys.report(summary.runId, 'html'), await renderHtml(summary), 'text/html');
}

/** Compute the summary of a run and store its reports. */
export async function writeReports(
  deps: Pick<Deps, 'store' | 'query'> & Partial<Pick<Deps, 'publisher' | 'log'>>,
  runId: string,
): Promise<Summary> {
  const summary = await buildSummary(deps, runId);
  // Trend point stored, then judged against the plan's earlier runs (regressions.ts).
  await addRegressions(deps, summary);
  await storeReports(deps, summary);
  // What the run and its paths were, for analysts' joins (the runs and paths tables).
  await writeRunTables(
    deps.store,
    summary,
    await readManifest(deps.store, runId),
    await readResolvedPlan(deps.store, runId),
  );
  await publishSummary(deps, summary);
  return summary;
}

/**
 * SummarizeRun: the run's summary and its reports (functions/handlers/summarize-run.ts). As the
 * PrepareSummary state (`prepare`), the StartQueryExecution calls of the summary's queries for
 * the SummaryQueries Map; then, given the Map's `queries`, the summary composed from their
 * results, so this Lambda never waits on the engine (summary-queries.ts).
 */
export async function summarizeRun(
  deps: Deps,
  input: SummarizeInput,
): Promise<{ summaryKey: string; status: string } | { queries: SummaryQueryItem[] }> {
  if (input.prepare) return { queries: summaryQueryCalls(deps.query, input.runId) };
  const engine = input.queries ? summaryEngine(deps.query, input.runId, input.queries) : undefined;
  const summary = await writeReports(engine ? { ...deps, query: engine.query } : deps, input.runId);
  if (engine && engine.fallbacks.length > 0)
    deps.log.warn('summary queries run in the Lambda: no result from SummaryQueries', {
      runId: input.runId,
      queries: engine.fallbacks,
    });
  deps.log.info('run summarized', { runId: input.runId, status: summary.status, paths: summary.paths.length });
  return { summaryKey: keys.report(input.runId, 'json'), status: summary.status };
}
