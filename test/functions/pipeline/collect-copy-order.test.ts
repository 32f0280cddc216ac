/**
 * CollectOutput writes the Parquet copy before it calls the path succeeded: a step cut short in
 * between (a killed Lambda, an engine that fails) leaves the path collecting, to be finished by a
 * retry or the cleanup's salvage, never succeeded without its copy. Real local store and DuckDB;
 * the engine's copy is made to fail once.
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { keys } from '../../../core/keys.js';
import { readManifest } from '../../../core/run-manifest.js';
import { collectOutput } from '../../../functions/pipeline/collect.js';
import { sendProbe } from '../../../functions/pipeline/probe-command.js';
import { validatePlanStep } from '../../../functions/pipeline/validate.js';
import { scenarioDeps, scenarioPlan } from '../../helpers/fakes.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const CLIENT = { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' };

describe('collect and the Parquet copy', () => {
  it('leaves a path whose copy failed not succeeded, and a retry finishes both', async () => {
    const s = await scenarioDeps();
    cleanups.push(async () => {
      s.query.close();
      await rm(s.dir, { recursive: true, force: true });
    });
    await validatePlanStep(s.deps, { input: { plan: scenarioPlan(['A']) }, runId: 'r1' });
    const ref = { runId: 'r1', pathId: 'A', client: CLIENT };
    await sendProbe(s.deps, ref);
    const copy = s.query.copyToParquet.bind(s.query);
    let fail = true;
    s.query.copyToParquet = async (pathId: string, runId: string) => {
      if (fail) {
        fail = false;
        throw new Error('the engine stopped (a killed step)');
      }
      return copy(pathId, runId);
    };
    await expect(collectOutput(s.deps, { runId: 'r1', pathId: 'A' })).rejects.toThrow(/engine stopped/);
    const cut = (await readManifest(s.store, 'r1'))!.paths.find((p) => p.id === 'A')!;
    expect(cut.status).not.toBe('succeeded');
    expect(await s.store.list(keys.parquetPrefix('A', 'r1'))).toEqual([]);
    // The state machine's retry: the same step again, both done.
    await collectOutput(s.deps, { runId: 'r1', pathId: 'A' });
    const done = (await readManifest(s.store, 'r1'))!.paths.find((p) => p.id === 'A')!;
    expect(done.status).toBe('succeeded');
    expect(await s.store.list(keys.parquetPrefix('A', 'r1'))).toEqual([keys.parquetCopy('A', 'r1')]);
  });
});
