/**
 * The run manifest (runs/run=<id>/manifest.json): status and provenance per path. On the
 * measurement state machine tasks run one at a time (the Map has MaxConcurrency 1), so
 * read-modify-write of this one object is safe. A mesh round runs its pairs in parallel: within
 * one process (the local runner's child executions) updates of one manifest are queued, and the
 * updates waiting while one is written are applied together and written once (a 2070-pair mesh
 * manifest is ~1 MB: one read and one write per update made the local mesh quadratic). Across
 * processes (parallel Lambdas on AWS) a store with conditional writes (getVersioned /
 * putIfVersion: S3 If-Match) is updated by compare-and-swap: a write that lost to another is
 * read again, changed again and retried (docs/architecture.md, "The mesh machine").
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { keys } from '../../core/keys.js';
import type { PathManifest, StepRecord } from '../../core/path-manifest.js';
import { parseManifest, type RunManifest, readManifest } from '../../core/run-manifest.js';
import type { ObjectStore } from '../ports.js';

/** The run's manifest, checked (core/run-manifest.ts); an error when the run has none. */
export async function loadManifest(store: ObjectStore, runId: string): Promise<RunManifest> {
  const m = await readManifest(store, runId);
  if (m === undefined) throw new Error(`run ${runId} has no manifest (${keys.manifest(runId)})`);
  return m;
}

export async function saveManifest(store: ObjectStore, manifest: RunManifest): Promise<void> {
  await store.put(keys.manifest(manifest.runId), `${JSON.stringify(manifest, null, 2)}\n`, 'application/json');
}

/** One queued change and its caller's promise. */
interface PendingChange {
  change: (m: RunManifest) => void;
  resolve: (m: RunManifest) => void;
  reject: (e: unknown) => void;
}

/** Per store and run: the changes waiting for the next write, and whether a writer is draining them. */
const pending = new Map<string, { changes: PendingChange[]; draining: boolean }>();

/**
 * Load, change, save. The change function may mutate the manifest in place; it resolves to the
 * manifest as saved (with the changes batched with it). Changes queued while a write is under
 * way are applied in order on one load and saved with one write. A change that throws is
 * rejected alone: the batch is reloaded and the others applied again (so a change must be a
 * plain mutation of the manifest, safe to apply to a fresh copy).
 */
export async function updateManifest(
  store: ObjectStore,
  runId: string,
  change: (m: RunManifest) => void,
): Promise<RunManifest> {
  const key = `${store.location} ${runId}`;
  let q = pending.get(key);
  if (!q) {
    q = { changes: [], draining: false };
    pending.set(key, q);
  }
  const done = new Promise<RunManifest>((resolve, reject) => q.changes.push({ change, resolve, reject }));
  if (!q.draining) void drain(store, runId, key, q);
  return done;
}

/**
 * Apply the changes in order to a fresh copy; one that throws is rejected alone, and as it may
 * have half-changed the copy, the others are applied again to another fresh copy.
 */
async function applyChanges(
  fresh: () => Promise<RunManifest>,
  batch: readonly PendingChange[],
): Promise<{ m: RunManifest; applied: PendingChange[] }> {
  let m = await fresh();
  const applied: PendingChange[] = [];
  for (const c of batch) {
    try {
      c.change(m);
      applied.push(c);
    } catch (e) {
      c.reject(e);
      m = await fresh();
      for (const ok of applied) ok.change(m);
    }
  }
  return { m, applied };
}

/** Compare-and-swap attempts before an update gives up (each after a short random pause). */
export const MANIFEST_CAS_ATTEMPTS = 12;

/**
 * Apply `batch` to the stored manifest by compare-and-swap: read with its version, apply every
 * change to that copy, write only if nobody wrote in between, else start again from a fresh read.
 */
async function applyConditional(store: ObjectStore, runId: string, batch: PendingChange[]): Promise<void> {
  const key = keys.manifest(runId);
  let live = batch;
  for (let attempt = 1; ; attempt++) {
    const got = await store.getVersioned!(key);
    if (!got) throw new Error(`run ${runId} has no manifest (${key})`);
    // Parsed and checked once per read; parsed again only for a fresh copy after a change threw.
    const { m, applied } = await applyChanges(async () => parseManifest(runId, got.text), live);
    live = applied;
    if (live.length === 0) return;
    if (await store.putIfVersion!(key, `${JSON.stringify(m, null, 2)}\n`, got.version, 'application/json')) {
      for (const c of live) c.resolve(m);
      return;
    }
    if (attempt >= MANIFEST_CAS_ATTEMPTS) {
      const e = new Error(
        `run ${runId}: the manifest kept changing under ${attempt} conditional writes; update not saved`,
      );
      for (const c of live) c.reject(e);
      return;
    }
    await sleep(20 + Math.random() * 30 * attempt);
  }
}

async function drain(
  store: ObjectStore,
  runId: string,
  key: string,
  q: { changes: PendingChange[]; draining: boolean },
): Promise<void> {
  q.draining = true;
  try {
    while (q.changes.length > 0) {
      const batch = q.changes.splice(0);
      if (store.getVersioned && store.putIfVersion) {
        await applyConditional(store, runId, batch).catch((e) => {
          for (const c of batch) c.reject(e);
        });
        continue;
      }
      try {
        const { m, applied } = await applyChanges(() => loadManifest(store, runId), batch);
        if (applied.length > 0) await saveManifest(store, m);
        for (const c of applied) c.resolve(m);
      } catch (e) {
        // Load or save failed: every change of the batch not yet settled fails with it.
        for (const c of batch) c.reject(e);
      }
    }
  } finally {
    q.draining = false;
    if (q.changes.length === 0 && pending.get(key) === q) pending.delete(key);
  }
}

export function pathEntry(m: RunManifest, pathId: string): PathManifest {
  const p = m.paths.find((x) => x.id === pathId);
  if (!p) throw new Error(`path ${pathId} is not in run ${m.runId}`);
  return p;
}

/**
 * Record that a named step started (first call) or is still going; several tasks of one step
 * (StopClient, CheckStopped, …) share one record, so polls do not add entries.
 */
export function stepStarted(p: PathManifest, name: string, at: Date): StepRecord {
  let s = p.steps.find((x) => x.name === name);
  if (!s) {
    s = { name, status: 'running', startedAt: at.toISOString() };
    p.steps.push(s);
  }
  return s;
}

export function stepEnded(
  p: PathManifest,
  name: string,
  at: Date,
  status: StepRecord['status'] = 'succeeded',
  note?: string,
): StepRecord {
  const s = stepStarted(p, name, at);
  s.status = status;
  s.endedAt = at.toISOString();
  s.ms = Math.max(0, at.getTime() - Date.parse(s.startedAt));
  if (note) s.note = note;
  return s;
}

/** Add a note to a path's entry, once. */
export function addNote(p: PathManifest, text: string): void {
  if (!p.notes.includes(text)) p.notes.push(text);
}

/** The wait between reboot (or path start) and the next step is the credit refill wait. */
export function closeCreditWait(p: PathManifest, now: Date): void {
  if (p.steps.some((s) => s.name === 'WaitForCredits')) return;
  const reboot = p.steps.find((s) => s.name === 'Reboot');
  const startedAt = reboot?.endedAt ?? p.startedAt ?? now.toISOString();
  const ms = Math.max(0, now.getTime() - Date.parse(startedAt));
  p.steps.push({ name: 'WaitForCredits', status: 'succeeded', startedAt, endedAt: now.toISOString(), ms });
}
