/**
 * The route journal: before SwapRoutes changes a route it writes the route's original target to
 * a write-once object of its own (`keys.routeJournal`), so no later read-modify-write of the
 * manifest can lose it. Everything that puts routes back (RestoreRoutes, the cleanup after an
 * aborted or timed-out execution, SwapRoutes undoing itself) reads the journal, compares with the
 * live route and restores what differs. The cleanup writes `keys.runStopped` first; SwapRoutes
 * checks that marker and the run lock before and after each change (`ownershipLost`).
 */
import { errorMessage, isTransientError } from '../../core/errors.js';
import {
  type JournalEntry,
  type RouteIndexEntry,
  readJournalEntries,
  readJournalEntry,
  readRouteIndex,
} from '../../core/journal-entry.js';
import { keys, routeKey } from '../../core/keys.js';
import type { RouteEntry, RouteTarget } from '../../core/resolved-plan.js';
import { readManifest } from '../../core/run-manifest.js';
import type { Deps } from '../ports.js';

type RouteKey = Omit<RouteEntry, 'via'>;

/** Record a route's original unless the run already did (the first original is the real one). */
export async function journalOriginal(
  deps: Deps,
  runId: string,
  entry: JournalEntry,
  via: RouteTarget,
): Promise<JournalEntry> {
  const key = keys.routeJournal(runId, entry);
  const existing = await readJournalEntry(deps.store, runId, entry);
  const kept = existing ?? entry;
  // The route index first: a run that crashes after it still leaves the journal's twin behind.
  const index = keys.routeIndex(entry, runId);
  if ((await deps.store.getText(index)) === undefined) {
    const indexed: RouteIndexEntry = { ...kept, runId, via };
    await deps.store.put(index, `${JSON.stringify(indexed, null, 2)}\n`, 'application/json');
  }
  if (existing === undefined) await deps.store.put(key, `${JSON.stringify(entry, null, 2)}\n`, 'application/json');
  return kept;
}

/**
 * Routes of `routes` an earlier run left changed: the last run (by journal time) that changed
 * the route pointed it at what it is still pointed at, and its original is something else. One
 * line each, naming the route and the run. A route changed by hand since is not reported.
 */
export async function leftSwappedByEarlierRuns(
  deps: Deps,
  runId: string,
  routes: RouteKey[],
): Promise<{ route: RouteKey; runId: string; via: RouteTarget; original: RouteTarget }[]> {
  const out: { route: RouteKey; runId: string; via: RouteTarget; original: RouteTarget }[] = [];
  const seen = new Set<string>();
  for (const r of routes) {
    const k = routeKey(r);
    if (seen.has(k)) continue;
    seen.add(k);
    let last: RouteIndexEntry | undefined;
    for (const e of await readRouteIndex(deps.store, r)) {
      if (e.runId === runId || routeKey(e) !== k) continue;
      if (!last || e.at > last.at) last = e;
    }
    if (!last || last.via === last.original) continue;
    const live = await deps.routes.read(r);
    if (live === last.via && live !== last.original) {
      out.push({ route: r, runId: last.runId, via: live, original: last.original });
    }
  }
  return out;
}

/**
 * Every route the run recorded: the journal, plus manifest route changes of runs written before
 * the journal existed (their originals were recorded in the manifest only).
 */
export async function readJournal(deps: Deps, runId: string): Promise<JournalEntry[]> {
  const byRoute = new Map<string, JournalEntry>();
  for (const e of await readJournalEntries(deps.store, runId)) byRoute.set(routeKey(e), e);
  const m = await readManifest(deps.store, runId);
  if (m !== undefined) {
    for (const c of m.routeChanges) {
      if (byRoute.has(routeKey(c))) continue;
      byRoute.set(routeKey(c), {
        region: c.region,
        routeTableId: c.routeTableId,
        destination: c.destination,
        original: c.original,
        originalUsable: true,
        at: m.startedAt,
        pathId: '',
      });
    }
  }
  // Oldest first; restoring undoes the last change first.
  return [...byRoute.values()].sort((a, b) => a.at.localeCompare(b.at));
}

/** Mark the run stopped (the cleanup does this before restoring). */
export async function markStopped(deps: Deps, runId: string, status: string): Promise<void> {
  if ((await deps.store.getText(keys.runStopped(runId))) !== undefined) return;
  await deps.store.put(
    keys.runStopped(runId),
    `${JSON.stringify({ runId, status, at: deps.now().toISOString() })}\n`,
    'application/json',
  );
}

/** Why this run may no longer change routes (stopped, or the lock is gone), or undefined. */
export async function ownershipLost(deps: Deps, runId: string): Promise<string | undefined> {
  if ((await deps.store.getText(keys.runStopped(runId))) !== undefined) return 'the run was stopped';
  const holder = await deps.lock.current();
  if (holder?.runId !== runId) {
    return holder ? `the run lock is held by ${holder.runId}` : 'the run no longer holds the run lock';
  }
  return undefined;
}

export interface RestoreOutcome {
  /** Routes this call put back. */
  restored: number;
  /** Routes already at their original target. */
  alreadyOriginal: number;
  /** "region table destination: why" for every route still not at its original. */
  errors: string[];
  /** routeKey of every route still not at its original. */
  failed: string[];
  /** routeKey of every failed route whose error was transient (5xx, throttling): a retry may put it back. */
  transient: string[];
  /** Notes, e.g. an original put back as blackholed, as it was. */
  notes: string[];
}

/** Verify with a few short retries: route APIs are eventually consistent. */
async function settles(deps: Deps, check: () => Promise<boolean>, attempts = 5): Promise<boolean> {
  for (let i = 0; i < attempts; i++) {
    if (await check()) return true;
    if (i < attempts - 1) await (deps.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))))(200 * 2 ** i);
  }
  return false;
}

/**
 * Put every journaled route back to its original target, last change first. A route counts as
 * restored when it points at its original target again, and — only when the original was
 * usable — is usable again: a blackholed original comes back blackholed, as it was.
 */
export async function restoreJournaled(
  deps: Deps,
  entries: JournalEntry[],
  only?: (e: JournalEntry) => boolean,
): Promise<RestoreOutcome> {
  const out: RestoreOutcome = { restored: 0, alreadyOriginal: 0, errors: [], failed: [], transient: [], notes: [] };
  for (const e of [...entries].reverse()) {
    if (only && !only(e)) continue;
    const { original, originalUsable: _u, at: _a, pathId: _p, ...r } = e;
    const name = `${r.region} ${r.routeTableId} ${r.destination}`;
    try {
      if ((await deps.routes.read(r)) === original) {
        out.alreadyOriginal++;
        continue;
      }
      if (original === 'none') await deps.routes.remove(r);
      else await deps.routes.point(r, original);
      const back = await settles(deps, async () =>
        original === 'none' || !e.originalUsable
          ? (await deps.routes.read(r)) === original
          : deps.routes.verify(r, original),
      );
      if (!back) {
        const now = await deps.routes.read(r);
        throw new Error(
          now === original ? `back via ${original} but not active (it was active before)` : `still via ${now}`,
        );
      }
      if (original !== 'none' && !e.originalUsable)
        out.notes.push(`${name}: put back via ${original}, not active, as it was`);
      out.restored++;
      deps.log.info('route restored', { region: r.region, routeTableId: r.routeTableId, to: original });
    } catch (err) {
      out.errors.push(`${name}: ${errorMessage(err)}`);
      out.failed.push(routeKey(r));
      if (isTransientError(err)) out.transient.push(routeKey(r));
    }
  }
  return out;
}
