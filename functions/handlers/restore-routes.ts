/** RestoreRoutes: put every route the run changed back (functions/pipeline/run-end.ts). */
import { runRef } from '../pipeline/contracts.js';
import { restoreRoutes as restore } from '../pipeline/run-end.js';
import type { Deps } from '../ports.js';
import { parseTaskInput } from './task-input.js';

export async function restoreRoutes(deps: Deps, input: unknown) {
  return restore(deps, parseTaskInput(runRef, input, 'RestoreRoutes'));
}
