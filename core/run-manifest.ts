/**
 * The run manifest (`runs/run=<id>/manifest.json`, each path's entry beside it in `paths/`): the
 * run's status, its paths (core/path-manifest.ts), the routes it changed and their restore, the
 * cost guard's record and the plan's comparisons and regression settings for the summary. Written
 * by ValidatePlan, updated by every step (functions/pipeline/manifest.ts).
 */
import pLimit from 'p-limit';
import { z } from 'zod';
import { DocumentInvalidError } from './errors.js';
import { keys } from './keys.js';
import { type PathManifest, pathManifestSchema } from './path-manifest.js';
import { ORDER_MODES, pathPairSchema, probePairSchema, regressionSettingsSchema } from './resolved-plan.js';
import { checkDocument, type DocumentStore, parseDocument } from './stored-document.js';

export const routeChangeSchema = z.object({
  region: z.string(),
  routeTableId: z.string(),
  destination: z.string(),
  /** The target before this run touched the route ("none" when it did not exist). */
  original: z.string(),
  current: z.string(),
});
export type RouteChange = z.output<typeof routeChangeSchema>;

/** The manifest's record of the cost guard (core/cost.ts). */
export const costRecordSchema = z.object({
  estimateUsd: z.number(),
  transferUsd: z.number(),
  instanceUsd: z.number(),
  transferBytes: z.number(),
  /** The budget applied, and where it came from (the plan's budgetUsd or the stack default). */
  budgetUsd: z.number().optional(),
  budgetSource: z.enum(['plan', 'stack']).optional(),
  overBudget: z.boolean(),
  /** The caller passed the explicit override (allowOverBudget) and the run went ahead over budget. */
  overridden: z.boolean(),
  pricesAsOf: z.string(),
  assumptions: z.array(z.string()),
});
export type CostRecord = z.output<typeof costRecordSchema>;

export const runStatusSchema = z.enum(['running', 'succeeded', 'partial', 'failed']);

/**
 * What started a run (the execution input's `trigger`): a schedule (EventBridge Scheduler, or the
 * crontab line of a local `schedule create`), the pathbench CLI, or anything else, such as the
 * Step Functions console (an AWS execution without the field).
 */
export const RUN_TRIGGERS = ['schedule', 'cli', 'console'] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];

export const runManifestSchema = z.object({
  runId: z.string(),
  planName: z.string(),
  driver: z.enum(['local', 'aws']),
  /** Absent in runs before the field existed. */
  trigger: z.enum(RUN_TRIGGERS).optional(),
  status: runStatusSchema,
  startedAt: z.string(),
  endedAt: z.string().optional(),
  paths: z.array(pathManifestSchema),
  routeChanges: z.array(routeChangeSchema),
  /** notes: e.g. an original put back blackholed, as it was before the run. */
  restore: z
    .object({
      status: z.enum(['ok', 'failed']),
      at: z.string(),
      errors: z.array(z.string()),
      notes: z.array(z.string()).optional(),
    })
    .optional(),
  /**
   * The summary's failure (a summary state's error, recorded by ReleaseLock): the execution
   * failed though the measurements stand (`status` is theirs) and the run has no stored reports
   * (locally `pathbench report RUN_ID` computes and prints the summary from the data).
   */
  summaryFailure: z.object({ at: z.string(), error: z.string() }).optional(),
  /** Run-level remarks, e.g. "execution ABORTED" written by the cleanup after an aborted run. */
  notes: z.array(z.string()).optional(),
  /** The resolved plan's comparisons (path − baseline), for the summary. */
  compare: z.array(pathPairSchema).optional(),
  /** The resolved plan's within-path ratios (probe ÷ baseline probe), for the summary. */
  ratios: z.array(probePairSchema).optional(),
  /** The plan's path order and this run's index in it (paths above are in the order they ran). */
  order: z.object({ mode: z.enum(ORDER_MODES), index: z.number().int(), seed: z.number().int().optional() }).optional(),
  /** The cost estimate ValidatePlan made, the budget it was held to, and whether it was overridden. */
  cost: costRecordSchema.optional(),
  /** The plan's regression settings, for the summary step's judgement. */
  regression: regressionSettingsSchema.optional(),
});
export type RunManifest = z.output<typeof runManifestSchema>;

/**
 * The stored manifest.json: the run's own fields and its path ids in the order they run; each
 * path's entry is its own object (keys.pathManifest), written alone by the steps of that path, so
 * a path's write costs the same at 10 or 2,000 paths and parallel mesh pairs never write one object.
 */
export const manifestIndexSchema = runManifestSchema.omit({ paths: true }).extend({ pathIds: z.array(z.string()) });
export type ManifestIndex = z.output<typeof manifestIndexSchema>;

