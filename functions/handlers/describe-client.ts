/** DescribeClient: one bounded poll of the client state (functions/pipeline/client-reboot.ts). */

import { describeClient as describe } from '../pipeline/client-reboot.js';
import { describeClientInput } from '../pipeline/contracts.js';
import type { Deps } from '../ports.js';
import { parseTaskInput } from './task-input.js';

export async function describeClient(deps: Deps, input: unknown) {
  return describe(deps, parseTaskInput(describeClientInput, input, 'DescribeClient'));
}
