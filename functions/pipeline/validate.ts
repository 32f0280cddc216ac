/**
 * ValidatePlan: resolve the plan (inline or by name), take the run lock, then write the run's
 * own keys (plan, one spec per path, manifest). Nothing is written before the plan is valid and
 * the lock is held.
 */

import type { AgentSpec } from '../../core/agent-spec.js';
import { ConfigError, PlanInvalidError, RouteSwapError, RunAbortedError, RunExistsError } from '../../core/errors.js';
import { quoted } from '../../core/fields.js';
import { checkRunId, keys } from '../../core/keys.js';
import { type ResolvedPlan, readResolvedPlan } from '../../core/resolved-plan.js';
import { routeRefusal, viaTarget } from '../../core/route-policy.js';
import { RUN_TRIGGERS, type RunManifest, type RunTrigger, readManifest } from '../../core/run-manifest.js';
import { parseStopMarker } from '../../core/stop-marker.js';
import { UNBOUNDED_BITRATE } from '../../probes/probe-fields.js';
import type { Deps } from '../ports.js';
import { saveManifest, updateRun } from './manifest.js';
import { preflight, type ValidateOutput } from './preflight.js';
import { leftSwappedByEarlierRuns } from './route-journal.js';

export interface ValidateInput {
  input: unknown;
  runId: string;
  startedAt?: string;
  /** The mesh state machine (statemachine/mesh.asl.json) runs the plan round by round. */
  mode?: 'mesh';
}

/**
 * The caller's explicit cost override: `{ plan, allowOverBudget: true }` (an execution input
 * field; `--allow-over-budget` on the command line).
 */
function allowOverBudget(input: unknown): boolean {
  if (!input || typeof input !== 'object' || Array.isArray(input) || !('plan' in input || 'planName' in input))
    return false;
  const v = (input as Record<string, unknown>).allowOverBudget;
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw new PlanInvalidError([`allowOverBudget: expected true or false, got ${typeof v}`]);
  return v;
}

/**
 * What started the run: the execution input's `trigger` (`{ plan | planName, trigger }`), set by
 * schedules and the CLI; without it an AWS run was started by hand (the console) and a local one
 * by the CLI.
 */
function runTrigger(input: unknown, driver: RunManifest['driver']): RunTrigger {
  const fallback: RunTrigger = driver === 'aws' ? 'console' : 'cli';
  if (!input || typeof input !== 'object' || Array.isArray(input) || !('plan' in input || 'planName' in input))
    return fallback;
  const v = (input as Record<string, unknown>).trigger;
  if (v === undefined) return fallback;
  if (typeof v !== 'string' || !(RUN_TRIGGERS as readonly string[]).includes(v))
    throw new PlanInvalidError([`trigger: expected one of ${RUN_TRIGGERS.join(', ')}, got ${quoted(String(v))}`]);
  return v as RunTrigger;
}

/** Accepts `{ plan }`, `{ planName }` or a bare plan object. */
async function planJson(deps: Deps, input: unknown): Promise<unknown> {
  if (input && typeof input === 'object' && !Array.isArray(input)) {
    const o = input as Record<string, unknown>;
    if ('plan' in o) return o.plan;
    if ('planName' in o) {
      if (typeof o.planName !== 'string') throw new PlanInvalidError(['planName: expected a string']);
      if (!deps.plans) throw new ConfigError('named plans are not available on this driver; pass { "plan": … }');
      const found = await deps.plans.get(o.planName);
      if (found === undefined) throw new PlanInvalidError([`planName: no plan named ${quoted(o.planName)}`]);
      return found;
    }
  }
  return input;
}

export function specFor(runId: string, plan: ResolvedPlan, pathId: string): AgentSpec {
  const p = plan.paths.find((x) => x.id === pathId);
  if (!p) throw new Error(`path ${pathId} is not in the plan`);
  return { runId, pathId, target: p.target, probes: p.probes, skipped: p.skipped };
}

