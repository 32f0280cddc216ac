/** Test helpers for plan results: the resolved plan, or the problems, or a clear failure. */
import type { PlanResult } from '../../core/plan.js';
import type { ResolvedPlan } from '../../core/resolved-plan.js';

export function expectOk(result: PlanResult): ResolvedPlan {
  if (!result.ok) throw new Error(`expected a valid plan, got:\n${result.problems.join('\n')}`);
  return result.plan;
}

export function expectProblems(result: PlanResult): string[] {
  if (result.ok) throw new Error('expected problems, the plan was accepted');
  return result.problems;
}
