/**
 * CollectOutput: parse the raw output into samples (functions/pipeline/collect.ts), then the
 * partition's Parquet copy (rebuilt whole from its JSONL, so a retry does not duplicate).
 */
import { collectOutput as collect } from '../pipeline/collect.js';
import { pathRef } from '../pipeline/contracts.js';
import { writeParquetCopy } from '../pipeline/parquet-copy.js';
import type { Deps } from '../ports.js';
import { parseTaskInput } from './task-input.js';

export async function collectOutput(deps: Deps, input: unknown) {
  const ref = parseTaskInput(pathRef, input, 'CollectOutput');
  const out = await collect(deps, ref);
  await writeParquetCopy(deps, ref);
  return out;
}
