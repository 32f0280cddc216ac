/**
 * Cleanup after an execution that ended without running its own finish states: stopped from the
 * console (ABORTED), TIMED_OUT, or FAILED with an error no Catch could take. An EventBridge rule
 * on the execution's status change runs this. It must also be harmless after a normal FAILED
 * run that already restored its routes and released its lock, so every step checks first.
 */
import { errorMessage, RouteSwapError } from '../../core/errors.js';
import { checkRunId, routeKey } from '../../core/keys.js';
import { type RunManifest, readManifest } from '../../core/run-manifest.js';
import type { Deps } from '../ports.js';
import { updateManifest, updateRun } from './manifest.js';
import { writeParquetCopy } from './parquet-copy.js';
import { markStopped, type RestoreOutcome, readJournal, restoreJournaled } from './route-journal.js';
import { releaseOwnLock } from './run-end.js';
import { salvageOutput } from './salvage.js';
import { loadResolvedPlan } from './validate.js';

export interface CleanupResult {
  /** Routes put back by this cleanup (0 when nothing was still swapped). */
  restored: number;
  /** True when this run still held the lock and this cleanup released it. */
  released: boolean;
  notes: string[];
}

export interface CleanupInput {
  runId: string;
  status: string;
  /** When the execution stopped (EventBridge `detail.stopDate`, epoch ms); default now. */
  stoppedAt?: number;
  /**
   * How long after the stop a task of the execution may still be running (the SwapRoutes
   * Lambda's timeout plus a margin): a second sweep runs then. 0 or absent: no second sweep.
   */
  lateSweepAfterMs?: number;
  /** The execution's start time ($$.Execution.StartTime): only the lock this execution took is released. */
  startedAt?: string;
  /** Why the execution ended, when known (its error): said in the manifest's notes. */
  cause?: string;
}

/** Statuses after which a task of the execution may still be running (Step Functions does not stop it). */
const TASK_MAY_RUN_ON = new Set(['ABORTED', 'TIMED_OUT']);

/**
 * Stop the run (a marker SwapRoutes checks before and after each change), restore every route
 * of its route journal, mark a still-running manifest failed, and release the run lock if this
 * run holds it. After ABORTED or TIMED_OUT a SwapRoutes invocation may still be running: a
 * second sweep after its timeout catches a route it changed after the first one. The lock is
 * released even when a restore fails; any route still not at its original then fails the
 * invocation visibly (retries, dead-letter queue, CleanupFailedAlarm).
 */
