/** ReleaseLock: finish the manifest and reports, release the run lock (functions/pipeline/run-end.ts). */
import { releaseLockInput } from '../pipeline/contracts.js';
import { releaseLock as release } from '../pipeline/run-end.js';
import type { Deps } from '../ports.js';
import { parseTaskInput } from './task-input.js';

export async function releaseLock(deps: Deps, input: unknown) {
  return release(deps, parseTaskInput(releaseLockInput, input, 'ReleaseLock'));
}
