/**
 * Manifest updates (functions/pipeline/manifest.ts) against the real local store: concurrent
 * updates of one run are all applied (none lost to another's read-modify-write), the waiting ones
 * are written together, a change that throws fails alone, a path's update reads and writes only
 * its own object (the same bytes at 10 or 2,000 paths), and runs stored whole are still updated.
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
  loadPath,
  pathEntry,
  saveManifest,
  stepEnded,
  updateManifest,
  updatePath,
  updateRun,
} from '../../../functions/pipeline/manifest.js';
import { DirStore } from '../../../local/dir-store.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

/** A store that counts writes of the manifest's objects (the index, each path's) and the bytes read and written. */
class CountingStore extends DirStore {
  manifestWrites = 0;
  pathWrites = 0;
  bytesRead = 0;
  bytesWritten = 0;
  override async put(...args: Parameters<DirStore['put']>): Promise<void> {
    if (args[0].endsWith('/manifest.json')) this.manifestWrites++;
    if (args[0].includes('/paths/path=')) this.pathWrites++;
    this.bytesWritten += String(args[1]).length;
    return super.put(...args);
  }
  override async getText(key: string): Promise<string | undefined> {
    const text = await super.getText(key);
    this.bytesRead += text?.length ?? 0;
    return text;
  }
  reset(): void {
    this.manifestWrites = 0;
    this.pathWrites = 0;
    this.bytesRead = 0;
    this.bytesWritten = 0;
  }
}

async function setup(paths: number, whole = false): Promise<CountingStore> {
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
  if (whole) await store.put(keys.manifest('r1'), JSON.stringify(m, null, 2));
  else await saveManifest(store, m);
  store.reset();
  return store;
}

describe('updateManifest', () => {
  it('applies every one of 200 concurrent updates, in far fewer writes, each of only the objects it changed', async () => {
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
    // Every path changed once; the index (the run's own fields) never.
    expect(store.pathWrites).toBe(200);
    expect(store.manifestWrites).toBe(0);
  });

  it("applies every one of 200 concurrent updates of one path's entry, in far fewer writes of that one object", async () => {
    const store = await setup(5);
    await Promise.all(
      Array.from({ length: 200 }, (_, i) => updatePath(store, 'r1', 'p3', (p) => void p.notes.push(`note ${i}`))),
    );
    const m = await loadManifest(store, 'r1');
    expect(pathEntry(m, 'p3').notes).toEqual(Array.from({ length: 200 }, (_, i) => `note ${i}`));
    expect(m.paths.filter((p) => p.notes.length > 0).map((p) => p.id)).toEqual(['p3']);
    expect(store.pathWrites).toBeLessThan(200);
    expect(store.pathWrites).toBeGreaterThan(0);
    expect(store.manifestWrites).toBe(0);
  });

  it("costs a path's update the same bytes at 10 or 2,000 paths: only its own object is read and written", async () => {
    const cost = async (paths: number) => {
      const store = await setup(paths);
      const p = await updatePath(store, 'r1', 'p7', (x) => {
        stepEnded(x, 'Reboot', new Date('2026-12-01T00:01:00.000Z'));
      });
      expect(p.steps.map((s) => s.name)).toEqual(['Reboot']);
      return { read: store.bytesRead, written: store.bytesWritten, index: store.manifestWrites };
    };
    const small = await cost(10);
    expect(await cost(2000)).toEqual(small);
    expect(small.index).toBe(0);
    expect(small.written).toBeLessThan(1000);
  });

  it("updateRun changes the run's own fields, reading and writing manifest.json alone", async () => {
    const store = await setup(50);
    const route = {
      region: 'r',
      routeTableId: 'rtb-1',
      destination: '10.0.0.0/16',
      original: 'pcx-1',
      current: 'tgw-1',
    };
    const fields = await updateRun(store, 'r1', (m) => void m.routeChanges.push(route));
    expect(fields.routeChanges).toEqual([route]);
    expect(fields).not.toHaveProperty('paths');
    expect(store.manifestWrites).toBe(1);
    expect(store.pathWrites).toBe(0);
    const m = await loadManifest(store, 'r1');
    expect(m.routeChanges).toEqual([route]);
    expect(m.paths).toHaveLength(50);
  });

  it('rejects a path update of a path the run does not have', async () => {
    const store = await setup(2);
    await expect(updatePath(store, 'r1', 'nope', () => {})).rejects.toThrow(/path nope is not in run r1/);
    await expect(loadPath(store, 'r1', 'nope')).rejects.toThrow(/path nope is not in run r1/);
  });

  it('updates a run stored whole (before the per-path layout) in that layout', async () => {
    const store = await setup(3, true);
    await updatePath(store, 'r1', 'p1', (p) => addNote(p, 'one'));
    await updateRun(store, 'r1', (m) => {
      m.notes = ['run note'];
    });
    await updateManifest(store, 'r1', (m) => addNote(pathEntry(m, 'p2'), 'two'));
    expect(store.pathWrites).toBe(0);
    const stored = JSON.parse((await store.getText(keys.manifest('r1'))) ?? '{}') as { paths: PathManifest[] };
    expect(stored.paths.map((p) => p.notes)).toEqual([[], ['one'], ['two']]);
    expect((await loadPath(store, 'r1', 'p1')).notes).toEqual(['one']);
    expect((await loadManifest(store, 'r1')).notes).toEqual(['run note']);
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
