/**
 * CollectOutput: parse the raw output into samples and write the partition's Parquet copy
 * (functions/pipeline/collect.ts; rebuilt whole from its JSONL, so a retry does not duplicate).
 */
import { collectOutput as collect } from '../pipeline/collect.js';
import { pathRef } from '../pipeline/contracts.js';
import type { Deps } from '../ports.js';
import { parseTaskInput } from './task-input.js';

export async function collectOutput(deps: Deps, input: unknown) {
  const ref = parseTaskInput(pathRef, input, 'CollectOutput');
  return collect(deps, ref);
}
