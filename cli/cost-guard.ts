/**
 * The cost guard before `run` and `start`: print the estimate table on stderr and refuse a plan
 * over its budget (the plan's budgetUsd, else --budget-usd / PATHBENCH_BUDGET_USD) unless
 * --allow-over-budget. ValidatePlan holds the run to the same rule (functions/pipeline/validate.ts);
 * this is the same check, made before anything starts.
 */
import { applicableBudget, costDefaultsFromEnv, enforceBudget, estimateRun, formatEstimate } from '../core/cost.js';
import type { ResolvedPlan } from '../core/resolved-plan.js';
import type { Deps } from '../functions/ports.js';

export interface CostFlags {
  budgetUsd?: string;
  allowOverBudget?: boolean;
  instanceType?: string;
}

/** The cost defaults: flags over the environment. Throws a one-line Error on a bad value. */
export function costDefaults(flags: CostFlags, env: Record<string, string | undefined>): NonNullable<Deps['cost']> {
  return costDefaultsFromEnv({
    ...env,
    ...(flags.budgetUsd !== undefined ? { PATHBENCH_BUDGET_USD: flags.budgetUsd } : {}),
    ...(flags.instanceType !== undefined ? { PATHBENCH_CLIENT_INSTANCE_TYPE: flags.instanceType } : {}),
  });
}

/** Print the estimate; throws OverBudgetError when over budget without the override. */
export function costGate(
  plan: ResolvedPlan,
  defaults: NonNullable<Deps['cost']>,
  allowOverBudget: boolean,
  write: (text: string) => void,
): void {
  const estimate = estimateRun(plan, defaults);
  const budget = applicableBudget(plan, defaults.budgetUsd);
  write(`${formatEstimate(estimate, budget)}\n`);
  const record = enforceBudget(estimate, budget, allowOverBudget);
  if (record.overridden) write('pathbench: over budget, going ahead (--allow-over-budget; recorded in the manifest)\n');
}

/** The commander options of the guard, shared by `run` and `start`. */
export const COST_OPTIONS: [string, string][] = [
  ['--budget-usd <usd>', 'budget for plans without budgetUsd (default: $PATHBENCH_BUDGET_USD; none: no limit)'],
  ['--allow-over-budget', 'run even when the estimate is over the budget (recorded in the manifest)'],
  ['--instance-type <type>', "the clients' instance type the estimate prices (default c6i.large)"],
];
