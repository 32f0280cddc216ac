/**
 * CollectOutput: the raw tool files are already in the store (the command runner put them
 * there); parse each into sample records, write one JSONL per probe trial, register the
 * partition, record provenance, and hand the state machine the call that writes the Parquet copy
 * (its CopyToParquet state; then EndPath calls the path succeeded). A parse failure marks the path,
 * never deletes raw data.
 * iperf3 trials are checked for a burst-credit cliff and, against the client's baseline
 * bandwidth recorded at BeginPath, for a plateau at the baseline (core/credit.ts).
 */
import { CollectError } from '../../core/errors.js';
import type { QueryExecutionCall } from '../../queries/unload.js';
import type { Deps } from '../ports.js';
import type { PathRef } from './contracts.js';
import { stepEnded, stepStarted, updatePath } from './manifest.js';
import { prepareParquetCopy } from './parquet-copy.js';
import { parseProbes, pathSpec } from './parse-probes.js';
import { recordProvenance } from './record-provenance.js';

/** What CollectOutput hands the state machine: the counts, and the call that writes the copy (CopyToParquet). */
export interface CollectResult {
  samples: number;
  probes: number;
  copy: QueryExecutionCall;
}

export async function collectOutput(deps: Deps, ref: PathRef): Promise<CollectResult> {
  const { runId, pathId } = ref;
  const entry = await updatePath(deps.store, runId, pathId, (p) => stepStarted(p, 'Collect', deps.now()));
  const spec = await pathSpec(deps, runId, pathId);
  if (!spec) throw new CollectError(`no spec for path ${pathId}`);
  const parsed = await parseProbes(deps, runId, pathId, spec, undefined, entry.client);
  const { failures, total, provenance } = parsed;
  await deps.query.registerPartition(pathId, runId);

  await updatePath(deps.store, runId, pathId, (p) => {
    recordProvenance(p, parsed);
    if (failures.length) stepEnded(p, 'Collect', deps.now(), 'failed');
  });
  // With parse failures RecordPathFailure has the copy written.
  if (failures.length) throw new CollectError(`could not parse ${failures.length} raw file(s): ${failures.join('; ')}`);
  // The Collect step stays running until EndPath: the path is succeeded only once the state
  // machine's CopyToParquet has written its copy. A run cut short in between leaves a path still
  // collecting (finished by the cleanup's salvage), never a succeeded path without its copy.
  const copy = await prepareParquetCopy(deps, ref);
  deps.log.info('output collected', { runId, pathId, samples: total, probes: provenance.length });
  return { samples: total, probes: provenance.length, copy };
}
