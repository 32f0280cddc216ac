/**
 * Cleanup after an execution that ended without running its own finish states: stopped from the
 * console (ABORTED), TIMED_OUT, or FAILED with an error no Catch could take. An EventBridge rule
 * on the execution's status change runs this. It must also be harmless after a normal FAILED
 * run that already restored its routes and released its lock, so every step checks first.
 */
import { errorMessage } from '../core/errors.js';
import { checkRunId, keys } from '../core/keys.js';
import type { RunManifest } from '../core/model.js';
import type { Deps } from '../ports.js';
import { releaseOwnLock, restoreRoutes } from './finish.js';
import { updateManifest } from './manifest.js';

export interface CleanupResult {
  /** Routes put back by this cleanup (0 when nothing was still swapped). */
  restored: number;
  /** True when this run still held the lock and this cleanup released it. */
  released: boolean;
  notes: string[];
}

/**
 * Restore the routes the run left swapped, mark a still-running manifest failed, and release the
 * run lock if this run holds it. The lock is released even when the restore fails; that failure
 * is then rethrown so the invocation fails visibly (retries, dead-letter queue, alarm).
 */
export async function cleanupAfterExecution(
  deps: Deps,
  input: { runId: string; status: string; startedAt?: string },
): Promise<CleanupResult> {
  const { runId, status, startedAt } = input;
  const notes: string[] = [];
  let restored = 0;
  let restoreFailure: unknown;
  let released = false;
  try {
    const manifest = await readManifest(deps, runId, notes, startedAt);
    if (manifest) {
      const swapped = manifest.routeChanges.filter((c) => c.current !== c.original);
      if (swapped.length === 0) notes.push('no route left to restore');
      else {
        try {
          restored = (await restoreRoutes(deps, { runId })).restored;
          notes.push(`restored ${restored} route(s)`);
        } catch (e) {
          restoreFailure = e;
          notes.push(`restoring routes failed: ${errorMessage(e)}`);
        }
      }
      if (manifest.status === 'running') {
        await markFailed(deps, runId, status);
        notes.push(`manifest marked failed (execution ${status})`);
      }
    }
  } finally {
    // Only a lock this execution holds is released; another run's lock (or that of another
    // execution that reused this run id) is left alone.
    released = await releaseOwnLock(deps, runId, { startedAt });
    notes.push(released ? 'lock released' : 'lock not held by this run');
  }
  deps.log.info('execution cleaned up', { runId, status, restored, released, notes });
  if (restoreFailure !== undefined) throw restoreFailure;
  return { restored, released, notes };
}

/** The run's manifest, or undefined (with a note) when the run never got that far. */
async function readManifest(
  deps: Deps,
  runId: string,
  notes: string[],
  startedAt?: string,
): Promise<RunManifest | undefined> {
  try {
    checkRunId(runId);
  } catch {
    // ValidatePlan rejects such names before writing anything or taking the lock.
    notes.push(`execution name ${JSON.stringify(runId)} is not a run id: no manifest`);
    return undefined;
  }
  const text = await deps.store.getText(keys.manifest(runId));
  if (text === undefined) {
    notes.push('no manifest: the run ended before ValidatePlan wrote one');
    return undefined;
  }
  const m = JSON.parse(text) as RunManifest;
  if (startedAt !== undefined && m.startedAt !== startedAt) {
    // A second start that reused the run id and was refused: the manifest is the first run's.
    notes.push(`the manifest belongs to the execution started at ${m.startedAt}: left alone`);
    return undefined;
  }
  return m;
}

async function markFailed(deps: Deps, runId: string, status: string): Promise<void> {
  const at = deps.now().toISOString();
  const note = `execution ${status}`;
  await updateManifest(deps.store, runId, (m) => {
    m.status = 'failed';
    m.endedAt = at;
    m.notes = [...(m.notes ?? []), note];
    for (const p of m.paths) {
      if (p.status !== 'running') continue;
      p.status = 'failed';
      p.endedAt = at;
      p.error ??= `${note} while this path was running`;
      p.notes.push(note);
    }
  });
}
