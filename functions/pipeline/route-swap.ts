/** SwapRoutes: each of the path's routes pointed at its target, journaled first and verified after. */
import { setTimeout as sleep } from 'node:timers/promises';
import { RouteSwapError } from '../../core/errors.js';
import type { JournalEntry } from '../../core/journal-entry.js';
import { routeKey } from '../../core/keys.js';
import type { RouteEntry } from '../../core/resolved-plan.js';
import { routeRefusal, viaTarget } from '../../core/route-policy.js';
import type { Deps } from '../ports.js';
import type { PathRef } from './contracts.js';
import { closeCreditWait, stepEnded, stepStarted, updatePath, updateRun } from './manifest.js';
import { journalOriginal, ownershipLost, restoreJournaled } from './route-journal.js';
import { loadResolvedPlan } from './validate.js';

/** Verify with a few short retries: route APIs are eventually consistent. */
async function verifyRoute(deps: Deps, r: Omit<RouteEntry, 'via'>, target: string, attempts = 5): Promise<boolean> {
  for (let i = 0; i < attempts; i++) {
    if (await deps.routes.verify(r, target)) return true;
    await (deps.sleep ?? sleep)(200 * 2 ** i);
  }
  return false;
}

/** Targets a route's current state must not have for a run to change it (see swapRoutes). */
function untouchable(r: Omit<RouteEntry, 'via'>, current: string): string | undefined {
  const name = `${r.region} ${r.routeTableId} ${r.destination}`;
  if (current === 'local') return `${name} is the VPC's local route: it cannot be replaced or restored`;
  if (current.startsWith('unknown:')) {
    return `${name} has a target pathbench cannot record (${current}): it could not be put back, so it is not changed`;
  }
  return undefined;
}

/**
 * Point each of the path's routes at its target. Every route is read first and nothing changes
 * if one of them cannot be put back (the VPC's local route, an unknown target kind). Each
 * original is journaled (write-once, before the change), and before and after each change the
 * run must still own the run lock and not be stopped: a SwapRoutes still running after its
 * execution was stopped undoes its own changes instead of leaving them behind.
 */
export async function swapRoutes(deps: Deps, ref: PathRef): Promise<void> {
  const plan = await loadResolvedPlan(deps, ref.runId);
  const path = plan.paths.find((p) => p.id === ref.pathId);
  if (!path) throw new Error(`path ${ref.pathId} not in plan`);
  await updatePath(deps.store, ref.runId, ref.pathId, (p) => {
    closeCreditWait(p, deps.now());
    stepStarted(p, 'SwapRoutes', deps.now());
  });
  const before: string[] = [];
  for (const route of path.routes) {
    const { via, ...r } = route;
    const refusal = routeRefusal(deps.allowedRoutes, r, viaTarget(via));
    if (refusal) before.push(refusal);
    const problem = untouchable(r, await deps.routes.read(r));
    if (problem) before.push(problem);
  }
  if (before.length) throw new RouteSwapError(before.join('; '));

  const changed: JournalEntry[] = [];
  const guard = async (when: string) => {
    const lost = await ownershipLost(deps, ref.runId);
    if (!lost) return;
    const undo = await restoreJournaled(deps, changed);
    deps.log.warn('SwapRoutes lost the run: undoing its own changes', { runId: ref.runId, when, lost, ...undo });
    throw new RouteSwapError(
      `SwapRoutes stopped ${when}: ${lost}; undid ${undo.restored} route change(s)${undo.errors.length ? `, could not undo: ${undo.errors.join('; ')}` : ''}`,
    );
  };
  for (const route of path.routes) {
    const { via, ...r } = route;
    const target = viaTarget(via);
    await guard(`before changing ${routeKey(r)}`);
    const current = await deps.routes.read(r);
    const problem = untouchable(r, current);
    if (problem) throw new RouteSwapError(problem);
    // Journal the original before touching anything: whatever happens next (a failed point, a
    // route that never turns active, a crash, a stop), the route can be put back.
    const entry = await journalOriginal(
      deps,
      ref.runId,
      {
        ...r,
        original: current,
        originalUsable: current === 'none' || (await deps.routes.verify(r, current)),
        at: deps.now().toISOString(),
        pathId: ref.pathId,
      },
      target,
    );
    await updateRun(deps.store, ref.runId, (m) => {
      const c = m.routeChanges.find((x) => routeKey(x) === routeKey(r));
      if (c) c.current = target;
      else m.routeChanges.push({ ...r, original: entry.original, current: target });
    });
    await guard(`before changing ${routeKey(r)}`);
    if (current !== target) {
      changed.push(entry);
      await deps.routes.point(r, target);
    }
    await guard(`after changing ${routeKey(r)}`);
    if (!(await verifyRoute(deps, r, target))) {
      throw new RouteSwapError(`${r.region} ${r.routeTableId} ${r.destination} did not become active via ${target}`);
    }
    deps.log.info('route swapped', { region: r.region, routeTableId: r.routeTableId, from: current, to: target });
  }
  await updatePath(deps.store, ref.runId, ref.pathId, (p) => {
    stepEnded(p, 'SwapRoutes', deps.now());
  });
}
