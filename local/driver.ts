/**
 * The local driver, pathbench's embedded default: the real ASL in-process, a directory for S3,
 * DuckDB for Athena, a child process for SSM, and loopback no-ops or the namespace lab for the
 * fleet and routes.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PlanInvalidError } from '../functions/core/errors.js';
import { keys } from '../functions/core/keys.js';
import type { ClientRef, ResolvedPlan, Summary } from '../functions/core/model.js';
import { parsePlan } from '../functions/core/plan.js';
import { stderrLogger } from '../functions/log.js';
import type { Deps, Fleet, Logger, Routes } from '../functions/ports.js';
import { LocalCommandRunner } from './command-runner.js';
import { DirStore } from './dir-store.js';
import { DuckDbQueryEngine } from './duckdb-query.js';
import { FileLock } from './file-lock.js';
import { LoopbackFleet, LoopbackRoutes } from './loopback.js';
import { type ExecutionEvent, ROOT, type RunMachineResult, runStateMachine } from './run-machine.js';

export const AGENT_BUNDLE = join(ROOT, 'dist', 'agent.cjs');
export const DEFAULT_DATA_DIR = '.pathbench';

/** A run id like a console execution name: sortable time + a little randomness. */
export function newRunId(now = new Date()): string {
  return `${now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}-${randomBytes(3).toString('hex')}`;
}

export function usesLab(plan: ResolvedPlan): boolean {
  return plan.paths.some((p) => p.client.region === 'lab' || p.routes.some((r) => 'labNextHop' in r.via));
}

export interface LocalRunOptions {
  plan: unknown;
  dataDir?: string;
  runId?: string;
  log?: Logger;
  waitTimeOverrides?: Record<string, number>;
  onEvent?: (e: ExecutionEvent) => void;
  onAgentLine?: (line: string) => void;
  /** Replace the fleet/routes (tests, the lab). */
  fleet?: Fleet;
  routes?: Routes;
  wrap?: (argv: string[], client: ClientRef) => string[];
}

export interface LocalRunResult {
  runId: string;
  dataDir: string;
  execution: RunMachineResult;
  summary?: Summary;
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
  if (!existsSync(AGENT_BUNDLE)) throw new Error(`agent bundle ${AGENT_BUNDLE} is missing: run \`npm run build\``);

  let fleet = opts.fleet;
  let routes = opts.routes;
  let wrap = opts.wrap;
  if (usesLab(resolved) && (!fleet || !routes)) {
    const lab = await import('../lab/index.js');
    const ports = await lab.createLabPorts();
    fleet ??= ports.fleet;
    routes ??= ports.routes;
    wrap ??= ports.wrap;
  }
  const store = new DirStore(dataDir);
  const query = await DuckDbQueryEngine.open(dataDir);
  const runner = new LocalCommandRunner({
    agentPath: AGENT_BUNDLE,
    store,
    log,
    wrap,
    onAgentLine: opts.onAgentLine ? (l) => opts.onAgentLine?.(l) : undefined,
  });
  const deps: Deps = {
    store,
    fleet: fleet ?? new LoopbackFleet(log),
    routes: routes ?? new LoopbackRoutes(log),
    runner,
    query,
    lock: new FileLock(dataDir, log),
    log,
    driver: 'local',
    now: () => new Date(),
  };
  // An interrupt stops the agent and refuses further probes; the state machine still runs
  // RestoreRoutes, SummarizeRun and ReleaseLock, so routes and the lock are never left behind.
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
  try {
    const execution = await runStateMachine({
      deps,
      input: { plan: opts.plan },
      runId,
      waitTimeOverrides: opts.waitTimeOverrides,
      onEvent: opts.onEvent,
    });
    await runner.drain();
    const text = await store.getText(keys.report(runId, 'json'));
    return {
      runId,
      dataDir,
      execution,
      summary: text ? (JSON.parse(text) as Summary) : undefined,
      interrupted: interrupts > 0,
    };
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    runner.kill();
    query.close();
  }
}