export async function validatePlanStep(deps: Deps, input: ValidateInput): Promise<ValidateOutput> {
  const runId = checkRunId(input.runId);
  const raw = await planJson(deps, input.input);
  // Every check made before a run starts, the same as `run --local` and `start` made (preflight.ts);
  // refused before the lock is taken or anything is written.
  const settings = { ...deps.cost, allowOverBudget: allowOverBudget(input.input) };
  const trigger = runTrigger(input.input, deps.driver);
  const opts = {
    runId,
    mode: input.mode === 'mesh' ? ('mesh' as const) : ('sequential' as const),
    pollSeconds: deps.fleet.pollSeconds,
    bucket: deps.store.bucket ?? deps.store.location,
    ...(deps.allowedTargets ? { allowedTargets: deps.allowedTargets } : {}),
  };
  let checked = preflight(raw, settings, opts);
  // A rotated or shuffled order counts the plan's earlier runs (their trend points) as the run's index.
  if (checked.order && (checked.order.mode === 'rotated' || checked.order.mode === 'shuffled'))
    checked = preflight(raw, settings, { ...opts, runIndex: await earlierRuns(deps, checked.plan.name) });
  const { plan, output, rounds, cost, order } = checked;
  const refused = await routeProblems(deps, plan);
  if (refused.length) throw new PlanInvalidError(refused);

  // With the run id, the start time names this execution: a retry keeps its lock, a second
  // start that reuses the id is refused and cannot release the first one's lock.
  const startedAt = input.startedAt ?? deps.now().toISOString();
  await deps.lock.acquire(runId, startedAt);
  try {
    await refuseIfStopped(deps, runId);
    // Under the lock, no other run is changing routes: one still changed was left by a run
    // whose cleanup failed, and this run would record it as the original.
    await refuseIfLeftSwapped(deps, runId, plan);
    const previous = await readManifest(deps.store, runId);
    // A retried ValidatePlan of the same execution carries the same start time; anything else
    // reusing the id would overwrite raw data and mix old samples into the new summary.
    if (previous !== undefined && previous.startedAt !== input.startedAt) {
      throw new RunExistsError(`run ${runId} already exists in ${deps.store.location}; choose another run id`);
    }
    await deps.store.put(keys.plan(runId), `${JSON.stringify({ source: raw, resolved: plan }, null, 2)}\n`);
    for (const p of plan.paths) {
      await deps.store.put(
        keys.spec(runId, p.id, p.client.instanceId),
        `${JSON.stringify(specFor(runId, plan, p.id), null, 2)}\n`,
      );
    }
    // Mesh mode: one item list per round, read by the Distributed Map's ItemReader.
    for (const [r, items] of rounds.entries()) await deps.store.put(keys.meshRound(runId, r), JSON.stringify(items));
    const manifest: RunManifest = {
      runId,
      planName: plan.name,
      driver: deps.driver,
      trigger,
      status: 'running',
      startedAt,
      paths: plan.paths.map((p) => ({
        id: p.id,
        label: p.label,
        ...(p.mesh ? { mesh: p.mesh } : {}),
        status: 'pending',
        steps: [],
        probes: [],
        notes: unboundedUdpNotes(p),
        ...(p.az ? { az: p.az } : {}),
      })),
      routeChanges: [],
      cost,
    };
    if (plan.compare) manifest.compare = plan.compare;
    if (plan.ratios) manifest.ratios = plan.ratios;
    if (order) manifest.order = order;
    if (plan.regression) manifest.regression = plan.regression;
    await saveManifest(deps.store, manifest);
    // Stopped while this task wrote: the cleanup may have found no manifest and no lock yet.
    // The manifest this task just wrote is then finished as stopped: nothing else would.
    await refuseIfStopped(deps, runId, startedAt);
    deps.log.info('plan accepted', {
      runId,
      plan: plan.name,
      paths: plan.paths.length,
      estimateUsd: cost.estimateUsd,
      ...(cost.budgetUsd !== undefined ? { budgetUsd: cost.budgetUsd } : {}),
      ...(cost.overridden ? { overBudget: 'allowed by the caller' } : {}),
    });
    return output;
  } catch (e) {
    await deps.lock.release(runId, startedAt);
    throw e;
  }
}

/** How many runs of the plan have a trend point (a run counter for the path order). */
async function earlierRuns(deps: Pick<Deps, 'store'>, planName: string): Promise<number> {
  return (await deps.store.list(keys.trendPrefix(planName))).filter((k) => k.endsWith('.json')).length;
}

/** A note per iperf3 UDP probe the plan asked to run unbounded: the report says what it measures. */
function unboundedUdpNotes(p: ResolvedPlan['paths'][number]): string[] {
  return p.probes
    .filter((x) => x.kind === 'iperf3' && x.mode === 'udp' && x.bitrate === UNBOUNDED_BITRATE)
    .map(
      (x) =>
        `iperf3 ${x.name}: UDP at an unbounded rate (bitrate "${UNBOUNDED_BITRATE}", iperf3 -b 0), as the plan asked: it measures how fast the client can send as much as the path, and its loss includes what the client's own queues dropped`,
    );
}

