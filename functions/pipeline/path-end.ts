/**
 * EndPath, after the state machine's CopyToParquet wrote the path's Parquet copy: the Collect step
 * CollectOutput left running and the path end succeeded. Its own module: the EndPath Lambda
 * reads the store and writes the manifest only (no parsing, no deletes).
 */
import { CollectError } from '../../core/errors.js';
import { keys } from '../../core/keys.js';
import type { Deps } from '../ports.js';
import type { PathRef } from './contracts.js';
import { loadPath, stepEnded, updatePath } from './manifest.js';

export async function endPath(deps: Deps, ref: PathRef): Promise<void> {
  // Succeeded only with its copy: a path with samples whose copy is gone (a cleanup after a stop
  // that emptied the prefix and could not write it again) fails here instead.
  const samples = (await loadPath(deps.store, ref.runId, ref.pathId)).probes.reduce((n, p) => n + p.samples, 0);
  if (samples > 0 && (await deps.store.list(keys.parquetPrefix(ref.pathId, ref.runId))).length === 0)
    throw new CollectError(`path ${ref.pathId} has ${samples} samples and no Parquet copy after CopyToParquet`);
  await updatePath(deps.store, ref.runId, ref.pathId, (p) => {
    const now = deps.now();
    stepEnded(p, 'Collect', now, 'succeeded');
    p.status = 'succeeded';
    p.endedAt = now.toISOString();
  });
  deps.log.info('path succeeded', { runId: ref.runId, pathId: ref.pathId });
}
