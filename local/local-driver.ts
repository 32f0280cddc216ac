/**
 * The local driver, pathbench's embedded default: the real ASL in-process, a directory for S3,
 * DuckDB for Athena, a child process for SSM, and loopback no-ops or the namespace lab for the
 * fleet and routes.
 */

import { join, resolve } from 'node:path';
import { ensureAgentBundle, ensureEcsWorkerBundle } from '../agent/bundle.js';
import { errorMessage, PlanInvalidError } from '../core/errors.js';
import { newRunId } from '../core/keys.js';
import { parsePlan } from '../core/plan.js';
import type { ClientRef, ResolvedPlan } from '../core/resolved-plan.js';
import {
  RUN_FAILED_ERROR,
  type RunTrigger,
  readManifest,
  readRunFields,
  runFailureLines,
} from '../core/run-manifest.js';
import { readSummary, type Summary } from '../core/run-summary.js';
import { costSettings, type Settings } from '../core/settings.js';
import { stderrLogger } from '../functions/log.js';
import { cleanupAfterExecution } from '../functions/pipeline/abandoned-run.js';
import { writeParquetCopy } from '../functions/pipeline/parquet-copy.js';
import { salvageOutput } from '../functions/pipeline/salvage.js';
import { storeReports } from '../functions/pipeline/summary.js';
import type { Deps, Fleet, Logger, ObjectStore, Routes } from '../functions/ports.js';
import { LAB_POLL_SECONDS } from '../lab/lab-fleet.js';
import type { LabTruthFn } from '../lab/lab-truth.js';
import { labProfileForPlan } from '../lab/plan-profile.js';
import { loadDefinition } from '../statemachine/asl.js';
import { type RunMachineOptions, runStateMachine } from './asl-interpreter.js';
import { LocalCommandRunner } from './child-command-runner.js';
import { DirStore } from './dir-store.js';
import { DuckDbQueryEngine } from './duckdb-query.js';
import { type EcsWorkers, startEcsWorkers } from './ecs-workers.js';
import { FileLock, hostLock, LockSet } from './file-lock.js';
import type { ExecutionEvent, RunMachineResult } from './local-execution.js';
import { LOOPBACK_POLL_SECONDS, LoopbackFleet, LoopbackRoutes } from './loopback.js';

export const DEFAULT_DATA_DIR = '.pathbench';

/**
 * Runs this process is running now, by data directory, counted: a start refused for reusing a
 * running run id ends while the first still runs. A lock naming a run of this process that is
 * not counted here was abandoned.
 */
const activeRuns = new Map<string, Map<string, number>>();

function countRun(dataDir: string, runId: string, by: 1 | -1): void {
  const runs = activeRuns.get(dataDir) ?? new Map<string, number>();
  const n = (runs.get(runId) ?? 0) + by;
  if (n > 0) runs.set(runId, n);
  else runs.delete(runId);
  activeRuns.set(dataDir, runs);
}

/**
 * Before a new run takes the lock: a run whose lock holder is gone (kill -9, a crash) ran no
 * finish states, so its routes may still be swapped. Run the cleanup the AWS EventBridge rule
 * runs after a stopped execution (functions/pipeline/abandoned-run.ts): restore its route journal,
 * mark its manifest failed, release its lock. Said on stderr. Then, with the lock free, every
 * other manifest still `running` (its lock already gone: deleted by hand, lost with the host's
 * /run, taken over and released) is abandoned too and cleaned up the same way.
 */
async function cleanUpAbandoned(
  deps: Deps,
  lock: FileLock,
  runner: LocalCommandRunner,
  dataDir: string,
  log: Logger,
): Promise<void> {
  const active = new Set(activeRuns.get(dataDir)?.keys());
  const holder = await lock.abandonedHolder(active);
  if (holder) await cleanUpRun(deps, runner, holder, 'its process is gone, its lock still held', log);
  // A live run holds the lock: its manifest is running for real, and the others wait for a free lock.
  if (await lock.current()) return;
  for (const runId of await runningManifests(deps.store)) {
    if (active.has(runId) || runId === holder) continue;
    await cleanUpRun(deps, runner, runId, 'its manifest says running, no process runs it and the lock is free', log);
  }
  // Agents of finished runs whose output could not be stored then (a full disk): stored now and
  // kept on their path, which already ended failed.
  for (const a of await runner.recoverOrphans()) {
    if (a.files === 0) continue;
    try {
      const ref = { runId: a.runId, pathId: a.pathId };
      const { samples } = await salvageOutput(deps, ref, 'the probe output could not be stored during the run');
      if (samples > 0) await writeParquetCopy(deps, ref);
      log.warn(
        `run ${a.runId}, path ${a.pathId}: kept ${samples} sample(s) its agent measured but could not store then`,
      );
    } catch (e) {
      log.error(`run ${a.runId}, path ${a.pathId}: its stored raw output could not be collected: ${errorMessage(e)}`);
    }
  }
}

