/**
 * CollectOutput: the raw tool files are already in the store (the command runner put them
 * there); parse each into sample records, write one JSONL per probe trial, register the
 * partition, write its Parquet copy and record provenance. A parse failure marks the path,
 * never deletes raw data.
 * iperf3 trials are checked for a burst-credit cliff and, against the client's baseline
 * bandwidth recorded at BeginPath, for a plateau at the baseline (core/credit.ts).
 */
import { CollectError } from '../../core/errors.js';
import type { Deps } from '../ports.js';
import type { PathRef } from './contracts.js';
import { pathEntry, stepEnded, stepStarted, updateManifest } from './manifest.js';
import { writeParquetCopy } from './parquet-copy.js';
import { parseProbes, pathSpec } from './parse-probes.js';
import { recordProvenance } from './record-provenance.js';

export async function collectOutput(deps: Deps, ref: PathRef): Promise<{ samples: number; probes: number }> {
  const { runId, pathId } = ref;
  const manifest = await updateManifest(deps.store, runId, (m) =>
    stepStarted(pathEntry(m, pathId), 'Collect', deps.now()),
  );
  const spec = await pathSpec(deps, runId, pathId);
  if (!spec) throw new CollectError(`no spec for path ${pathId}`);
  const parsed = await parseProbes(deps, runId, pathId, spec, undefined, pathEntry(manifest, pathId).client);
  const { failures, total, provenance } = parsed;
  await deps.query.registerPartition(pathId, runId);
  // The Parquet copy before the path is called succeeded: a step cut short in between leaves a
  // path still collecting (finished by a retry or the cleanup's salvage), never a succeeded path
  // without its copy. With parse failures RecordPathFailure writes it.
  if (!failures.length) await writeParquetCopy(deps, ref);

  await updateManifest(deps.store, runId, (m) => {
    const p = pathEntry(m, pathId);
    recordProvenance(p, parsed);
    const now = deps.now();
    stepEnded(p, 'Collect', now, failures.length ? 'failed' : 'succeeded');
    if (!failures.length) {
      p.status = 'succeeded';
      p.endedAt = now.toISOString();
    }
  });
  if (failures.length) throw new CollectError(`could not parse ${failures.length} raw file(s): ${failures.join('; ')}`);
  deps.log.info('output collected', { runId, pathId, samples: total, probes: provenance.length });
  return { samples: total, probes: provenance.length };
}
