/**
 * The run manifest (runs/run=<id>/manifest.json, the run's fields and path ids, and one object per
 * path under runs/run=<id>/paths/): status and provenance per path. A path's steps change only its
 * own object (updatePath), so a write costs the same at any plan size; the run's steps
 * (ValidatePlan, the route record, the run's end, the cleanup) change the whole (updateManifest),
 * writing only the objects they changed.
 *
 * Within one process, updates of one object are queued, and the updates waiting while one is
 * written are applied together and written once (a mesh round's pairs run at once). Across
 * processes (parallel Lambdas on AWS) a store with conditional writes (getVersioned /
 * putIfVersion: S3 If-Match) is updated by compare-and-swap: a write that lost to another is read
 * again, changed again and retried (docs/architecture.md, "The mesh machine"). A run-level change
 * writing several objects is not atomic: it runs only while no path of the run is running (and
 * not at once with another run-level change of the run: updateRun and updateManifest queue apart),
 * and must be a plain mutation that is safe to apply again to a copy that already holds it.
 *
 * Runs written before the per-path layout have the whole manifest in manifest.json; they are read
 * and updated in that layout.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pLimit from 'p-limit';
import { keys } from '../../core/keys.js';
import type { PathManifest, StepRecord } from '../../core/path-manifest.js';
import {
  assembleManifest,
  type ManifestIndex,
  manifestText,
  parsePathManifest,
  parseStoredManifest,
  type RunManifest,
  readManifest,
  type StoredManifest,
  splitManifest,
} from '../../core/run-manifest.js';
import type { ObjectStore } from '../ports.js';

/** The run's manifest, checked (core/run-manifest.ts); an error when the run has none. */
export async function loadManifest(store: ObjectStore, runId: string): Promise<RunManifest> {
  const m = await readManifest(store, runId);
  if (m === undefined) throw new Error(`run ${runId} has no manifest (${keys.manifest(runId)})`);
  return m;
}

/** Writes at once when a whole manifest's paths are saved. */
const PATH_WRITES_AT_ONCE = 16;

/** Save a whole manifest: every path's object, then the index (a reader of the index finds its paths). */
export async function saveManifest(store: ObjectStore, manifest: RunManifest): Promise<void> {
  const { index, paths } = splitManifest(manifest);
  const limit = pLimit(PATH_WRITES_AT_ONCE);
  await Promise.all(
    paths.map((p) =>
      limit(() => store.put(keys.pathManifest(manifest.runId, p.id), manifestText(p), 'application/json')),
    ),
  );
  await store.put(keys.manifest(manifest.runId), manifestText(index), 'application/json');
}

/** One path's entry; an error when the run or the path has none. */
export async function loadPath(store: ObjectStore, runId: string, pathId: string): Promise<PathManifest> {
  const text = await store.getText(keys.pathManifest(runId, pathId));
  if (text !== undefined) return parsePathManifest(runId, pathId, text);
  return pathEntry(await loadManifest(store, runId), pathId);
}

/** One queued change and its caller's promise. */
interface PendingChange<T> {
  change: (doc: T) => void;
  resolve: (doc: T) => void;
  reject: (e: unknown) => void;
}

/** The stored document a batch is applied to: fresh copies of it, and a write that may lose a race. */
interface Loaded<T> {
  fresh(): Promise<T>;
  /** Write what the changes made; false when another writer came first (a conditional store). */
  commit(doc: T): Promise<boolean>;
}

/** How a queue reads its document. */
interface Target<T> {
  /** What the document is, for errors ("run R", "run R path P"). */
  name: string;
  load(): Promise<Loaded<T>>;
}

/** Whether the store's writes can be made conditional (S3 If-Match), so a commit can lose a race. */
function isConditional(store: ObjectStore): boolean {
  return store.getVersioned !== undefined && store.putIfVersion !== undefined;
}

/** Per store and object: the changes waiting for the next write, and whether a writer is draining them. */
// biome-ignore lint/suspicious/noExplicitAny: one map holds the queues of both document kinds
const pending = new Map<string, { changes: PendingChange<any>[]; draining: boolean }>();

