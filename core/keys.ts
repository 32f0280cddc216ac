/**
 * The object-store key layout (a contract, docs/data.md "S3 key layout"). Every key is built here and
 * nowhere else, so a retried step always overwrites the same object.
 */
import { createHash, randomBytes } from 'node:crypto';
import { SAFE_ID } from './fields.js';

function safe(kind: string, value: string): string {
  if (!SAFE_ID.test(value)) throw new Error(`unsafe ${kind} for an object key: ${JSON.stringify(value)}`);
  return value;
}

/** Execution names: at most 80 characters. */
export const RUN_ID_MAX_LENGTH = 80;
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,79}$/;

/** Run ids come from execution names (letters, digits, - _ . :), at most 80 characters. */
export function checkRunId(runId: string): string {
  if (!RUN_ID.test(runId)) throw new Error(`unsafe run id: ${JSON.stringify(runId)}`);
  return runId;
}

/**
 * A new run id, the same for local runs and AWS executions: sortable UTC time and a little
 * randomness (`20261130T041917Z-e7b2fb`), valid as an execution name and in object keys.
 */
export function newRunId(now = new Date()): string {
  const time = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return checkRunId(`${time}-${randomBytes(3).toString('hex')}`);
}

/** A plan name as one key segment: URI-encoded, never empty, never a dot segment. */
function planSegment(name: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9 _.-]{0,99}$/.test(name))
    throw new Error(`unsafe plan name for an object key: ${JSON.stringify(name)}`);
  return encodeURIComponent(name);
}