async function cleanUpRun(
  deps: Deps,
  runner: LocalCommandRunner,
  runId: string,
  why: string,
  log: Logger,
): Promise<void> {
  log.warn(`run ${runId} was abandoned (${why}): cleaning up after it`);
  try {
    // Its agents first: ended, and their output stored, so the cleanup's salvage finds it.
    await runner.recoverOrphans(runId);
    const out = await cleanupAfterExecution(deps, { runId, status: 'ABORTED' });
    log.warn(`cleanup after abandoned run ${runId}: ${out.notes.join('; ') || 'nothing to do'}`);
  } catch (e) {
    log.error(`cleanup after abandoned run ${runId} failed: ${(e as Error).message}`);
  }
}

/** ValidatePlan's refusals: the run wrote no manifest of its own (one there is another run's). */
const REFUSED = new Set(['PlanInvalidError', 'RunExistsError', 'RunLockedError', 'OverBudgetError']);

/**
 * An execution that failed where no Catch took it (a full disk under the store) ran no finish
 * states: its manifest still says `running` and its lock may be held. Clean up after it here, as
 * the next run would, but with its real cause in the manifest rather than an "abandoned" guess.
 * When even that cannot write, it says so; the next run cleans up.
 */
async function finishUnfinished(deps: Deps, runId: string, execution: RunMachineResult, log: Logger): Promise<void> {
  if (execution.status === 'SUCCEEDED' || REFUSED.has(execution.error?.name ?? '')) return;
  let status: string | undefined;
  try {
    status = (await readRunFields(deps.store, runId))?.status;
  } catch {
    return; // unreadable: the next run judges it
  }
  if (status !== 'running') return;
  const cause = execution.error ? `${execution.error.name}: ${execution.error.message}` : undefined;
  try {
    const out = await cleanupAfterExecution(deps, { runId, status: execution.status, cause });
    log.warn(`run ${runId} ended without finishing (${cause ?? execution.status}): ${out.notes.join('; ')}`);
  } catch (e) {
    log.error(`run ${runId} ended without finishing and could not be cleaned up: ${errorMessage(e)}`);
  }
}

/** Run ids whose manifest says `running`. */
async function runningManifests(store: ObjectStore): Promise<string[]> {
  const out: string[] = [];
  for (const key of await store.list('runs/run=')) {
    const m = /^runs\/run=([^/]+)\/manifest\.json$/.exec(key);
    if (!m) continue;
    try {
      if ((await readRunFields(store, m[1]))?.status === 'running') out.push(m[1]);
    } catch {
      // unreadable, or not a run manifest: not ours to judge here
    }
  }
  return out;
}

/** The poll interval of the fleet a plan runs on here (what ValidatePlan's limits are computed with). */
export function localPollSeconds(plan: ResolvedPlan): number {
  return usesLab(plan) ? LAB_POLL_SECONDS : LOOPBACK_POLL_SECONDS;
}

/** The plan runs in the namespace lab: its clients are lab namespaces (`labProfileForPlan`). */
export function usesLab(plan: ResolvedPlan): boolean {
  return labProfileForPlan(plan) !== undefined;
}

