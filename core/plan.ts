/**
 * The plan's entry points: validate a plan (parsed JSON, or a file's text) with zod and the rules
 * across fields, report every problem at once as "dotted.path[i]: what is wrong" in the order the
 * fields are written, and resolve it into a ResolvedPlan whose paths carry everything the
 * pipeline needs. Pure: reading a plan file is cli/plan-file.ts. The schema is
 * core/plan-input.ts, the cross-field rules core/plan-checks.ts, resolving core/plan-resolve.ts.
 */
import { PlanInvalidError } from './errors.js';
import { crossProblems } from './plan-checks.js';
import { planInputSchema } from './plan-input.js';
import { resolvePlan, resolveRatios } from './plan-resolve.js';
import { printable } from './printable.js';
import type { ResolvedPlan } from './resolved-plan.js';
import { fallbackMessage, issueProblems, problemCount, problemLines } from './zod-problems.js';

export type PlanResult = { ok: true; plan: ResolvedPlan } | { ok: false; problems: string[] };

/**
 * Validate a plan (already parsed from JSON) and resolve its defaults.
 * Returns every problem at once, each as "dotted.path[i]: what is wrong"; never throws for bad input.
 */
export function parsePlan(input: unknown): PlanResult {
  const parsed = planInputSchema.safeParse(input, { error: fallbackMessage });
  const problems = [...(parsed.success ? [] : issueProblems(parsed.error.issues)), ...crossProblems(input)];
  if (problems.length > 0 || !parsed.success) return { ok: false, problems: problemLines(input, problems, 'plan') };
  const plan = resolvePlan(parsed.data);
  // Ratios name probes after matrix cells are expanded and skips applied: checked on the resolved paths.
  const ratioProblems = resolveRatios(parsed.data, plan.paths).problems;
  if (ratioProblems.length > 0) return { ok: false, problems: problemLines(input, ratioProblems, 'plan') };
  return { ok: true, plan };
}

/**
 * Like {@link parsePlan}, for callers that want an exception: returns the resolved plan or
 * throws PlanInvalidError carrying every problem.
 */
export function requirePlan(input: unknown): ResolvedPlan {
  const result = parsePlan(input);
  if (!result.ok) throw new PlanInvalidError(result.problems);
  return result.plan;
}

/**
 * Parse a plan file's text (JSON) with {@link parsePlan}; invalid JSON is reported as a problem
 * ("plan: not valid JSON (reason)"). Reading the file is the caller's (cli/plan-file.ts).
 */
export function parsePlanText(text: string): PlanResult {
  let json: unknown;
  try {
    // Editors on some systems prepend a byte-order mark, which JSON.parse refuses.
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (e: unknown) {
    return { ok: false, problems: [`plan: not valid JSON (${printable(e instanceof Error ? e.message : String(e))})`] };
  }
  return parsePlan(json);
}

/** Problems as printable text: a count line (every problem, listed or not), then one problem per line, indented. */
export function formatProblems(problems: readonly string[]): string {
  const n = problemCount(problems);
  const head = `plan has ${n.toLocaleString('en-US')} problem${n === 1 ? '' : 's'}:`;
  return [head, ...problems.map((p) => `  ${p}`)].join('\n');
}
