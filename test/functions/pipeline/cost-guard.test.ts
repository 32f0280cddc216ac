/**
 * ValidatePlan's cost guard with the real local store and lock: over budget is refused before
 * the lock and before anything is written; the caller's override and the estimate are recorded
 * in the manifest; the stack default applies to plans without budgetUsd.
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { OverBudgetError, PlanInvalidError } from '../../../core/errors.js';
import { type RunManifest, readManifest } from '../../../core/run-manifest.js';
import { validatePlanStep } from '../../../functions/pipeline/validate.js';
import { scenarioDeps } from '../../helpers/fakes.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function setup(over: Parameters<typeof scenarioDeps>[0] = {}) {
  const s = await scenarioDeps(over);
  cleanups.push(async () => {
    s.query.close();
    await rm(s.dir, { recursive: true, force: true });
  });
  return s;
}

/** One Tokyo → Osaka mesh pair with a 10 s iperf3: ≈ $1.41 of transfer at 12.5 Gbps. */
function meshPlan(budgetUsd?: number) {
  return {
    name: 'mesh-cost',
    ...(budgetUsd !== undefined ? { budgetUsd } : {}),
    paths: [
      {
        id: 'ap-northeast-1_ap-northeast-3',
        client: { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' },
        target: { host: '10.3.0.10', port: 5201 },
        probes: [{ kind: 'iperf3', durationSeconds: 10 }],
        mesh: { from: 'ap-northeast-1', to: 'ap-northeast-3', distanceKm: 397.2, round: 0 },
      },
    ],
  };
}

const runId = 'cost-guard';
const startedAt = '2026-12-01T00:00:00.000Z';

describe('ValidatePlan cost guard', () => {
  it('refuses a plan over its budget before the lock, writing nothing', async () => {
    const s = await setup();
    await expect(validatePlanStep(s.deps, { input: { plan: meshPlan(1) }, runId, startedAt })).rejects.toThrow(
      OverBudgetError,
    );
    expect(await s.store.list('')).toEqual([]);
    // The lock was never taken: another run can take it at once.
    await s.deps.lock.acquire('other', startedAt);
  });

  it('holds a plan without budgetUsd to the stack default', async () => {
    const s = await setup({ cost: { budgetUsd: 0.5 } });
    await expect(validatePlanStep(s.deps, { input: { plan: meshPlan() }, runId, startedAt })).rejects.toThrow(
      /over the budget of \$0\.50 \(the stack default budget\)/,
    );
    expect(await s.store.list('')).toEqual([]);
  });

  it('runs over budget with the explicit override and records it with the estimate', async () => {
    const s = await setup();
    await validatePlanStep(s.deps, { input: { plan: meshPlan(1), allowOverBudget: true }, runId, startedAt });
    const m = (await readManifest(s.store, runId)) as RunManifest;
    expect(m.cost).toMatchObject({ overBudget: true, overridden: true, budgetUsd: 1, budgetSource: 'plan' });
    expect(m.cost!.estimateUsd).toBeGreaterThan(1.4);
    expect(m.cost!.transferBytes).toBe(15.625e9);
    expect(m.paths[0].mesh).toEqual({ from: 'ap-northeast-1', to: 'ap-northeast-3', distanceKm: 397.2, round: 0 });
  });

  it('records the estimate of a run within budget', async () => {
    const s = await setup();
    await validatePlanStep(s.deps, { input: { plan: meshPlan(5) }, runId, startedAt });
    const m = (await readManifest(s.store, runId)) as RunManifest;
    expect(m.cost).toMatchObject({ overBudget: false, overridden: false, budgetUsd: 5 });
  });

  it('refuses an override that is not a boolean', async () => {
    const s = await setup();
    await expect(
      validatePlanStep(s.deps, { input: { plan: meshPlan(1), allowOverBudget: 'yes' }, runId, startedAt }),
    ).rejects.toThrow(PlanInvalidError);
  });
});