export interface LocalRunOptions {
  plan: unknown;
  /** What started the run (the runs table's `trigger`); without it ValidatePlan records `cli`. */
  trigger?: RunTrigger;
  dataDir?: string;
  runId?: string;
  log?: Logger;
  waitTimeOverrides?: Record<string, number>;
  onEvent?: (e: ExecutionEvent) => void;
  onAgentLine?: (line: string) => void;
  /** Twice a second while a probe runs: samples its agent has written so far (progress display). */
  onSamples?: (progress: { pathId: string; samples: number }) => void;
  /** Replace the fleet/routes (tests, the lab). */
  fleet?: Fleet;
  /**
   * Adds the lab's truth to a lab run's summary (what the delay helper applied per path:
   * `createLabPorts().truth`); taken from the lab's own ports when runLocal builds them.
   */
  labTruth?: LabTruthFn;
  routes?: Routes;
  wrap?: (argv: string[], client: ClientRef) => string[];
  /**
   * Decorate the adapters (the fault suite injects failures here): `store` before the command
   * runner is built on it, `deps` once every port is built.
   */
  decorate?: { store?: (s: ObjectStore) => ObjectStore; deps?: (d: Deps) => Deps };
  /** Passed to the state machine runner (local/asl-interpreter.ts): fake time, the Lambda boundary, StopExecution. */
  machine?: Pick<RunMachineOptions, 'retryIntervalOverrides' | 'invoke' | 'signal'>;
  /** Aborting it interrupts the run as SIGINT does (the agent is stopped, the run winds down). */
  interrupt?: AbortSignal;
  /**
   * The run's settings (core/settings.ts): the cost guard's defaults, as a stack's would be, and
   * the caller's override of the budget (`--allow-over-budget`, recorded in the manifest).
   */
  settings?: Settings;
  /**
   * Which state machine: `mesh` (statemachine/mesh.asl.json, rounds in parallel through the
   * emulated Distributed Map) or `sequential` (statemachine/measurement.asl.json, one path at a
   * time). Default: mesh for a mesh plan (paths with `mesh`), sequential otherwise.
   */
  mode?: 'sequential' | 'mesh';
}

export interface LocalRunResult {
  runId: string;
  dataDir: string;
  execution: RunMachineResult;
  summary?: Summary;
  /** For a run that ended FAILED: what its manifest says failed (runFailureLines). */
  failures?: string[];
  /** The run was interrupted (SIGINT/SIGTERM) and wound down early. */
  interrupted: boolean;
}

/** Validate first: a bad plan writes nothing and throws PlanInvalidError. */
export function requireValidPlan(plan: unknown): ResolvedPlan {
  const r = parsePlan(plan);
  if (!r.ok) throw new PlanInvalidError(r.problems);
  return r.plan;
}