function enqueue<T>(key: string, target: Target<T>, change: (doc: T) => void): Promise<T> {
  let q = pending.get(key);
  if (!q) {
    q = { changes: [], draining: false };
    pending.set(key, q);
  }
  const queue = q;
  const done = new Promise<T>((resolve, reject) => queue.changes.push({ change, resolve, reject }));
  if (!queue.draining) void drain(key, queue, target);
  return done;
}

/**
 * Load, change, save, for the run as a whole. The change function may mutate the manifest in
 * place; it resolves to the manifest as saved (with the changes batched with it). Changes queued
 * while a write is under way are applied in order on one load and saved with one write. A change
 * that throws is rejected alone: the batch is reloaded and the others applied again (so a change
 * must be a plain mutation of the manifest, safe to apply to a fresh copy).
 */
export function updateManifest(
  store: ObjectStore,
  runId: string,
  change: (m: RunManifest) => void,
): Promise<RunManifest> {
  return enqueue(`${store.location} ${runId}`, wholeTarget(store, runId), change);
}

/** The run's own fields: what a change through updateRun may read and change. */
export type RunFields = Omit<RunManifest, 'paths'>;

/**
 * Load, change, save the run's own fields (routes changed, the restore, status, notes) without
 * reading or writing any path: only manifest.json. Resolves to the fields as saved.
 */
export function updateRun(store: ObjectStore, runId: string, change: (m: RunFields) => void): Promise<RunFields> {
  return enqueue(`${store.location} ${runId} index`, indexTarget(store, runId), change);
}

/**
 * Load, change, save one path's entry, as updateManifest does for the whole: only the path's own
 * object is read and written. Resolves to the entry as saved.
 */
export async function updatePath(
  store: ObjectStore,
  runId: string,
  pathId: string,
  change: (p: PathManifest) => void,
): Promise<PathManifest> {
  try {
    return await enqueue(`${store.location} ${runId} ${pathId}`, pathTarget(store, runId, pathId), change);
  } catch (e) {
    if (!(e instanceof NoPathObject)) throw e;
    // A run in the earlier layout (or a path the run does not have: pathEntry says so).
    const m = await updateManifest(store, runId, (mm) => change(pathEntry(mm, pathId)));
    return pathEntry(m, pathId);
  }
}

/** The path has no object of its own: its run is in the earlier layout, or has no such path. */
class NoPathObject extends Error {}

function pathTarget(store: ObjectStore, runId: string, pathId: string): Target<PathManifest> {
  const key = keys.pathManifest(runId, pathId);
  const conditional = isConditional(store);
  return {
    name: `run ${runId} path ${pathId}`,
    async load() {
      const got = await readVersioned(store, key, conditional);
      if (!got) throw new NoPathObject(key);
      return {
        fresh: async () => parsePathManifest(runId, pathId, got.text),
        commit: (p) => commitText(store, key, manifestText(p), got, conditional),
      };
    },
  };
}

/** An object's text, with its version on a conditional store (empty otherwise); undefined when there is none. */
async function readVersioned(
  store: ObjectStore,
  key: string,
  conditional: boolean,
): Promise<{ text: string; version: string } | undefined> {
  if (conditional) return store.getVersioned!(key);
  const text = await store.getText(key);
  return text === undefined ? undefined : { text, version: '' };
}

/** Write `text` at `key` unless it is what was read; conditionally on the version read. */
async function commitText(
  store: ObjectStore,
  key: string,
  text: string,
  read: { text: string; version: string } | undefined,
  conditional: boolean,
): Promise<boolean> {
  if (read !== undefined && text === read.text) return true;
  if (conditional && read !== undefined) return store.putIfVersion!(key, text, read.version, 'application/json');
  await store.put(key, text, 'application/json');
  return true;
}

function indexTarget(store: ObjectStore, runId: string): Target<RunFields> {
  const key = keys.manifest(runId);
  const conditional = isConditional(store);
  return {
    name: `run ${runId}`,
    async load() {
      const got = await readVersioned(store, key, conditional);
      if (!got) throw new Error(`run ${runId} has no manifest (${key})`);
      const fresh = async (): Promise<RunFields> => {
        const stored = parseStoredManifest(runId, got.text);
        return stored.kind === 'whole' ? stored.manifest : stored.index;
      };
      // The fields as read, changed: an index, or a whole manifest (the earlier layout) written whole.
      return { fresh, commit: (m) => commitText(store, key, manifestText(m as ManifestIndex), got, conditional) };
    },
  };
}