export const keys = {
  plan: (runId: string) => `runs/run=${checkRunId(runId)}/plan.json`,
  /** A mesh run's items of one round (the Distributed Map's ItemReader reads it). */
  meshRound: (runId: string, round: number) => `runs/run=${checkRunId(runId)}/mesh/round=${round}.json`,
  /** The run's manifest: its own fields and its path ids, in order (core/run-manifest.ts). */
  manifest: (runId: string) => `runs/run=${checkRunId(runId)}/manifest.json`,
  /** One path's entry of the run's manifest, its own object so a path's write costs the same at any plan size. */
  pathManifest: (runId: string, pathId: string) =>
    `runs/run=${checkRunId(runId)}/paths/path=${safe('path id', pathId)}.json`,
  /** One write-once object per route the run changes: its original target (functions/pipeline/route-journal.ts). */
  routeJournalPrefix: (runId: string) => `runs/run=${checkRunId(runId)}/route-journal/`,
  routeJournal: (runId: string, route: { region: string; routeTableId: string; destination: string }) =>
    `${keys.routeJournalPrefix(runId)}${createHash('sha256').update(routeKey(route)).digest('hex').slice(0, 24)}.json`,
  /**
   * The same journal entries indexed by route, across runs (write-once, one per run that changed
   * the route): ValidatePlan finds an earlier run that left one of its routes changed.
   */
  routeIndexPrefix: (route: { region: string; routeTableId: string; destination: string }) =>
    `runs/route-index/${createHash('sha256').update(routeKey(route)).digest('hex').slice(0, 24)}/`,
  routeIndex: (route: { region: string; routeTableId: string; destination: string }, runId: string) =>
    `${keys.routeIndexPrefix(route)}run=${checkRunId(runId)}.json`,
  /** Written by the cleanup before it restores: a SwapRoutes still running must stop and undo. */
  runStopped: (runId: string) => `runs/run=${checkRunId(runId)}/stopped.json`,
  /**
   * A path's agent spec, under the client it is for: IAM lets each client read only its own
   * (infra/constructs/probe.ts), so no client learns another path's targets or options.
   */
  spec: (runId: string, pathId: string, instanceId: string) =>
    `specs/run=${checkRunId(runId)}/path=${safe('path id', pathId)}/client=${safe('client instance id', instanceId)}/spec.json`,
  rawPrefix: (pathId: string, runId: string) => `raw/path=${safe('path id', pathId)}/run=${checkRunId(runId)}/`,
  /**
   * Where the path's client uploads its raw output: one prefix per client instance, so IAM can
   * let each client write only its own (infra/constructs/probe.ts), and collect reads only the
   * prefix of the path's own client.
   */
  clientRawPrefix: (pathId: string, runId: string, instanceId: string) =>
    `${keys.rawPrefix(pathId, runId)}client=${safe('client instance id', instanceId)}/`,
  raw: (pathId: string, runId: string, probe: string, trial: number, ext: string) =>
    `${keys.rawPrefix(pathId, runId)}${safe('probe name', probe)}/${trial}.${ext}`,
  samplesPrefix: (pathId: string, runId: string) => `samples/path=${safe('path id', pathId)}/run=${checkRunId(runId)}/`,
  samples: (pathId: string, runId: string, probe: string, trial: number) =>
    `${keys.samplesPrefix(pathId, runId)}${safe('probe name', probe)}-${trial}.jsonl`,
  /** Where the partition's Parquet copy lives (the engine writes it whole, never appends). */
  parquetPrefix: (pathId: string, runId: string) => `parquet/path=${safe('path id', pathId)}/run=${checkRunId(runId)}/`,
  /** The partition's samples as one Parquet file, as DuckDB writes the copy (Athena's UNLOAD names its own files). */
  parquetCopy: (pathId: string, runId: string) =>
    `parquet/path=${safe('path id', pathId)}/run=${checkRunId(runId)}/samples.parquet`,
  reportsPrefix: (runId: string) => `reports/run=${checkRunId(runId)}/`,
  report: (runId: string, ext: 'json' | 'md' | 'csv' | 'html') => `reports/run=${checkRunId(runId)}/summary.${ext}`,
  /** One run's judged figures, listed per plan for its trend and baseline (plan names may hold spaces: URI-encoded). */
  trendPrefix: (planName: string) => `trends/plan=${planSegment(planName)}/`,
  trendPoint: (planName: string, runId: string) => `${keys.trendPrefix(planName)}run=${checkRunId(runId)}.json`,
  /** What the run was, one record (the `runs` table, queries/runs.ddl.sql; functions/pipeline/run-tables.ts). */
  runsTable: (runId: string) => `tables/runs/${checkRunId(runId)}.json`,
  /** What each of its paths was, one record per line (the `paths` table, queries/paths.ddl.sql). */
  pathsTable: (runId: string) => `tables/paths/${checkRunId(runId)}.jsonl`,
  /** Named plans (pathbench plan put): one object per name, its history in the bucket's versions. */
  namedPlan: (planName: string) => `plans/${planSegment(planName)}.json`,
};

/** Split a raw key back into its parts; undefined when it is not a raw key. */
export function parseRawKey(
  key: string,
): { pathId: string; runId: string; client?: string; probe: string; trial: number; ext: string } | undefined {
  const m = /^raw\/path=([^/]+)\/run=([^/]+)\/(?:client=([^/]+)\/)?([^/]+)\/(\d+)\.([A-Za-z0-9.]+)$/.exec(key);
  if (!m) return undefined;
  return {
    pathId: m[1],
    runId: m[2],
    ...(m[3] !== undefined ? { client: m[3] } : {}),
    probe: m[4],
    trial: Number(m[5]),
    ext: m[6],
  };
}

/** Identity of one route entry (region, table, destination), as the manifest and adapters key it. */
export function routeKey(r: { region: string; routeTableId: string; destination: string }): string {
  return `${r.region}|${r.routeTableId}|${r.destination}`;
}

/** File extension of each kind's raw output. */
export const RAW_EXT = {
  'tcp-connect': 'jsonl',
  iperf3: 'json',
  http: 'jsonl',
  sockperf: 'csv',
  mtu: 'json',
  pingpong: 'csv',
  ping: 'txt',
} as const;