/**
 * A ValidatePlan still running after its execution was stopped and cleaned up must not keep
 * the lock it took for an execution that has ended: the cleanup's stop marker
 * makes it refuse, and the caller's catch releases the lock.
 */
async function refuseIfStopped(deps: Deps, runId: string, manifestOf?: string): Promise<void> {
  const marker = await deps.store.getText(keys.runStopped(runId));
  if (marker === undefined) return;
  if (manifestOf !== undefined) await finishAsStopped(deps, runId, manifestOf, marker);
  throw new RunAbortedError(`run ${runId} was stopped while ValidatePlan ran: lock given back, nothing started`);
}

/**
 * Refuse (one line per route, naming it and the run that left it) when an earlier run left a
 * route of this plan pointed at its own target: restoring here would need route write rights
 * ValidatePlan does not have, and the operator must see that a cleanup failed (docs/aws.md).
 */
async function refuseIfLeftSwapped(deps: Deps, runId: string, plan: ResolvedPlan): Promise<void> {
  const routes = plan.paths.flatMap((p) => p.routes.map(({ via: _v, ...r }) => r));
  if (!routes.length) return;
  const left = await leftSwappedByEarlierRuns(deps, runId, routes);
  if (!left.length) return;
  throw new RouteSwapError(
    left
      .map(
        (l) =>
          `route ${l.route.region} ${l.route.routeTableId} ${l.route.destination} is still via ${l.via}, left changed by run ${l.runId} (original ${l.original}): point it back to ${l.original}, or redrive that run's cleanup from its dead-letter queue, before starting a run`,
      )
      .join('; '),
  );
}

/** The manifest this execution wrote, marked failed with the stop's note; another execution's is left alone. */
async function finishAsStopped(deps: Deps, runId: string, startedAt: string, marker: string): Promise<void> {
  let status = 'stopped';
  try {
    status = parseStopMarker(runId, marker).status;
  } catch {
    // a marker is a marker, even one that cannot be read
  }
  const note = `execution ${status} while ValidatePlan ran: nothing started`;
  const at = deps.now().toISOString();
  await updateRun(deps.store, runId, (m) => {
    if (m.startedAt !== startedAt || m.status !== 'running') return;
    m.status = 'failed';
    m.endedAt = at;
    m.notes = [...(m.notes ?? []), note];
  });
}

/**
 * Route entries the run may not change: not in the operator's allow-list (Deps.allowedRoutes),
 * or whose current target could never be put back (the VPC's local route, a target kind
 * pathbench cannot record). Named by field; read failures are left to SwapRoutes.
 */
async function routeProblems(deps: Deps, plan: ResolvedPlan): Promise<string[]> {
  const problems: string[] = [];
  for (const [i, p] of plan.paths.entries()) {
    for (const [j, route] of p.routes.entries()) {
      const { via, ...r } = route;
      const field = `paths[${i}].routes[${j}]`;
      const refusal = routeRefusal(deps.allowedRoutes, r, viaTarget(via));
      if (refusal) problems.push(`${field}: ${refusal}`);
      let current: string;
      try {
        current = await deps.routes.read(r);
      } catch {
        continue;
      }
      if (current === 'local') {
        problems.push(
          `${field}: ${r.region} ${r.routeTableId} ${r.destination} is the VPC's local route; it cannot be replaced or restored`,
        );
      } else if (current.startsWith('unknown:')) {
        problems.push(
          `${field}: ${r.region} ${r.routeTableId} ${r.destination} has a target pathbench cannot record (${current})`,
        );
      }
    }
  }
  return problems;
}

/** The resolved plan of a run, as ValidatePlan stored it. */
export async function loadResolvedPlan(deps: Pick<Deps, 'store'>, runId: string): Promise<ResolvedPlan> {
  // A run's plan is written once, by ValidatePlan, before any step reads it: keep the last few
  // parsed and checked (a 2070-pair mesh plan is ~1 MB, read by every step of every pair).
  // Frozen, so no caller can change what the others read.
  const key = `${deps.store.location} ${runId}`;
  const cached = planCache.get(key);
  if (cached) return cached;
  const read = await readResolvedPlan(deps.store, runId);
  if (read === undefined) throw new Error(`run ${runId} has no plan (${keys.plan(runId)})`);
  const plan = deepFreeze(read);
  planCache.set(key, plan);
  if (planCache.size > PLAN_CACHE_RUNS) planCache.delete(planCache.keys().next().value as string);
  return plan;
}

/** Parsed plans by store and run (oldest first), at most PLAN_CACHE_RUNS. */
const planCache = new Map<string, ResolvedPlan>();
const PLAN_CACHE_RUNS = 8;

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}
