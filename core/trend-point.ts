/**
 * A trend point (`trends/plan=<name>/run=<id>.json`): one run's judged figures, stored by the
 * summary step and read back as the baseline of the plan's later runs and by `pathbench trend`
 * (functions/pipeline/regressions.ts). Points of every earlier version stay in the store.
 */
import { z } from 'zod';
import { keys } from './keys.js';
import { regressionSettingsSchema } from './resolved-plan.js';
import { jsonNumber, type ListingStore, parseDocument } from './stored-document.js';

const interval = z.tuple([jsonNumber, jsonNumber]);

/** One result of a run as a trend point keeps it. */
export const trendResultSchema = z.object({
  probe: z.string(),
  metric: z.string(),
  unit: z.string(),
  n: z.number(),
  p50: z.number().nullable(),
  p99: z.number().nullable(),
  ci95: z.object({ p50: interval.optional(), p99: interval.optional() }).optional(),
  flags: z.array(z.string()),
});
export type TrendResult = z.output<typeof trendResultSchema>;

/** One run's judged figures (trends/plan=<name>/run=<id>.json). */
export const trendPointSchema = z.object({
  runId: z.string(),
  planName: z.string(),
  /** What the whole plan measured, hashed (functions/pipeline/regressions.ts planFingerprint): only runs with the same one are its history. */
  planFingerprint: z.string().optional(),
  startedAt: z.string().optional(),
  /** The plan's own regression settings when it had any (they apply to judging this run). */
  settings: regressionSettingsSchema.optional(),
  /** The plan's path order when it set one (rotated, shuffled …): positions below are comparable across runs. */
  order: z.string().optional(),
  paths: z.array(
    z.object({
      id: z.string(),
      status: z.string(),
      /** Where the path ran in this run (0: first), when the plan set an order. */
      position: z.number().int().optional(),
      /** What the path measured (its client, target, routes and probes), hashed: only runs with the same one are its history. */
      fingerprint: z.string().optional(),
      results: z.array(trendResultSchema),
    }),
  ),
});
export type TrendPoint = z.output<typeof trendPointSchema>;

/** Every trend point of a plan in the store (unordered), each checked. */
export async function readTrendPoints(store: ListingStore, planName: string): Promise<TrendPoint[]> {
  const out: TrendPoint[] = [];
  for (const key of await store.list(keys.trendPrefix(planName))) {
    if (!key.endsWith('.json')) continue;
    const text = await store.getText(key);
    if (text) out.push(parseDocument(key, text, trendPointSchema, 'trend point'));
  }
  return out;
}
