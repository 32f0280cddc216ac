/**
 * CollectOutput: parse the raw output into samples, register the partition, and hand the state
 * machine the call that rewrites the partition's Parquet copy whole from its JSONL
 * (functions/pipeline/collect.ts; CopyToParquet runs it, so a retry does not duplicate).
 */
import { collectOutput as collect } from '../pipeline/collect.js';
import { pathRef } from '../pipeline/contracts.js';
import type { Deps } from '../ports.js';
import { parseTaskInput } from './task-input.js';

export async function collectOutput(deps: Deps, input: unknown) {
  const ref = parseTaskInput(pathRef, input, 'CollectOutput');
  return collect(deps, ref);
}
