/**
 * Named plans in SSM Parameter Store (/pathbench/plans/<name>): a scheduled run starts with
 * `{ "planName": "…" }` and ValidatePlan reads the plan text from here.
 */
import { GetParameterCommand, type SSMClient } from '@aws-sdk/client-ssm';
import { PlanInvalidError } from '../../../core/errors.js';
import { SAFE_ID } from '../../../core/fields.js';
import type { PlanSource } from '../../ports.js';
import { isAwsError } from './sdk-errors.js';

export const DEFAULT_PLAN_PREFIX = '/pathbench/plans/';

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
