/**
 * CollectOutput leaves the Parquet copy to the state machine (CopyToParquet) and the path's
 * success to EndPath after it: a run cut short in between (a killed Lambda, an engine that
 * fails) leaves the path collecting, never succeeded without its copy. Real local store and
 * DuckDB; the call CollectOutput returns is the one the state runs.
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { keys } from '../../../core/keys.js';
import { readManifest } from '../../../core/run-manifest.js';
import { collectOutput } from '../../../functions/pipeline/collect.js';
import { endPath } from '../../../functions/pipeline/path-end.js';
import { sendProbe } from '../../../functions/pipeline/probe-command.js';
import { validatePlanStep } from '../../../functions/pipeline/validate.js';
import { scenarioDeps, scenarioPlan } from '../../helpers/fakes.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const CLIENT = { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' };

describe('collect and the Parquet copy', () => {
  it('returns the copy call with the old copy gone, and only EndPath calls the path succeeded', async () => {
    const s = await scenarioDeps();
    cleanups.push(async () => {
      s.query.close();
      await rm(s.dir, { recursive: true, force: true });
    });
    await validatePlanStep(s.deps, { input: { plan: scenarioPlan(['A']) }, runId: 'r1' });
    const ref = { runId: 'r1', pathId: 'A', client: CLIENT };
    await sendProbe(s.deps, ref);
    const status = async () => (await readManifest(s.store, 'r1'))!.paths.find((p) => p.id === 'A')!;

    const first = await collectOutput(s.deps, { runId: 'r1', pathId: 'A' });
    expect(first.copy).toEqual(s.query.copyCall('A', 'r1'));
    expect((await status()).status).not.toBe('succeeded');
    const { rows } = await s.query.execute(first.copy);
    expect(rows).toBe(first.samples);
    expect(await s.store.list(keys.parquetPrefix('A', 'r1'))).toEqual([keys.parquetCopy('A', 'r1')]);

    // The engine refuses a location that holds a copy (Athena's UNLOAD does): a retried collect
    // empties it first, so the state's call always writes into an empty prefix.
    await expect(s.query.execute(first.copy)).rejects.toThrow(/HIVE_PATH_ALREADY_EXISTS/);
    const again = await collectOutput(s.deps, { runId: 'r1', pathId: 'A' });
    expect(await s.store.list(keys.parquetPrefix('A', 'r1'))).toEqual([]);
    expect((await status()).status).not.toBe('succeeded');
    // EndPath calls a path with samples succeeded only with its copy.
    await expect(endPath(s.deps, { runId: 'r1', pathId: 'A' })).rejects.toThrow(/no Parquet copy after CopyToParquet/);
    expect((await status()).status).not.toBe('succeeded');
    await s.query.execute(again.copy);
    await endPath(s.deps, { runId: 'r1', pathId: 'A' });
    const done = await status();
    expect(done.status).toBe('succeeded');
    expect(done.steps.find((x) => x.name === 'Collect')?.status).toBe('succeeded');
    expect(await s.store.list(keys.parquetPrefix('A', 'r1'))).toEqual([keys.parquetCopy('A', 'r1')]);
  });
});
