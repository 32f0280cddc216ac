/** SalvageOutput: the samples a failed probe command still delivered, kept on a failed path. */
import { isRecord, type Rec } from '../../core/zod-problems.js';
import type { Deps } from '../ports.js';
import type { PathRef } from './contracts.js';
import { loadPath, updatePath } from './manifest.js';
import { clientPrefix, parseProbes, pathSpec } from './parse-probes.js';
import { recordProvenance } from './record-provenance.js';

/**
 * The probe document's note of a stop (execution timeout, cancel: SIGTERM): what it had uploaded
 * is complete except the trial files it names, cut where the stop came.
 */
async function stoppedNote(deps: Deps, prefix: string): Promise<string | undefined> {
  const text = await deps.store.getText(`${prefix}interrupted.json`);
  if (text === undefined) return undefined;
  let m: Rec;
  try {
    const doc: unknown = JSON.parse(text);
    m = isRecord(doc) ? doc : {};
  } catch {
    return 'the probe command was stopped (its interrupted.json is unreadable): the last trial may be incomplete';
  }
  const files = Array.isArray(m.incomplete) ? m.incomplete.map(String) : [];
  return `the probe command was stopped (${String(m.signal ?? 'signal')} at ${String(m.at ?? '?')}): ${
    files.length ? `trial in progress incomplete: ${files.join(', ')}` : 'no trial was in progress'
  }`;
}

/**
 * After the probe command failed (crashed, cancelled after its deadline, timed out): parse
 * whatever raw output the runner still delivered, so probes that finished before the failure
 * keep their samples. The path stays failed; a note says what was kept. Nothing to salvage
 * (no spec, no raw file) is not an error.
 */
export async function salvageOutput(deps: Deps, ref: PathRef, reason: string): Promise<{ samples: number }> {
  const { runId, pathId } = ref;
  const spec = await pathSpec(deps, runId, pathId);
  if (!spec) return { samples: 0 };
  const rawKeys = await deps.store.list(await clientPrefix(deps, runId, pathId));
  if (!rawKeys.some((k) => !k.endsWith('agent.json'))) return { samples: 0 };
  const cut = { reason, cutLines: 0 };
  const client = (await loadPath(deps.store, runId, pathId)).client;
  const parsed = await parseProbes(deps, runId, pathId, spec, cut, client);
  if (parsed.total > 0) await deps.query.registerPartition(pathId, runId);
  const stopped = await stoppedNote(deps, await clientPrefix(deps, runId, pathId));
  const kept = parsed.provenance.filter((p) => p.samples > 0).map((p) => p.probe);
  await updatePath(deps.store, runId, pathId, (p) => {
    recordProvenance(p, parsed);
    // A retried task must not say it twice.
    const say = (text: string): void => {
      if (!p.notes.includes(text)) p.notes.push(text);
    };
    // A later salvage (the cleanup's late sweep) replaces an earlier one's count.
    p.notes = p.notes.filter(
      (n) =>
        !/^kept \d+ samples of .* written before the probe command failed/.test(n) &&
        n !== 'the probe command failed before any probe wrote a sample',
    );
    say(
      kept.length
        ? `kept ${parsed.total} samples of ${kept.join(', ')} written before the probe command failed` +
            (cut.cutLines ? ` (${cut.cutLines} line(s) cut off by the kill dropped)` : '')
        : 'the probe command failed before any probe wrote a sample',
    );
    for (const f of parsed.failures) say(`salvage could not parse ${f}`);
    if (stopped) say(stopped);
  });
  deps.log.info('output salvaged after a failed probe command', { runId, pathId, samples: parsed.total, kept });
  return { samples: parsed.total };
}
