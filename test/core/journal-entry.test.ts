/**
 * The route journal's readers: the run's entries and the route's index entries read, an entry
 * is read by its route, and a damaged one fails naming its key and field.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type JournalEntry,
  type RouteIndexEntry,
  readJournalEntries,
  readJournalEntry,
  readRouteIndex,
} from '../../core/journal-entry.js';
import { keys } from '../../core/keys.js';
import { DirStore } from '../../local/dir-store.js';

let dir: string;
let store: DirStore;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'pb-journal-'));
  store = new DirStore(dir);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const route = { region: 'ap-northeast-1', routeTableId: 'rtb-1', destination: '10.1.0.0/16' };
const other = { ...route, destination: '10.2.0.0/16' };
const entry = (r: typeof route, at: string): JournalEntry => ({
  ...r,
  original: 'vpcPeeringConnectionId:pcx-1',
  originalUsable: true,
  at,
  pathId: 'A',
});

describe('route journal readers', () => {
  it("read the run's entries, one by its route, and the route's index across runs", async () => {
    const a = entry(route, '2026-12-01T00:00:01.000Z');
    const b = entry(other, '2026-12-01T00:00:02.000Z');
    await store.put(keys.routeJournal('r1', route), JSON.stringify(a));
    await store.put(keys.routeJournal('r1', other), JSON.stringify(b));
    expect(await readJournalEntry(store, 'r1', route)).toEqual(a);
    expect(await readJournalEntry(store, 'r2', route)).toBeUndefined();
    expect((await readJournalEntries(store, 'r1')).sort((x, y) => x.at.localeCompare(y.at))).toEqual([a, b]);
    const indexed: RouteIndexEntry = { ...a, runId: 'r1', via: 'transitGatewayId:tgw-1' };
    await store.put(keys.routeIndex(route, 'r1'), JSON.stringify(indexed));
    expect(await readRouteIndex(store, route)).toEqual([indexed]);
    expect(await readRouteIndex(store, other)).toEqual([]);
  });

  it('fail naming the key and field of a damaged entry', async () => {
    const key = keys.routeJournal('r3', route);
    await store.put(key, JSON.stringify({ ...entry(route, 'x'), originalUsable: 'yes' }));
    await expect(readJournalEntries(store, 'r3')).rejects.toThrow(
      `${key} is not a valid route journal entry: originalUsable: expected boolean, got string`,
    );
    await store.put(keys.routeIndex(route, 'r3'), JSON.stringify(entry(route, 'x')));
    await expect(readRouteIndex(store, route)).rejects.toThrow(/is not a valid route index entry: runId: required/);
  });
});
