/**
 * The run manifest (`runs/run=<id>/manifest.json`): the run's status, its paths (core/path-manifest.ts),
 * the routes it changed and their restore, the cost guard's record and the plan's comparisons and
 * regression settings for the summary. Written by ValidatePlan, updated by every step
 * (functions/pipeline/manifest.ts).
 */
import { z } from 'zod';
import { keys } from './keys.js';
import { pathManifestSchema } from './path-manifest.js';
import { ORDER_MODES, pathPairSchema, probePairSchema, regressionSettingsSchema } from './resolved-plan.js';
import { type DocumentStore, parseDocument, readStored } from './stored-document.js';

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

/** A manifest's text (as read with its version for a compare-and-swap), parsed and checked. */
export function parseManifest(runId: string, text: string): RunManifest {
  return parseDocument(keys.manifest(runId), text, runManifestSchema, 'run manifest');
}

/** The run's manifest; undefined when the run has none (it never got past ValidatePlan). */
export function readManifest(store: DocumentStore, runId: string): Promise<RunManifest | undefined> {
  return readStored(store, keys.manifest(runId), runManifestSchema, 'run manifest');
}
