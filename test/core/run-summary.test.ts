/**
 * The run summary's reader: a full summary (the report fixture) reads back whole, keys this
 * version does not know are kept on the summary and its paths, a summary an earlier version
 * wrote still reads, a statistic stored as null (NaN) reads, and a damaged one fails naming the
 * key and the field.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../../core/keys.js';
import { parseSummary, readSummary } from '../../core/run-summary.js';
import { DirStore } from '../../local/dir-store.js';
import { FIXTURES } from '../helpers/repo.js';

const FULL = JSON.parse(readFileSync(path.join(FIXTURES, 'summary-full.json'), 'utf8'));

let dir: string;
let store: DirStore;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'pb-summary-'));
  store = new DirStore(dir);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('readSummary', () => {
  it('reads the full summary fixture back whole', async () => {
    await store.put(keys.report(FULL.runId, 'json'), JSON.stringify(FULL));
    expect(await readSummary(store, FULL.runId)).toEqual(FULL);
  });

  it('keeps what a later version added, on the summary and on its paths', () => {
    const later = { ...FULL, futureField: { a: 1 }, paths: [{ ...FULL.paths[0], futurePathField: [1] }] };
    const read = parseSummary(FULL.runId, JSON.stringify(later));
    expect(read.futureField).toEqual({ a: 1 });
    expect(read.paths[0].futurePathField).toEqual([1]);
  });

  it('reads a summary an earlier version wrote (no intervals, tails, distributions, trend, provenance)', async () => {
    const earlier = {
      runId: 'r-old',
      status: 'succeeded',
      paths: [
        {
          id: 'A',
          label: 'A',
          status: 'succeeded',
          steps: [{ name: 'Probe', status: 'succeeded', ms: 10 }],
          results: [
            {
              probe: 'tcp-connect',
              metric: 'connect_rtt_ms',
              unit: 'ms',
              n: 3,
              loss: 0,
              p50: 1,
              p95: 1,
              p99: 1,
              p999: 1,
              max: 1,
              flags: [],
            },
          ],
        },
      ],
    };
    await store.put(keys.report('r-old', 'json'), JSON.stringify(earlier));
    expect(await readSummary(store, 'r-old')).toEqual(earlier);
  });

  it('reads a statistic JSON.stringify wrote as null (a ratio over zero) as NaN', () => {
    const cmp = FULL.comparisons?.[0];
    expect(cmp).toBeDefined();
    const s = { ...FULL, comparisons: [{ ...cmp, p50: { ...cmp.p50, pct: Number.NaN } }] };
    expect(parseSummary(FULL.runId, JSON.stringify(s)).comparisons?.[0].p50.pct).toBeNaN();
  });

  it('is undefined for a run not summarized yet, and fails naming the key and field of a damaged one', async () => {
    expect(await readSummary(store, 'r-none')).toBeUndefined();
    const bad = { ...FULL, paths: [{ ...FULL.paths[0], results: [{ ...FULL.paths[0].results[0], n: '3000' }] }] };
    await store.put(keys.report('r-bad', 'json'), JSON.stringify(bad));
    await expect(readSummary(store, 'r-bad')).rejects.toThrow(
      'reports/run=r-bad/summary.json is not a valid run summary: paths[0].results[0].n: expected number, got string',
    );
  });
});
