/**
 * After the Map, on every exit path: restore routes, summarize, finish the manifest and release
 * the run lock.
 */
import { errorMessage, RouteSwapError } from '../core/errors.js';
import { keys } from '../core/keys.js';
import type { Deps } from '../ports.js';
import { loadManifest, saveManifest, updateManifest } from './manifest.js';
import { runStatus, writeReports } from './summary.js';

export async function restoreRoutes(deps: Deps, input: { runId: string }): Promise<{ restored: number }> {
  const m = await loadManifest(deps.store, input.runId);
  const errors: string[] = [];
  let restored = 0;
  // Reverse order: the last change is undone first.
  for (const c of [...m.routeChanges].reverse()) {
    if (c.current === c.original) continue;
    const { original, current: _current, ...r } = c;
    try {
      if (original === 'none') await deps.routes.remove(r);
      else {
        await deps.routes.point(r, original);
        if (!(await deps.routes.verify(r, original))) throw new Error(`not active via ${original} after restore`);
      }
      c.current = original;
      restored++;
      deps.log.info('route restored', { region: r.region, routeTableId: r.routeTableId, to: original });
    } catch (e) {
      errors.push(`${r.region} ${r.routeTableId} ${r.destination}: ${errorMessage(e)}`);
    }
  }
  m.restore = { status: errors.length ? 'failed' : 'ok', at: deps.now().toISOString(), errors };
  await saveManifest(deps.store, m);
  if (errors.length) throw new RouteSwapError(`could not restore ${errors.length} route(s): ${errors.join('; ')}`);
  return { restored };
}

export async function summarizeRun(
  deps: Deps,
  input: { runId: string },
): Promise<{ summaryKey: string; status: string }> {
  const summary = await writeReports(deps, input.runId);
  deps.log.info('run summarized', { runId: input.runId, status: summary.status, paths: summary.paths.length });
  return { summaryKey: keys.report(input.runId, 'json'), status: summary.status };
}

export async function releaseLock(
  deps: Deps,
  input: { runId: string },
): Promise<{ runId: string; status: string; summaryKey: string }> {
  let status = 'failed';
  try {
    const m = await updateManifest(deps.store, input.runId, (mm) => {
      mm.status = runStatus(mm);
      mm.endedAt = deps.now().toISOString();
    });
    status = m.status;
    // The summary was written before the final status was known; keep it in step.
    const summaryText = await deps.store.getText(keys.report(input.runId, 'json'));
    if (summaryText) {
      const s = JSON.parse(summaryText) as { status: string; endedAt?: string };
      s.status = m.status;
      s.endedAt = m.endedAt;
      await deps.store.put(keys.report(input.runId, 'json'), `${JSON.stringify(s, null, 2)}\n`, 'application/json');
    }
  } finally {
    await deps.lock.release(input.runId);
  }
  return { runId: input.runId, status, summaryKey: keys.report(input.runId, 'json') };
}
