/** DescribeClient: one bounded poll of the client state (functions/pipeline/path.ts). */
import { describeClientInput } from '../pipeline/contracts.js';
import { describeClient as describe } from '../pipeline/path.js';
import type { Deps } from '../ports.js';
import { parseTaskInput } from './task-input.js';

export async function describeClient(deps: Deps, input: unknown) {
  return describe(deps, parseTaskInput(describeClientInput, input, 'DescribeClient'));
}
