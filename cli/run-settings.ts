/**
 * The settings' flags and the preflight of `run` and `start`: the settings are parsed once from
 * the flags over the environment (core/settings.ts), the plan goes through the same preflight
 * ValidatePlan makes (functions/pipeline/preflight.ts), and the estimate table is printed on
 * stderr before anything starts.
 */
import { formatEstimate } from '../core/cost.js';
import { OverBudgetError } from '../core/errors.js';
import type { Settings, SettingsFlags } from '../core/settings.js';
import { type Preflight, type PreflightOptions, preflight } from '../functions/pipeline/preflight.js';

export type { SettingsFlags };

/**
 * Preflight a plan as ValidatePlan will, printing the estimate and, when the override is used,
 * a line saying so. Throws PlanInvalidError / OverBudgetError as preflight does.
 */
export function preflightAndPrint(
  raw: unknown,
  settings: Settings,
  opts: PreflightOptions,
  write: (text: string) => void,
): Preflight {
  let checked: Preflight;
  try {
    checked = preflight(raw, settings, opts);
  } catch (e) {
    // Over budget: the table first, so the refusal can be read against it.
    if (e instanceof OverBudgetError) {
      const shown = preflight(raw, { ...settings, allowOverBudget: true }, opts);
      write(`${formatEstimate(shown.estimate, shown.budget)}\n`);
    }
    throw e;
  }
  write(`${formatEstimate(checked.estimate, checked.budget)}\n`);
  if (checked.cost.overridden)
    write('pathbench: over budget, going ahead (--allow-over-budget; recorded in the manifest)\n');
  return checked;
}

/** The commander options of the settings, shared by `run`, `start` and `prices estimate`. */
export const SETTINGS_OPTIONS: [string, string][] = [
  ['--budget-usd <usd>', 'budget for plans without budgetUsd (default: $PATHBENCH_BUDGET_USD; none: no limit)'],
  ['--allow-over-budget', 'run even when the estimate is over the budget (recorded in the manifest)'],
  ['--instance-type <type>', "the clients' instance type the estimate prices (default c6i.large)"],
  ['--bandwidth-gbps <gbps>', "the clients' peak bandwidth the iperf3 estimate assumes (default: the instance type's)"],
];
