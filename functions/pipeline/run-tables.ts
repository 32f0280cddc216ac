/**
 * The `runs` and `paths` tables (queries/runs.ddl.sql, queries/paths.ddl.sql): what each run and
 * each of its paths was — plan, method, route targets, AZ ids, regions, instance type, status —
 * so analysts can join samples with them ("every TGW path last month", "same-AZ vs cross-AZ by
 * AZ id"). SummarizeRun writes one object per run to each table (keys.runsTable, keys.pathsTable);
 * a rerun of the step overwrites the same objects. Runs summarized before the tables existed get
 * theirs from backfillRunTables (`pathbench tables backfill`). Records carry every DDL column, null when
 * unknown, so both engines read the same rows.
 */
import { pathMethod } from '../../core/cost.js';
import { keys } from '../../core/keys.js';
import { type ResolvedPlan, type RouteEntry, readResolvedPlan } from '../../core/resolved-plan.js';
import { type RunManifest, readManifest } from '../../core/run-manifest.js';
import { readSummary, type Summary } from '../../core/run-summary.js';
import { type RunTable, runTableColumns } from '../../queries/sql.js';
import type { ObjectStore } from '../ports.js';

export type TableRow = Record<string, string | number | null>;

/** A route entry as one line: `rtb-1 10.1.0.0/16 → tgw-2` (the target's id, whatever kind it is). */
export function routeText(r: RouteEntry): string {
  return `${r.routeTableId} ${r.destination} → ${Object.values(r.via)[0]}`;
}

const joined = (values: (string | undefined)[]): string | null => {
  const set = [...new Set(values.filter((v): v is string => !!v))].sort();
  return set.length ? set.join(',') : null;
};

/** Every column of the table's DDL, in order; missing values are null, unknown keys an error. */
export function fitRow(table: RunTable, row: Record<string, string | number | null | undefined>): TableRow {
  const columns = runTableColumns(table);
  const extra = Object.keys(row).filter((k) => !columns.some((c) => c.name === k));
  if (extra.length) throw new Error(`${table}: no column for ${extra.join(', ')} in queries/${table}.ddl.sql`);
  return Object.fromEntries(columns.map((c) => [c.name, row[c.name] ?? null]));
}

/** The run's one row of `runs`. */
export function runRow(summary: Summary, manifest: RunManifest | undefined, plan: ResolvedPlan | undefined): TableRow {
  const prov = summary.paths.map((p) => p.provenance);
  return fitRow('runs', {
    run_id: summary.runId,
    plan_name: summary.planName ?? manifest?.planName ?? plan?.name,
    driver: manifest?.driver,
    started_by: manifest?.trigger,
    status: summary.status,
    started_at: summary.startedAt ?? manifest?.startedAt,
    ended_at: summary.endedAt ?? manifest?.endedAt,
    paths: summary.paths.length,
    failed_paths: summary.paths.filter((p) => p.status === 'failed').length,
    instance_types: joined(prov.map((p) => p?.instanceType)),
    regions: joined((plan?.paths ?? []).map((p) => p.client.region)),
    agent_version: joined(prov.map((p) => p?.agentVersion)),
    estimate_usd: manifest?.cost?.estimateUsd,
  });
}

/** One row of `paths` per path of the run, in the summary's order. */
export function pathRows(
  summary: Summary,
  manifest: RunManifest | undefined,
  plan: ResolvedPlan | undefined,
): TableRow[] {
  return summary.paths.map((p) => {
    const resolved = plan?.paths.find((x) => x.id === p.id);
    const m = manifest?.paths.find((x) => x.id === p.id);
    const az = p.az ?? resolved?.az;
    const mesh = resolved?.mesh ?? m?.mesh;
    return fitRow('paths', {
      run_id: summary.runId,
      path_id: p.id,
      label: p.label,
      status: p.status,
      failed_step: p.failedStep,
      error: p.error,
      method: resolved ? pathMethod(resolved) : undefined,
      route_targets: resolved?.routes.length ? resolved.routes.map(routeText).join('; ') : undefined,
      client_instance: resolved?.client.instanceId,
      client_kind: resolved?.client.kind ?? m?.clientKind,
      instance_type: p.provenance?.instanceType,
      client_region: resolved?.client.region ?? az?.from.region,
      client_az_id: p.provenance?.azId ?? az?.from.azId,
      target_host: resolved?.target.host,
      target_region: az?.to.region,
      target_az_id: az?.to.azId,
      from_region: mesh?.from,
      to_region: mesh?.to,
      distance_km: typeof mesh?.distanceKm === 'number' ? mesh.distanceKm : undefined,
      started_at: m?.startedAt,
      ended_at: m?.endedAt,
    });
  });
}

/** Write the run's rows of `runs` and `paths` (one object each, overwritten by a rerun). */
export async function writeRunTables(
  store: ObjectStore,
  summary: Summary,
  manifest: RunManifest | undefined,
  plan: ResolvedPlan | undefined,
): Promise<void> {
  const paths = pathRows(summary, manifest, plan);
  await store.put(keys.runsTable(summary.runId), `${JSON.stringify(runRow(summary, manifest, plan))}\n`);
  if (paths.length > 0)
    await store.put(keys.pathsTable(summary.runId), paths.map((r) => `${JSON.stringify(r)}\n`).join(''));
}

/** What backfill did with one run. */
export type BackfillOutcome =
  | { kind: 'written'; paths: number }
  | { kind: 'would write'; paths: number }
  | { kind: 'present' }
  | { kind: 'skipped'; why: string };

export interface BackfillTotals {
  runs: number;
  written: number;
  present: number;
  skipped: number;
}

const SUMMARY_KEY = /^reports\/run=([^/]+)\/summary\.json$/;

/**
 * The `runs` and `paths` rows of runs summarized before these tables existed: every run with a
 * stored summary (reports/run=<id>/summary.json) and no `runs` object gets both, from its summary,
 * manifest and resolved plan as SummarizeRun would write them. A run that has its rows is left as
 * it is; a summary that cannot be read is skipped with the reason. `onRun` hears each run as it is
 * done, in run id order. With `dryRun`, nothing is written.
 */
export async function backfillRunTables(
  store: ObjectStore,
  onRun: (runId: string, outcome: BackfillOutcome) => void,
  opts: { dryRun?: boolean } = {},
): Promise<BackfillTotals> {
  const runIds = (await store.list('reports/'))
    .map((k) => SUMMARY_KEY.exec(k)?.[1])
    .filter((id): id is string => id !== undefined)
    .sort();
  const totals: BackfillTotals = { runs: runIds.length, written: 0, present: 0, skipped: 0 };
  for (const runId of runIds) {
    let outcome: BackfillOutcome;
    try {
      if ((await store.getText(keys.runsTable(runId))) !== undefined) outcome = { kind: 'present' };
      else {
        const summary = await readSummary(store, runId);
        if (!summary) throw new Error('no summary');
        const paths = summary.paths.length;
        if (opts.dryRun) outcome = { kind: 'would write', paths };
        else {
          await writeRunTables(store, summary, await readManifest(store, runId), await readResolvedPlan(store, runId));
          outcome = { kind: 'written', paths };
        }
      }
    } catch (e) {
      outcome = { kind: 'skipped', why: (e as Error).message.split('\n')[0] };
    }
    if (outcome.kind === 'present') totals.present++;
    else if (outcome.kind === 'skipped') totals.skipped++;
    else totals.written++;
    onRun(runId, outcome);
  }
  return totals;
}
