/**
 * The trend points' reader (`trends/plan=<name>/run=<id>.json`): every point of a plan reads,
 * a point an earlier version stored (no settings, start time or intervals) still reads, other
 * plans' points and other files are not read, and a damaged point fails naming its key and field.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../../core/keys.js';
import { readTrendPoints, type TrendPoint } from '../../core/trend-point.js';
import { DirStore } from '../../local/dir-store.js';

let dir: string;
let store: DirStore;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'pb-trend-'));
  store = new DirStore(dir);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const point = (runId: string, planName = 'weekly plan'): TrendPoint => ({
  runId,
  planName,
  startedAt: '2026-12-01T00:00:00.000Z',
  settings: { minRelative: 0.1 },
  paths: [
    {
      id: 'A',
      status: 'succeeded',
      results: [
        {
          probe: 'tcp-connect',
          metric: 'connect_rtt_ms',
          unit: 'ms',
          n: 300,
          p50: 0.21,
          p99: null,
          ci95: { p50: [0.2, 0.22] },
          flags: [],
        },
      ],
    },
  ],
});

describe('readTrendPoints', () => {
  it("reads every point of the plan, an earlier version's too, and nothing else", async () => {
    const earlier = {
      runId: 'r0',
      planName: 'weekly plan',
      paths: [
        {
          id: 'A',
          status: 'failed',
          results: [{ probe: 'p', metric: 'm', unit: 'ms', n: 0, p50: null, p99: null, flags: [] }],
        },
      ],
    };
    await store.put(keys.trendPoint('weekly plan', 'r0'), JSON.stringify(earlier));
    await store.put(keys.trendPoint('weekly plan', 'r1'), JSON.stringify(point('r1')));
    await store.put(keys.trendPoint('other', 'r2'), JSON.stringify(point('r2', 'other')));
    await store.put(`${keys.trendPrefix('weekly plan')}notes.txt`, 'not a point');
    const read = await readTrendPoints(store, 'weekly plan');
    expect(read.sort((a, b) => a.runId.localeCompare(b.runId))).toEqual([earlier, point('r1')]);
    expect(await readTrendPoints(store, 'none yet')).toEqual([]);
  });

  it('fails naming the key and field of a damaged point', async () => {
    const bad = point('r3', 'damaged');
    await store.put(
      keys.trendPoint('damaged', 'r3'),
      JSON.stringify({ ...bad, paths: [{ ...bad.paths[0], results: 'x' }] }),
    );
    await expect(readTrendPoints(store, 'damaged')).rejects.toThrow(
      'trends/plan=damaged/run=r3.json is not a valid trend point: paths[0].results: expected array, got string',
    );
  });
});