function wholeTarget(store: ObjectStore, runId: string): Target<RunManifest> {
  const key = keys.manifest(runId);
  const conditional = isConditional(store);
  const read = (k: string) => readVersioned(store, k, conditional);
  return {
    name: `run ${runId}`,
    async load() {
      const got = await read(key);
      if (!got) throw new Error(`run ${runId} has no manifest (${key})`);
      const stored: StoredManifest = parseStoredManifest(runId, got.text);
      if (stored.kind === 'whole') {
        return {
          fresh: async () => assembleManifest(store, runId, parseStoredManifest(runId, got.text)),
          commit: (m) => commitText(store, key, manifestText(m), got, conditional),
        };
      }
      // The paths as read, with their versions: only those a change altered are written back.
      const limit = pLimit(PATH_WRITES_AT_ONCE);
      const paths = new Map(
        await Promise.all(
          stored.index.pathIds.map((id) => limit(async () => [id, await read(keys.pathManifest(runId, id))] as const)),
        ),
      );
      const asRead = new Map([...paths].map(([id, v]) => [keys.pathManifest(runId, id), v?.text]));
      const readBack = { getText: async (k: string) => asRead.get(k) };
      return {
        fresh: () => assembleManifest(readBack, runId, parseStoredManifest(runId, got.text)),
        async commit(m) {
          const { index, paths: entries } = splitManifest(m);
          for (const p of entries) {
            const where = keys.pathManifest(runId, p.id);
            if (!(await commitText(store, where, manifestText(p), paths.get(p.id), conditional))) return false;
          }
          return commitText(store, key, manifestText(index), got, conditional);
        },
      };
    },
  };
}

/**
 * Apply the changes in order to a fresh copy; one that throws is rejected alone, and as it may
 * have half-changed the copy, the others are applied again to another fresh copy.
 */
async function applyChanges<T>(
  loaded: Loaded<T>,
  batch: readonly PendingChange<T>[],
): Promise<{ doc: T; applied: PendingChange<T>[] }> {
  let doc = await loaded.fresh();
  const applied: PendingChange<T>[] = [];
  for (const c of batch) {
    try {
      c.change(doc);
      applied.push(c);
    } catch (e) {
      c.reject(e);
      doc = await loaded.fresh();
      for (const ok of applied) ok.change(doc);
    }
  }
  return { doc, applied };
}

/** Compare-and-swap attempts before an update gives up (each after a short random pause). */
export const MANIFEST_CAS_ATTEMPTS = 12;

/**
 * Apply `batch` to the stored document: read it (with its version on a conditional store), apply
 * every change to that copy, write; on a conditional store only if nobody wrote in between, else
 * start again from a fresh read.
 */
async function applyBatch<T>(target: Target<T>, batch: PendingChange<T>[]): Promise<void> {
  let live = batch;
  for (let attempt = 1; ; attempt++) {
    const loaded = await target.load();
    const { doc, applied } = await applyChanges(loaded, live);
    live = applied;
    if (live.length === 0) return;
    if (await loaded.commit(doc)) {
      for (const c of live) c.resolve(doc);
      return;
    }
    if (attempt >= MANIFEST_CAS_ATTEMPTS) {
      const e = new Error(
        `${target.name}: the manifest kept changing under ${attempt} conditional writes; update not saved`,
      );
      for (const c of live) c.reject(e);
      return;
    }
    await sleep(20 + Math.random() * 30 * attempt);
  }
}

async function drain<T>(key: string, q: { changes: PendingChange<T>[]; draining: boolean }, target: Target<T>) {
  q.draining = true;
  try {
    while (q.changes.length > 0) {
      const batch = q.changes.splice(0);
      // Load or save failed: every change of the batch not yet settled fails with it.
      await applyBatch(target, batch).catch((e) => {
        for (const c of batch) c.reject(e);
      });
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
