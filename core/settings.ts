/**
 * The settings of a run that are not in its plan: the cost guard's defaults (a budget for plans
 * without budgetUsd, the clients' instance type and bandwidth the estimate prices) and the
 * caller's override of the budget. Parsed once — from command-line flags over the environment
 * in the CLI, from the environment in a Lambda and at synth — and handed whole to preflight
 * (functions/pipeline/preflight.ts), which every way of starting a run calls.
 */
import { z } from 'zod';

/** Environment names (set by the CDK stack on ValidatePlan; locally, the shell). */
export const SETTINGS_ENV = {
  budgetUsd: 'PATHBENCH_BUDGET_USD',
  instanceType: 'PATHBENCH_CLIENT_INSTANCE_TYPE',
  bandwidthGbps: 'PATHBENCH_BANDWIDTH_GBPS',
} as const;

/** The command-line flags of the same settings (their names in error messages). */
export const SETTINGS_FLAGS = {
  budgetUsd: '--budget-usd',
  instanceType: '--instance-type',
  bandwidthGbps: '--bandwidth-gbps',
} as const;

const INSTANCE_TYPE = /^[a-z0-9-]+\.[a-z0-9-]+$/;

/** The cost guard's defaults: what the estimate prices and the budget it is held to. */
export const costSettingsSchema = z
  .object({
    budgetUsd: z.number().positive().finite().optional(),
    instanceType: z.string().regex(INSTANCE_TYPE).optional(),
    bandwidthGbps: z.number().positive().finite().optional(),
  })
  .strict();
export type CostSettings = z.infer<typeof costSettingsSchema>;

export const settingsSchema = costSettingsSchema
  .extend({
    /** Run even when the estimate is over the budget (recorded in the run's manifest). */
    allowOverBudget: z.boolean(),
  })
  .strict();
export type Settings = z.infer<typeof settingsSchema>;

/** The settings as typed on a command line (every value a string, as commander gives them). */
export interface SettingsFlags {
  budgetUsd?: string;
  instanceType?: string;
  bandwidthGbps?: string;
  allowOverBudget?: boolean;
}

type Env = Record<string, string | undefined>;
type CostKey = keyof typeof SETTINGS_ENV;

/**
 * The settings from flags over the environment; each value optional but the override (false
 * unless given). A bad value is a one-line Error naming the flag or variable it came from.
 */
export function parseSettings(flags: SettingsFlags, env: Env): Settings {
  const pick = (key: CostKey): { value: string; from: string } | undefined => {
    const flag = flags[key];
    if (flag !== undefined) return { value: flag, from: SETTINGS_FLAGS[key] };
    const v = env[SETTINGS_ENV[key]];
    return v === undefined || v === '' ? undefined : { value: v, from: SETTINGS_ENV[key] };
  };
  const out: Settings = { allowOverBudget: flags.allowOverBudget ?? false };
  for (const key of ['budgetUsd', 'bandwidthGbps'] as const) {
    const got = pick(key);
    if (!got) continue;
    const n = Number(got.value);
    if (got.value.trim() === '' || !Number.isFinite(n) || n <= 0)
      throw new Error(`${got.from}: expected a positive number, got ${JSON.stringify(got.value)}`);
    out[key] = n;
  }
  const type = pick('instanceType');
  if (type) {
    if (!INSTANCE_TYPE.test(type.value))
      throw new Error(`${type.from}: expected an instance type such as "t3.micro", got ${JSON.stringify(type.value)}`);
    out.instanceType = type.value;
  }
  return settingsSchema.parse(out);
}

/** The cost part of the settings (what a stack default sets; the override is each caller's own). */
export function costSettings(s: Settings): CostSettings {
  const { allowOverBudget: _a, ...cost } = s;
  return cost;
}

/** The settings' environment form: what the CDK stack sets on ValidatePlan for its defaults. */
export function settingsEnv(cost: CostSettings): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of Object.keys(SETTINGS_ENV) as CostKey[]) {
    const v = cost[key];
    if (v !== undefined) env[SETTINGS_ENV[key]] = String(v);
  }
  return env;
}
