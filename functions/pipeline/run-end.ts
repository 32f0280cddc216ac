/**
 * After the Map, on every exit path: restore routes, finish the manifest and release the run lock
 * (the summary between them is functions/pipeline/summary.ts).
 */
import { RouteRestoreRetryableError, RouteSwapError } from '../../core/errors.js';
import { keys, routeKey } from '../../core/keys.js';
import { type RunManifest, readRunFields } from '../../core/run-manifest.js';
import { readSummary } from '../../core/run-summary.js';
import type { Deps } from '../ports.js';
import type { ReleaseLockInput, StateError } from './contracts.js';
import { updateManifest, updateRun } from './manifest.js';
import { causeMessage } from './path-failure.js';
import { readJournal, restoreJournaled } from './route-journal.js';
import { restampReports, runStatus } from './run-reports.js';

/**
 * Put every route the run changed back (the route journal, functions/pipeline/route-journal.ts),
 * and record the outcome in the manifest. Throws when any route is still not at its original.
 */
export async function restoreRoutes(deps: Deps, input: { runId: string }): Promise<{ restored: number }> {
  const entries = await readJournal(deps, input.runId);
  const out = await restoreJournaled(deps, entries);
  const failed = new Set(out.failed);
  await updateRun(deps.store, input.runId, (m) => {
    for (const c of m.routeChanges) {
      if (!failed.has(routeKey(c))) c.current = c.original;
    }
    m.restore = {
      status: out.errors.length ? 'failed' : 'ok',
      at: deps.now().toISOString(),
      errors: out.errors,
      ...(out.notes.length ? { notes: out.notes } : {}),
    };
  });
  // Only transient failures (5xx, throttling): the ASL's Retry on RestoreRoutes runs it again with backoff.
  if (out.errors.length && out.transient.length === out.failed.length) {
    throw new RouteRestoreRetryableError(
      `could not restore ${out.errors.length} route(s), transient: ${out.errors.join('; ')}`,
    );
  }
  if (out.errors.length) {
    throw new RouteSwapError(`could not restore ${out.errors.length} route(s): ${out.errors.join('; ')}`);
  }
  return { restored: out.restored };
}

/**
 * Finish the manifest and reports, then release the lock. `rejected`: ValidatePlan failed, so
 * this execution wrote nothing (an existing manifest with this id belongs to an earlier run and
 * is left alone); only the lock is released, and only if this run holds it.
 */
export async function releaseLock(
  deps: Deps,
  input: ReleaseLockInput,
): Promise<{ runId: string; status: string; summaryKey?: string }> {
  let status = 'rejected';
  let summaryKey: string | undefined;
  try {
    if (!input.rejected && (await deps.store.getText(keys.manifest(input.runId))) !== undefined) {
      const now = deps.now().toISOString();
      const summaryError = input.summaryError && summaryFailureText(input.summaryError);
      if (summaryError) deps.log.warn('the summary failed', { runId: input.runId, error: summaryError });
      const m = await updateManifest(deps.store, input.runId, (mm) => {
        mm.status = runStatus(mm);
        mm.endedAt = now;
        if (summaryError) mm.summaryFailure = { at: now, error: summaryError };
      });
      status = m.status;
      summaryKey = await finishReports(deps, input.runId, m);
    }
  } finally {
    await releaseOwnLock(deps, input.runId, { rejected: input.rejected === true });
  }
  return { runId: input.runId, status, ...(summaryKey ? { summaryKey } : {}) };
}

/** Longest summary error kept in the manifest (a state error's Cause may be up to 32 KiB). */
export const SUMMARY_ERROR_MAX_CHARS = 2_000;

/** A summary state's Catch output as one line: `<Error>: <message>` (the Lambda's message unwrapped), or the Error alone. */
export function summaryFailureText(e: StateError): string {
  const cause = causeMessage(e.Cause);
  const text = (cause ? `${e.Error ?? 'Error'}: ${cause}` : (e.Error ?? 'Error')).replace(/\s+/g, ' ').trim();
  return text.length > SUMMARY_ERROR_MAX_CHARS ? `${text.slice(0, SUMMARY_ERROR_MAX_CHARS - 1)}…` : text;
}

/**
 * Release the run lock only if this execution holds it: a second start that reused the run id
 * and was refused must not free the first run's lock. An execution is its run id and start time.
 * `startedAt` names it when the caller knows it (the cleanup's event); otherwise the run's
 * manifest does: it was written by the execution that passed ValidatePlan, so a `rejected`
 * execution never owns a lock taken at the manifest's start time. True when released.
 */
export async function releaseOwnLock(
  deps: Deps,
  runId: string,
  execution: { rejected?: boolean; startedAt?: string },
): Promise<boolean> {
  const held = await deps.lock.current();
  if (held?.runId !== runId) return false;
  const manifestStart = (await readRunFields(deps.store, runId))?.startedAt;
  const at = held.startedAt;
  const mine =
    at === undefined ||
    (execution.startedAt !== undefined
      ? at === execution.startedAt
      : execution.rejected
        ? at !== manifestStart
        : manifestStart === undefined || at === manifestStart);
  if (!mine) {
    deps.log.warn('run lock left to the execution that holds it', { runId, holderStartedAt: at });
    return false;
  }
  // Conditional on the holder just read, so a lock taken in between is not released.
  await deps.lock.release(runId, at);
  return true;
}

/** The reports were written before the final status was known; bring all three in step. */
async function finishReports(deps: Deps, runId: string, m: RunManifest): Promise<string | undefined> {
  const s = await readSummary(deps.store, runId);
  if (s === undefined) return undefined;
  s.status = m.status;
  if (m.endedAt) s.endedAt = m.endedAt;
  await restampReports(deps, s);
  return keys.report(runId, 'json');
}