export async function cleanupAfterExecution(deps: Deps, input: CleanupInput): Promise<CleanupResult> {
  const { runId, status, startedAt } = input;
  const notes: string[] = [];
  let restored = 0;
  const errors: string[] = [];
  let released = false;
  const other = async () => {
    const holder = await deps.lock.current();
    return holder && holder.runId !== runId ? holder.runId : undefined;
  };
  try {
    const manifest = await executionManifest(deps, runId, notes, startedAt, status);
    if (manifest) {
      await markStopped(deps, runId, status);
      // Another run holding the lock may have swapped the same routes since: leave them to it.
      const holder = await other();
      if (holder) notes.push(`routes left alone: run ${holder} holds the run lock`);
      else {
        const first = await sweep(deps, runId);
        restored += first.restored;
        errors.push(...first.errors);
        notes.push(
          first.restored + first.errors.length === 0
            ? 'no route left to restore'
            : `restored ${first.restored} route(s)${first.errors.length ? `, ${first.errors.length} failed` : ''}`,
        );
      }
      let probing: string[] = [];
      if (manifest.status === 'running') {
        const salvaged = await salvageRunning(deps, manifest, status);
        probing = salvaged.paths;
        notes.push(...salvaged.notes);
        await markFailed(deps, runId, status, input.cause);
        notes.push(`manifest marked failed (execution ${status}${input.cause ? `: ${input.cause}` : ''})`);
      }
      // The lock stays held through the late sweep, so no next run records a late swap as original.
      // A path that was probing is salvaged again then: the document's stop trap may still have
      // been uploading its last trial when the first salvage read the raw prefix.
      const lateRoutes = !holder && (await hasRoutes(deps, runId));
      if (TASK_MAY_RUN_ON.has(status) && (input.lateSweepAfterMs ?? 0) > 0 && (lateRoutes || probing.length)) {
        const at = (input.stoppedAt ?? deps.now().getTime()) + (input.lateSweepAfterMs ?? 0);
        const wait = at - deps.now().getTime();
        if (wait > 0) await (deps.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))))(wait);
        if (probing.length) notes.push(...(await salvageAgain(deps, runId, probing, status)));
        const taker = lateRoutes ? await other() : undefined;
        const late = !lateRoutes || taker ? undefined : await sweep(deps, runId);
        if (!lateRoutes) {
          // no route of this run to sweep again
        } else if (!late) {
          const left = await stillSwapped(deps, runId);
          notes.push(`late sweep skipped: run ${taker} took the run lock`);
          if (left.length) errors.push(...left.map((l) => `${l} (run ${taker} took the lock before the late sweep)`));
        } else {
          restored += late.restored;
          errors.push(...late.errors);
          notes.push(
            late.restored + late.errors.length === 0
              ? 'late sweep: every route at its original'
              : `late sweep restored ${late.restored} route(s) changed after the first sweep${late.errors.length ? `, ${late.errors.length} failed` : ''}`,
          );
        }
      }
    }
  } finally {
    // Only a lock this execution holds is released; another run's lock (or that of another
    // execution that reused this run id) is left alone.
    released = await releaseOwnLock(deps, runId, { startedAt });
    notes.push(released ? 'lock released' : 'lock not held by this run');
  }
  deps.log.info('execution cleaned up', { runId, status, restored, released, notes });
  if (errors.length) {
    // Fails the invocation: retries, then the dead-letter queue and CleanupFailedAlarm.
    deps.log.error('routes left swapped after cleanup', { runId, errors });
    throw new RouteSwapError(`could not restore ${errors.length} route(s): ${errors.join('; ')}`);
  }
  return { restored, released, notes };
}

/**
 * The path that was probing when the execution ended: cancel its probe command (it must not
 * measure on with routes put back), then keep what reached the store — samples, partition,
 * manifest and Parquet copy, as RecordPathFailure does. Rebuilt whole, so a retried cleanup
 * counts nothing twice.
 */
async function salvageRunning(
  deps: Deps,
  manifest: RunManifest,
  status: string,
): Promise<{ notes: string[]; paths: string[] }> {
  const notes: string[] = [];
  // An EC2 client's probe is an SSM command; a task client (clientKind ecs-task) has none: its
  // probe ran from a queue message, and the task stops its agent itself when the state no longer
  // takes its heartbeat (agent/ecs-worker.ts), then uploads what it measured.
  const probing = manifest.paths.filter(
    (p) => p.status === 'running' && (p.probeCommand || p.clientKind === 'ecs-task'),
  );
  const paths = probing.map((p) => p.id);
  if (!probing.length) return { notes, paths };
  const plan = await loadResolvedPlan(deps, manifest.runId);
  for (const p of probing) {
    const client = plan.paths.find((x) => x.id === p.id)?.client;
    if (!client) continue;
    const command = p.probeCommand;
    const ref = { runId: manifest.runId, pathId: p.id };
    if (command) {
      try {
        await deps.runner.cancel(command.commandId, client);
      } catch (e) {
        notes.push(`path ${p.id}: probe command ${command.commandId} not cancelled: ${errorMessage(e)}`);
      }
    } else {
      notes.push(`path ${p.id}: task client ${client.instanceId} stops its agent at its next refused heartbeat`);
    }
    try {
      const { samples } = await salvageOutput(deps, ref, `execution ${status}`);
      if (samples > 0) await writeParquetCopy(deps, ref);
      notes.push(`path ${p.id}: kept ${samples} sample(s) of its raw output`);
    } catch (e) {
      // The raw files stay in the store; the manifest is still marked failed and the lock released.
      notes.push(`path ${p.id}: its raw output could not be collected: ${errorMessage(e)}`);
    }
  }
  return { notes, paths };
}

