/**
 * The run manifest (runs/run=<id>/manifest.json): status and provenance per path. On the
 * measurement state machine tasks run one at a time (the Map has MaxConcurrency 1), so
 * read-modify-write of this one object is safe. A mesh round runs its pairs in parallel: within
 * one process (the local runner's child executions) updates of one manifest are queued one after
 * another; across Lambda invocations on AWS they are not yet (docs/architecture.md, "Mesh runs").
 */
import { keys } from '../core/keys.js';
import type { PathManifest, RunManifest, StepRecord } from '../core/model.js';
import type { ObjectStore } from '../ports.js';

export async function loadManifest(store: ObjectStore, runId: string): Promise<RunManifest> {
  const text = await store.getText(keys.manifest(runId));
  if (text === undefined) throw new Error(`run ${runId} has no manifest (${keys.manifest(runId)})`);
  return JSON.parse(text) as RunManifest;
}

export async function saveManifest(store: ObjectStore, manifest: RunManifest): Promise<void> {
  await store.put(keys.manifest(manifest.runId), `${JSON.stringify(manifest, null, 2)}\n`, 'application/json');
}

/** Load, change, save. The change function may mutate the manifest in place. */
export async function updateManifest(
  store: ObjectStore,
  runId: string,
  change: (m: RunManifest) => void,
): Promise<RunManifest> {
  const key = `${store.location} ${runId}`;
  const before = queue.get(key) ?? Promise.resolve();
  const mine = before.then(async () => {
    const m = await loadManifest(store, runId);
    change(m);
    await saveManifest(store, m);
    return m;
  });
  const tail = mine.then(
    () => undefined,
    () => undefined,
  );
  queue.set(key, tail);
  try {
    return await mine;
  } finally {
    if (queue.get(key) === tail) queue.delete(key);
  }
}

/** Manifest updates in flight in this process, by store and run: each waits for the one before. */
const queue = new Map<string, Promise<void>>();

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
