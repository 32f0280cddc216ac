/**
 * Named plans in SSM Parameter Store (/pathbench/plans/<name>): a scheduled run starts with
 * `{ "planName": "…" }` and ValidatePlan reads the plan text from here.
 */
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { ConfigError, PlanInvalidError } from '../../../core/errors.js';
import { SAFE_ID } from '../../../core/fields.js';
import { FirstPlanSource, PlanStore } from '../../pipeline/plan-store.js';
import type { PlanSource } from '../../ports.js';
import { type AwsPort, DEFAULT_PLAN_PREFIX } from './aws-deps.js';
import { isAwsError } from './sdk-errors.js';

export class SsmPlanSource implements PlanSource {
  constructor(
    private readonly ssm: SSMClient,
    private readonly prefix: string = DEFAULT_PLAN_PREFIX,
  ) {}

  /** The plan JSON (not yet validated) stored under `name`; undefined when there is none. */
  async get(name: string): Promise<unknown | undefined> {
    if (!SAFE_ID.test(name)) throw new PlanInvalidError([`planName: not a valid plan name: ${JSON.stringify(name)}`]);
    const parameter = `${this.prefix}${name}`;
    let text: string | undefined;
    try {
      const out = await this.ssm.send(new GetParameterCommand({ Name: parameter, WithDecryption: true }));
      text = out.Parameter?.Value;
    } catch (e) {
      if (isAwsError(e, 'ParameterNotFound')) return undefined;
      throw e;
    }
    try {
      return JSON.parse(text ?? '');
    } catch {
      throw new PlanInvalidError([`planName: ${parameter} is not valid JSON`]);
    }
  }
}

/** The named-plan port of a Lambda: `pathbench plan put` stores plans in the bucket; plans in SSM parameters keep working. */
export const namedPlans: AwsPort<'plans'> = ({ cfg, store }) => {
  if (!store) throw new ConfigError('named plans need the store port');
  const ssm = new SsmPlanSource(new SSMClient({ region: cfg.region }), cfg.planPrefix);
  return new FirstPlanSource([
    new PlanStore(store),
    { get: async (name) => (SAFE_ID.test(name) ? ssm.get(name) : undefined) },
  ]);
};
