/**
 * EndPath: after CopyToParquet wrote the path's Parquet copy, its Collect step and the path end
 * succeeded (functions/pipeline/path-end.ts).
 */

import { pathRef } from '../pipeline/contracts.js';
import { endPath as end } from '../pipeline/path-end.js';
import type { Deps } from '../ports.js';
import { parseTaskInput } from './task-input.js';

export async function endPath(deps: Deps, input: unknown) {
  const ref = parseTaskInput(pathRef, input, 'EndPath');
  await end(deps, ref);
}