/** manifest.json as stored: the index, or (runs written before the per-path layout) the whole manifest. */
export type StoredManifest = { kind: 'index'; index: ManifestIndex } | { kind: 'whole'; manifest: RunManifest };

/** manifest.json's text (as read with its version for a compare-and-swap), parsed and checked. */
export function parseStoredManifest(runId: string, text: string): StoredManifest {
  const where = keys.manifest(runId);
  const json: unknown = parseDocument(where, text, z.unknown(), 'run manifest');
  if (typeof json === 'object' && json !== null && 'paths' in json)
    return { kind: 'whole', manifest: checkDocument(where, json, runManifestSchema, 'run manifest') };
  return { kind: 'index', index: checkDocument(where, json, manifestIndexSchema, 'run manifest') };
}

/** A path's stored entry, parsed and checked: its id must be the one its key names. */
export function parsePathManifest(runId: string, pathId: string, text: string): PathManifest {
  const where = keys.pathManifest(runId, pathId);
  const p = parseDocument(where, text, pathManifestSchema, 'path manifest');
  if (p.id !== pathId) throw new DocumentInvalidError(`${where} is not a valid path manifest: it holds path ${p.id}`);
  return p;
}

/** The manifest split as stored: the index and one entry per path. */
export function splitManifest(m: RunManifest): { index: ManifestIndex; paths: PathManifest[] } {
  const { paths, ...rest } = m;
  return { index: { ...rest, pathIds: paths.map((p) => p.id) }, paths };
}

/** The text each object of the manifest is stored as. */
export function manifestText(doc: ManifestIndex | RunManifest | PathManifest): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/** Paths read at once when a whole manifest is assembled. */
const PATH_READS_AT_ONCE = 16;

/** The entries of `pathIds`, in their order; an error naming the first one missing. */
export async function readPathManifests(
  store: DocumentStore,
  runId: string,
  pathIds: readonly string[],
): Promise<PathManifest[]> {
  const limit = pLimit(PATH_READS_AT_ONCE);
  return Promise.all(
    pathIds.map((id) =>
      limit(async () => {
        const text = await store.getText(keys.pathManifest(runId, id));
        if (text === undefined)
          throw new DocumentInvalidError(
            `${keys.manifest(runId)} names path ${id}, but ${keys.pathManifest(runId, id)} is missing`,
          );
        return parsePathManifest(runId, id, text);
      }),
    ),
  );
}

/** The whole manifest from its index and its paths' objects. */
export async function assembleManifest(
  store: DocumentStore,
  runId: string,
  stored: StoredManifest,
): Promise<RunManifest> {
  if (stored.kind === 'whole') return stored.manifest;
  const { pathIds, ...rest } = stored.index;
  return { ...rest, paths: await readPathManifests(store, runId, pathIds) };
}

/** The run's own fields (status, times, routes…) without its paths: manifest.json alone is read. */
export async function readRunFields(
  store: DocumentStore,
  runId: string,
): Promise<Omit<RunManifest, 'paths'> | undefined> {
  const text = await store.getText(keys.manifest(runId));
  if (text === undefined) return undefined;
  const stored = parseStoredManifest(runId, text);
  if (stored.kind === 'index') {
    const { pathIds: _, ...fields } = stored.index;
    return fields;
  }
  const { paths: _, ...fields } = stored.manifest;
  return fields;
}

/** The run's manifest, whole; undefined when the run has none (it never got past ValidatePlan). */
export async function readManifest(store: DocumentStore, runId: string): Promise<RunManifest | undefined> {
  const text = await store.getText(keys.manifest(runId));
  return text === undefined ? undefined : assembleManifest(store, runId, parseStoredManifest(runId, text));
}

/**
 * The Error of the run's RunFailed state (RunOutcome, statemachine/measurement.asl.json): an
 * execution that ends with it got past ValidatePlan, so the manifest at its run id is its own
 * (one refused there, say for a run id taken, would find an earlier run's).
 */
export const RUN_FAILED_ERROR = 'RunFailedError';

/**
 * What the run's own fields say went wrong after its paths, one line each: the summary's failure
 * and routes not restored (the two a run's execution fails for once its paths ran, besides a
 * path failure that could not be recorded, which only the execution's history holds).
 */
export function runFailureLines(m: Pick<RunManifest, 'summaryFailure' | 'restore'>): string[] {
  const lines: string[] = [];
  if (m.restore?.status === 'failed') lines.push(`routes not restored: ${m.restore.errors.join('; ')}`);
  if (m.summaryFailure) lines.push(`the summary failed: ${m.summaryFailure.error}`);
  return lines;
}