/**
 * The late sweep's second salvage of the paths that were probing: what the stop trap uploaded
 * after the first one is kept. Sample files are keyed per trial and the Parquet copy and the
 * manifest's probes are rebuilt whole, so nothing is counted twice.
 */
async function salvageAgain(deps: Deps, runId: string, pathIds: string[], status: string): Promise<string[]> {
  const notes: string[] = [];
  for (const pathId of pathIds) {
    const ref = { runId, pathId };
    try {
      const { samples } = await salvageOutput(deps, ref, `execution ${status}`);
      if (samples > 0) await writeParquetCopy(deps, ref);
      notes.push(`late sweep: path ${pathId}: kept ${samples} sample(s) of its raw output`);
    } catch (e) {
      notes.push(`late sweep: path ${pathId}: its raw output could not be collected: ${errorMessage(e)}`);
    }
  }
  return notes;
}

/** "region table destination via X (original Y)" for each journaled route not at its original. */
async function stillSwapped(deps: Deps, runId: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readJournal(deps, runId)) {
    const { original, originalUsable: _u, at: _a, pathId: _p, ...r } = e;
    const now = await deps.routes.read(r);
    if (now !== original) out.push(`${r.region} ${r.routeTableId} ${r.destination}: via ${now}, original ${original}`);
  }
  return out;
}

/** One pass over the route journal; the manifest records what it did (and is left alone when nothing). */
async function sweep(deps: Deps, runId: string): Promise<RestoreOutcome> {
  const out = await restoreJournaled(deps, await readJournal(deps, runId));
  if (out.restored + out.errors.length === 0) return out;
  const failed = new Set(out.failed);
  await updateRun(deps.store, runId, (m) => {
    for (const c of m.routeChanges) if (!failed.has(routeKey(c))) c.current = c.original;
    m.restore = {
      status: out.errors.length ? 'failed' : 'ok',
      at: deps.now().toISOString(),
      errors: out.errors,
      ...(out.notes.length ? { notes: out.notes } : {}),
    };
  });
  return out;
}

async function hasRoutes(deps: Deps, runId: string): Promise<boolean> {
  try {
    return (await loadResolvedPlan(deps, runId)).paths.some((p) => p.routes.length > 0);
  } catch {
    return true; // no readable plan: sweep anyway
  }
}

/** The execution's run manifest, or undefined (with a note) when the run never got that far or it is another execution's. */
async function executionManifest(
  deps: Deps,
  runId: string,
  notes: string[],
  startedAt?: string,
  status?: string,
): Promise<RunManifest | undefined> {
  try {
    checkRunId(runId);
  } catch {
    // ValidatePlan rejects such names before writing anything or taking the lock.
    notes.push(`execution name ${JSON.stringify(runId)} is not a run id: no manifest`);
    return undefined;
  }
  const m = await readManifest(deps.store, runId);
  if (m === undefined) {
    // A ValidatePlan still running may take the lock after this cleanup: the stop marker makes
    // it give the lock back and refuse.
    const mayRunOn = status !== undefined && TASK_MAY_RUN_ON.has(status);
    if (mayRunOn) await markStopped(deps, runId, status);
    notes.push(`no manifest: the run ended before ValidatePlan wrote one${mayRunOn ? '; marked stopped' : ''}`);
    return undefined;
  }
  if (startedAt !== undefined && m.startedAt !== startedAt) {
    // A second start that reused the run id and was refused: the manifest is the first run's.
    notes.push(`the manifest belongs to the execution started at ${m.startedAt}: left alone`);
    return undefined;
  }
  return m;
}

async function markFailed(deps: Deps, runId: string, status: string, cause?: string): Promise<void> {
  const at = deps.now().toISOString();
  const note = `execution ${status}${cause ? `: ${cause}` : ''}`;
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
