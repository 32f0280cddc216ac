/**
 * Manifest updates (functions/pipeline/manifest.ts) against the real local store: concurrent
 * updates of one run are all applied (none lost to another's read-modify-write), the waiting ones
 * are written together, and a change that throws fails alone.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { keys } from '../../../core/keys.js';
import type { PathManifest } from '../../../core/path-manifest.js';
import type { RunManifest } from '../../../core/run-manifest.js';
import {
  addNote,
  closeCreditWait,
  loadManifest,
  pathEntry,
  saveManifest,
  stepEnded,
  updateManifest,
} from '../../../functions/pipeline/manifest.js';
import { DirStore } from '../../../local/dir-store.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

/** A store that counts manifest writes. */
class CountingStore extends DirStore {
  manifestWrites = 0;
  override async put(...args: Parameters<DirStore['put']>): Promise<void> {
    if (args[0].endsWith('manifest.json')) this.manifestWrites++;
    return super.put(...args);
  }
}

async function setup(paths: number): Promise<CountingStore> {
  const dir = await mkdtemp(join(tmpdir(), 'pathbench-manifest-'));
  dirs.push(dir);
  const store = new CountingStore(dir);
  const m: RunManifest = {
    runId: 'r1',
    planName: 'p',
    driver: 'local',
    status: 'running',
    startedAt: '2026-12-01T00:00:00.000Z',
    paths: Array.from({ length: paths }, (_, i) => ({
      id: `p${i}`,
      label: `p${i}`,
      status: 'pending',
      steps: [],
      probes: [],
      notes: [],
    })),
    routeChanges: [],
  };
  await saveManifest(store, m);
  store.manifestWrites = 0;
  return store;
}

describe('updateManifest', () => {
  it('applies every one of 200 concurrent updates, in far fewer writes', async () => {
    const store = await setup(200);
    await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        updateManifest(store, 'r1', (m) => {
          pathEntry(m, `p${i}`).notes.push(`note ${i}`);
        }),
      ),
    );
    const m = await loadManifest(store, 'r1');
    expect(m.paths.map((p) => p.notes)).toEqual(m.paths.map((_, i) => [`note ${i}`]));
    expect(store.manifestWrites).toBeLessThan(200);
    expect(store.manifestWrites).toBeGreaterThan(0);
  });

  it('rejects a change that throws, alone, even after it half-changed the manifest', async () => {
    const store = await setup(3);
    const results = await Promise.allSettled([
      updateManifest(store, 'r1', (m) => {
        pathEntry(m, 'p0').notes.push('kept 0');
      }),
      updateManifest(store, 'r1', (m) => {
        pathEntry(m, 'p1').notes.push('half');
        pathEntry(m, 'nope');
      }),
      updateManifest(store, 'r1', (m) => {
        pathEntry(m, 'p2').notes.push('kept 2');
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/path nope is not in run r1/);
    const m = await loadManifest(store, 'r1');
    expect(m.paths.map((p) => p.notes)).toEqual([['kept 0'], [], ['kept 2']]);
  });

  it('fails every waiting change when the manifest is missing', async () => {
    const store = await setup(1);
    await store.delete(keys.manifest('r1'));
    const r = await Promise.allSettled([updateManifest(store, 'r1', () => {}), updateManifest(store, 'r1', () => {})]);
    expect(r.map((x) => x.status)).toEqual(['rejected', 'rejected']);
  });
});

describe("a path entry's notes and credit wait", () => {
  const entry = (): PathManifest => ({
    id: 'A',
    label: 'a',
    status: 'running',
    startedAt: '2030-01-01T00:00:00.000Z',
    steps: [],
    probes: [],
    notes: [],
  });

  it('adds a note once', () => {
    const p = entry();
    addNote(p, 'x');
    addNote(p, 'x');
    addNote(p, 'y');
    expect(p.notes).toEqual(['x', 'y']);
  });

  it('closes the credit wait once, from the end of the reboot (or the path start) to now', () => {
    const p = entry();
    closeCreditWait(p, new Date('2030-01-01T00:00:02.000Z'));
    closeCreditWait(p, new Date('2030-01-01T00:00:09.000Z'));
    expect(p.steps).toEqual([
      {
        name: 'WaitForCredits',
        status: 'succeeded',
        startedAt: '2030-01-01T00:00:00.000Z',
        endedAt: '2030-01-01T00:00:02.000Z',
        ms: 2000,
      },
    ]);
    const r = entry();
    stepEnded(r, 'Reboot', new Date('2030-01-01T00:01:00.000Z'));
    closeCreditWait(r, new Date('2030-01-01T00:01:30.000Z'));
    expect(r.steps.find((s) => s.name === 'WaitForCredits')).toMatchObject({
      startedAt: '2030-01-01T00:01:00.000Z',
      ms: 30_000,
    });
  });
});
