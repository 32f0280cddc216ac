/** PrepareTaskProbe: a task client's probe message (functions/pipeline/task-probe.ts). */
import { pathRef } from '../pipeline/contracts.js';
import { prepareTaskProbe as prepare } from '../pipeline/task-probe.js';
import type { Deps } from '../ports.js';
import { parseTaskInput } from './task-input.js';

export async function prepareTaskProbe(deps: Deps, input: unknown) {
  return prepare(deps, parseTaskInput(pathRef, input, 'PrepareTaskProbe'));
}