export async function runLocal(opts: LocalRunOptions): Promise<LocalRunResult> {
  const resolved = requireValidPlan(opts.plan);
  const dataDir = resolve(opts.dataDir ?? DEFAULT_DATA_DIR);
  const runId = opts.runId ?? newRunId();
  const log = opts.log ?? stderrLogger();
  // Built when missing, rebuilt when its sources changed: a stale agent never measures.
  const agent = ensureAgentBundle({ log: (l) => process.stderr.write(`pathbench: ${l}\n`) });

  let fleet = opts.fleet;
  let routes = opts.routes;
  let wrap = opts.wrap;
  let labTruth = opts.labTruth;
  if (usesLab(resolved) && (!fleet || !routes)) {
    const lab = await import('../lab/index.js');
    const ports = await lab.createLabPorts();
    // Before this run reads any original: routes a killed run left changed are put back first.
    if (!routes) {
      for (const line of await ports.recoverLeftovers())
        log.warn(`restored a lab route an interrupted run left changed: ${line}`);
    }
    fleet ??= ports.fleet;
    routes ??= ports.routes;
    wrap ??= ports.wrap;
    labTruth ??= ports.truth;
  }
  const store = opts.decorate?.store ? opts.decorate.store(new DirStore(dataDir)) : new DirStore(dataDir);
  const query = await DuckDbQueryEngine.open(dataDir);
  const runner = new LocalCommandRunner({
    agentPath: agent.path,
    store,
    log,
    wrap,
    onAgentLine: opts.onAgentLine ? (l) => opts.onAgentLine?.(l) : undefined,
    stateDir: join(dataDir, '.agents'),
  });
  const dirLock = new FileLock(dataDir, log);
  // Task clients (kind ecs-task): a loopback queue and one ECS worker process per service.
  let ecsWorkers: EcsWorkers | undefined;
  if (resolved.paths.some((p) => p.client.kind === 'ecs-task')) {
    const bundle = ensureEcsWorkerBundle({ log: (l) => process.stderr.write(`pathbench: ${l}\n`) });
    ecsWorkers = await startEcsWorkers({ plan: resolved, dataDir, bundle: bundle.path, agent: agent.path, log });
  }
  const built: Deps = {
    store,
    fleet: fleet ?? new LoopbackFleet(log),
    routes: routes ?? new LoopbackRoutes(log),
    runner,
    query,
    // Lab routes live in namespaces the whole host shares: a lab run also takes the host-wide lock.
    lock: usesLab(resolved) ? new LockSet([dirLock, hostLock('lab-routes', log)]) : dirLock,
    log,
    driver: 'local',
    accountId: ecsWorkers?.accountId,
    ...(opts.settings ? { cost: costSettings(opts.settings) } : {}),
    now: () => new Date(),
  };
  const deps = opts.decorate?.deps ? opts.decorate.deps(built) : built;
  // An interrupt stops the agent and refuses further probes; the state machine still runs
  // RestoreRoutes, the summary and ReleaseLock, so routes and the lock are never left behind.
  let interrupts = 0;
  const stop = () => {
    interrupts++;
    log.warn(
      interrupts === 1
        ? 'interrupted: finishing the run (restore routes, release the lock)'
        : 'still finishing; please wait',
    );
    runner.abort();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  opts.interrupt?.addEventListener('abort', stop, { once: true });
  const onSamples = opts.onSamples;
  const watch = onSamples
    ? setInterval(() => {
        runner.samplesSoFar().then(
          (p) => p && onSamples(p),
          () => undefined,
        );
      }, 500)
    : undefined;
  let counted = false;
  try {
    await cleanUpAbandoned(deps, dirLock, runner, dataDir, log);
    countRun(dataDir, runId, 1);
    counted = true;
    const mode = opts.mode ?? (resolved.paths.some((p) => p.mesh) ? 'mesh' : 'sequential');
    const execution = await runStateMachine({
      deps,
      ...(mode === 'mesh' ? { definition: loadDefinition('mesh') } : {}),
      input: {
        plan: opts.plan,
        ...(opts.settings?.allowOverBudget ? { allowOverBudget: true } : {}),
        ...(opts.trigger ? { trigger: opts.trigger } : {}),
      },
      runId,
      ...opts.machine,
      ...(ecsWorkers ? { integrations: ecsWorkers.integrations } : {}),
      waitTimeOverrides: opts.waitTimeOverrides,
      onEvent: (e) => {
        // A path's final count, before its end is reported.
        if (onSamples && e.type === 'StateEntered' && /^Path(Succeeded|Failed)$/.test(e.state?.name ?? '')) {
          const now = runner.samplesNow();
          if (now) onSamples(now);
        }
        opts.onEvent?.(e);
      },
    });
    await runner.drain();
    // A machine aborted from outside stands for a kill -9 of this process (the fault suite's
    // model): nothing of it runs afterwards, so the next run's cleanup is what finishes it.
    if (!opts.machine?.signal?.aborted) await finishUnfinished(deps, runId, execution, log);
    let summary = await readSummary(store, runId);
    const manifest = summary && labTruth ? await readManifest(store, runId) : undefined;
    if (summary && manifest && labTruth) {
      // What the lab applied per path, next to its target: the reports are stored again with it.
      // A lab whose state or logs cannot be read costs the run its lab figures, not its reports.
      try {
        summary = labTruth(summary, manifest, new Map(resolved.paths.map((p) => [p.id, p.target.host])));
        await storeReports({ store }, summary);
      } catch (e: unknown) {
        log.warn(`the lab's applied delays could not be added to the summary: ${errorMessage(e)}`);
      }
    }
    const fields =
      execution.error?.name === RUN_FAILED_ERROR ? await readRunFields(store, runId).catch(() => undefined) : undefined;
    const failures = fields ? runFailureLines(fields) : [];
    return {
      runId,
      dataDir,
      execution,
      summary,
      ...(failures.length > 0 ? { failures } : {}),
      interrupted: interrupts > 0,
    };
  } finally {
    if (counted) countRun(dataDir, runId, -1);
    if (watch) clearInterval(watch);
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    opts.interrupt?.removeEventListener('abort', stop);
    runner.kill();
    await ecsWorkers?.stop();
    await query.close();
  }
}
