/** RecordPathFailure: the failed path's error and steps in the manifest, and what its probes left kept. */
import { z } from 'zod';
import { errorMessage } from '../../core/errors.js';
import type { Deps } from '../ports.js';
import type { FailureInput } from './contracts.js';
import { addNote, stepEnded, updatePath } from './manifest.js';
import { salvageOutput } from './salvage.js';

/** How Lambda wraps an error's cause: JSON with the message (and errorType, trace). */
const lambdaCauseSchema = z.object({ errorMessage: z.string() });

/** Lambda wraps causes as JSON ({"errorMessage": …}); keep just the message. */
export function causeMessage(cause: string | undefined): string {
  if (!cause) return '';
  try {
    const o = lambdaCauseSchema.safeParse(JSON.parse(cause));
    if (o.success) return o.data.errorMessage;
  } catch {
    // not JSON: a plain message
  }
  return cause;
}

export async function recordPathFailure(deps: Deps, input: FailureInput): Promise<void> {
  const now = deps.now();
  const error = `${input.error.Error ?? 'Error'}: ${causeMessage(input.error.Cause)}`;
  await updatePath(deps.store, input.runId, input.pathId, (p) => {
    p.status = 'failed';
    p.failedStep = input.step;
    p.error = error;
    p.endedAt = now.toISOString();
    for (const s of p.steps) if (s.status === 'running') stepEnded(p, s.name, now, 'failed');
  });
  deps.log.warn('path failed', { runId: input.runId, pathId: input.pathId, step: input.step, error });
  // The probe command ran (at least in part): keep the samples of probes that finished.
  if (input.step === 'PollProbe' || input.step === 'ProbeTask') {
    try {
      await salvageOutput(deps, input, error);
    } catch (e) {
      const why = `could not salvage raw output: ${errorMessage(e)}`;
      deps.log.warn(why, { runId: input.runId, pathId: input.pathId });
      await updatePath(deps.store, input.runId, input.pathId, (p) => addNote(p, why));
    }
  }
}
