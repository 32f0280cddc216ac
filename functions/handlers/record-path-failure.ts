/**
 * RecordPathFailure: which step of a path failed and why, keeping the samples of probes that
 * finished (functions/pipeline/path-failure.ts). When the path has samples, it hands the state
 * machine the call that writes their Parquet copy (CopyFailedPath runs it); `copy` is null when
 * there are none, or when the copy could not be prepared (the failure stays recorded either way).
 */
import { keys } from '../../core/keys.js';
import type { QueryExecutionCall } from '../../queries/unload.js';
import { failureInput } from '../pipeline/contracts.js';
import { prepareParquetCopy } from '../pipeline/parquet-copy.js';
import { recordPathFailure as record } from '../pipeline/path-failure.js';
import type { Deps } from '../ports.js';
import { parseTaskInput } from './task-input.js';

export async function recordPathFailure(deps: Deps, input: unknown): Promise<{ copy: QueryExecutionCall | null }> {
  const event = parseTaskInput(failureInput, input, 'RecordPathFailure');
  await record(deps, event);
  const ref = { runId: event.runId, pathId: event.pathId };
  try {
    const samples = await deps.store.list(keys.samplesPrefix(ref.pathId, ref.runId));
    // The partition is registered already: by CollectOutput, or by the salvage that wrote them.
    if (samples.length === 0) return { copy: null };
    return { copy: await prepareParquetCopy(deps, ref) };
  } catch (e) {
    // The failure is recorded and the JSONL kept; a Parquet copy that cannot be prepared must not hide it.
    deps.log.error('Parquet copy not prepared', { ...ref, error: String(e) });
    return { copy: null };
  }
}
