/**
 * The `runs` and `paths` tables (queries/runs.ddl.sql, queries/paths.ddl.sql): what each run and
 * each of its paths was — plan, method, route targets, AZ ids, regions, instance type, status —
 * so analysts can join samples with them ("every TGW path last month", "same-AZ vs cross-AZ by
 * AZ id"). SummarizeRun writes one object per run to each table (keys.runsTable, keys.pathsTable);
 * a rerun of the step overwrites the same objects. Records carry every DDL column, null when
 * unknown, so both engines read the same rows.
 */
import { pathMethod } from '../../core/cost.js';
import { keys } from '../../core/keys.js';
import type { ResolvedPlan, RouteEntry } from '../../core/resolved-plan.js';
import type { RunManifest } from '../../core/run-manifest.js';
import type { Summary } from '../../core/run-summary.js';
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
