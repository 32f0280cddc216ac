/** The stop marker's reader: a marker reads, no marker is undefined, a damaged one names its key and field. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../../core/keys.js';
import { parseStopMarker, readStopMarker } from '../../core/stop-marker.js';
import { DirStore } from '../../local/dir-store.js';

let dir: string;
let store: DirStore;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'pb-stop-'));
  store = new DirStore(dir);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('readStopMarker', () => {
  it('reads a marker, is undefined without one, and names the key and field of a damaged one', async () => {
    const marker = { runId: 'r1', status: 'ABORTED', at: '2026-12-01T00:00:00.000Z' };
    await store.put(keys.runStopped('r1'), `${JSON.stringify(marker)}\n`);
    expect(await readStopMarker(store, 'r1')).toEqual(marker);
    expect(await readStopMarker(store, 'r2')).toBeUndefined();
    expect(() => parseStopMarker('r3', '{"runId":"r3","at":"x"}')).toThrow(
      'runs/run=r3/stopped.json is not a valid stop marker: status: required',
    );
  });
});
