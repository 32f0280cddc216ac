/** BeginPath: mark a path running, record its client (functions/pipeline/path-begin.ts). */
import { pathRef } from '../pipeline/contracts.js';
import { beginPath as begin } from '../pipeline/path-begin.js';
import type { Deps } from '../ports.js';
import { parseTaskInput } from './task-input.js';

export async function beginPath(deps: Deps, input: unknown) {
  return begin(deps, parseTaskInput(pathRef, input, 'BeginPath'));
}
