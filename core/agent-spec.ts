/**
 * The agent spec: what the agent executes for one path (`specs/run=<runId>/path=<id>/spec.json`,
 * written by ValidatePlan, read by the agent's `run --spec` and by CollectOutput). The probes are
 * the same schemas a plan's probes resolve into (probes/index.ts).
 */
import { z } from 'zod';
import { probeSpecSchema } from '../probes/index.js';
import { quoted, safeId, typeName } from './fields.js';
import { keys } from './keys.js';
import { skippedProbeSchema, targetSchema } from './resolved-plan.js';
import { type DocumentStore, readStored } from './stored-document.js';
import { fallbackMessage, isRecord, issueProblems, problemLines } from './zod-problems.js';

/** What the agent executes for one path (specs/run=<runId>/path=<id>/spec.json). */
export const agentSpecSchema = z.strictObject({
  runId: safeId,
  pathId: safeId,
  target: targetSchema,
  probes: z.array(probeSpecSchema).superRefine((probes, ctx) => {
    // Probe names are the agent's output directories: one each.
    const first = new Map<string, number>();
    probes.forEach((p, i) => {
      const prev = first.get(p.name);
      if (prev === undefined) first.set(p.name, i);
      else
        ctx.addIssue({
          code: 'custom',
          path: [i, 'name'],
          input: p.name,
          message: `duplicate probe name ${quoted(p.name)} (also probes[${prev}])`,
        });
    });
  }),
  skipped: z.array(skippedProbeSchema).default([]),
});
export type AgentSpec = z.output<typeof agentSpecSchema>;

export type SpecResult = { ok: true; spec: AgentSpec } | { ok: false; problems: string[] };

/**
 * Validate an agent spec (parsed JSON; the agent's `run --spec`) against the same probe schemas
 * the plan's probes resolve into. Returns every problem, in the order the fields are written,
 * each as "dotted.path[i]: what is wrong"; never throws for bad input.
 */
export function parseAgentSpec(input: unknown): SpecResult {
  if (!isRecord(input)) return { ok: false, problems: [`expected a JSON object, got ${typeName(input)}`] };
  const parsed = agentSpecSchema.safeParse(input, { error: fallbackMessage });
  if (parsed.success) return { ok: true, spec: parsed.data };
  return { ok: false, problems: problemLines(input, issueProblems(parsed.error.issues), 'spec') };
}

/** A path's spec as ValidatePlan stored it for the path's client; undefined when there is none. */
export function readSpec(
  store: DocumentStore,
  runId: string,
  pathId: string,
  instanceId: string,
): Promise<AgentSpec | undefined> {
  return readStored(store, keys.spec(runId, pathId, instanceId), agentSpecSchema, 'agent spec');
}
