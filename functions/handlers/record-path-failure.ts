/**
 * RecordPathFailure: which step of a path failed and why, keeping the samples of probes that
 * finished (functions/pipeline/path-failure.ts); the salvaged samples get their Parquet copy too.
 */
import { failureInput } from '../pipeline/contracts.js';
import { writeParquetCopy } from '../pipeline/parquet-copy.js';
import { recordPathFailure as record } from '../pipeline/path-failure.js';
import type { Deps } from '../ports.js';
import { parseTaskInput } from './task-input.js';

export async function recordPathFailure(deps: Deps, input: unknown) {
  const event = parseTaskInput(failureInput, input, 'RecordPathFailure');
  const out = await record(deps, event);
  try {
    await writeParquetCopy(deps, { runId: event.runId, pathId: event.pathId });
  } catch (e) {
    // The failure is recorded and the JSONL kept; a Parquet copy that cannot be built must not hide it.
    deps.log.error('Parquet copy not written', { runId: event.runId, pathId: event.pathId, error: String(e) });
  }
  return out;
}
