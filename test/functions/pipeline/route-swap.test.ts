/**
 * Routes left swapped: a stop while SwapRoutes runs, a still-running SwapRoutes after
 * the cleanup's first sweep, a blackholed original, the VPC local route. The real local store
 * (a temp directory), the real file lock and the real pipeline steps; only the route tables are
 * faked (test/helpers/fakes.ts), and every assertion reads them back.
 */
import { rm } from 'node:fs/promises';
import { EC2ServiceException } from '@aws-sdk/client-ec2';
import { afterEach, describe, expect, it } from 'vitest';
import { RouteRestoreRetryableError, RouteSwapError } from '../../../core/errors.js';
import { keys } from '../../../core/keys.js';
import type { RouteEntry } from '../../../core/resolved-plan.js';
import { type RunManifest, readManifest } from '../../../core/run-manifest.js';
import { cleanupAfterExecution } from '../../../functions/pipeline/abandoned-run.js';
import { updateManifest } from '../../../functions/pipeline/manifest.js';
import { swapRoutes } from '../../../functions/pipeline/route-swap.js';
import { restoreRoutes } from '../../../functions/pipeline/run-end.js';
import { validatePlanStep } from '../../../functions/pipeline/validate.js';
import { FakeRoutes, scenarioDeps, scenarioPlan } from '../../helpers/fakes.js';

const TOKYO = 'ap-northeast-1|rtb-tokyo|10.1.0.0/16';
const OSAKA = 'ap-northeast-3|rtb-osaka|10.0.0.0/16';
const osaka = { region: 'ap-northeast-3', routeTableId: 'rtb-osaka', destination: '10.0.0.0/16' };

/** FakeRoutes that runs `hook` once, right after the n-th point call returned. */
class HookedRoutes extends FakeRoutes {
  hook?: { afterPoint: number; run: () => Promise<void> };
  private points = 0;
  override async point(r: Omit<RouteEntry, 'via'>, t: string) {
    await super.point(r, t);
    this.points++;
    const h = this.hook;
    if (h && this.points === h.afterPoint) {
      this.hook = undefined;
      await h.run();
    }
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function started(routes: FakeRoutes, runId = 'r1') {
  const s = await scenarioDeps({ routes });
  cleanups.push(async () => {
    s.query.close();
    await rm(s.dir, { recursive: true, force: true });
  });
  await validatePlanStep(s.deps, { input: { plan: scenarioPlan() }, runId });
  return s;
}

async function manifestOf(store: { getText(k: string): Promise<string | undefined> }, runId: string) {
  return (await readManifest(store, runId)) as RunManifest;
}

describe('routes left swapped', () => {
  it('a stop during SwapRoutes: the task notices after its change and undoes it, the second route is never swapped', async () => {
    const routes = new HookedRoutes();
    routes.table.set(TOKYO, 'vpcPeeringConnectionId:pcx-1');
    const { deps } = await started(routes);
    // The execution is stopped (the cleanup runs) right after SwapRoutes pointed the Tokyo route.
    routes.hook = {
      afterPoint: 1,
      run: async () => {
        await cleanupAfterExecution(deps, { runId: 'r1', status: 'ABORTED' });
      },
    };
    const e = await swapRoutes(deps, { runId: 'r1', pathId: 'B' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RouteSwapError);
    expect((e as Error).message).toMatch(/stopped/);
    expect(routes.table.get(TOKYO)).toBe('vpcPeeringConnectionId:pcx-1');
    expect(routes.table.has(OSAKA)).toBe(false);
    expect(routes.calls.filter((c) => c.includes('rtb-osaka'))).toEqual([]);
    expect(await deps.lock.current()).toBeUndefined();
  });

  it('the cleanup sweeps again after the task timeout and restores a route changed after its first sweep', async () => {
    const routes = new FakeRoutes();
    routes.table.set(TOKYO, 'vpcPeeringConnectionId:pcx-1');
    const { deps, store } = await started(routes);
    await deps.lock.current();
    let waited = 0;
    // While the cleanup waits, a SwapRoutes that passed its last check before the stop records
    // and makes one more change (Step Functions does not stop a running Lambda).
    deps.sleep = async (ms) => {
      waited += ms;
      await updateManifest(store, 'r1', (m) => {
        m.routeChanges.push({ ...osaka, original: 'none', current: 'transitGatewayId:tgw-3' });
      });
      await routes.point(osaka, 'transitGatewayId:tgw-3');
    };
    const stoppedAt = Date.now();
    const r = await cleanupAfterExecution(deps, {
      runId: 'r1',
      status: 'ABORTED',
      stoppedAt,
      lateSweepAfterMs: 130_000,
    });
    expect(waited).toBeGreaterThan(100_000);
    expect(routes.table.has(OSAKA)).toBe(false);
    expect(routes.table.get(TOKYO)).toBe('vpcPeeringConnectionId:pcx-1');
    expect(r.notes).toContain('late sweep restored 1 route(s) changed after the first sweep');
    // The lock was held through the late sweep and released after it.
    expect(r.released).toBe(true);
    expect(await deps.lock.current()).toBeUndefined();
    expect((await manifestOf(store, 'r1')).restore?.status).toBe('ok');
  });

  it('fails the cleanup (alarm) when a route is still swapped after it', async () => {
    // The peering connection was deleted during the run: the original cannot be put back.
    class Gone extends FakeRoutes {
      override async point(r: Omit<RouteEntry, 'via'>, t: string) {
        if (t === 'vpcPeeringConnectionId:pcx-1') throw new Error('InvalidVpcPeeringConnectionID.NotFound');
        await super.point(r, t);
      }
    }
    const routes = new Gone();
    routes.table.set(TOKYO, 'vpcPeeringConnectionId:pcx-1');
    const { deps, store } = await started(routes);
    await swapRoutes(deps, { runId: 'r1', pathId: 'B' });
    const e = await cleanupAfterExecution(deps, { runId: 'r1', status: 'TIMED_OUT' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RouteSwapError);
    expect((e as Error).message).toMatch(/rtb-tokyo 10\.1\.0\.0\/16: InvalidVpcPeeringConnectionID/);
    expect((await manifestOf(store, 'r1')).restore?.status).toBe('failed');
    // The other route is restored all the same, and the lock is released.
    expect(routes.table.has(OSAKA)).toBe(false);
    expect(await deps.lock.current()).toBeUndefined();
  });

  it('a blackholed original is put back and reported as restored, as it was (not as a failed restore)', async () => {
    // nat-dead's NAT gateway was deleted before the run: the route is a blackhole, never active.
    const routes = new FakeRoutes('natGatewayId:nat-0dead');
    routes.table.set(TOKYO, 'natGatewayId:nat-0dead');
    const { deps, store } = await started(routes);
    await swapRoutes(deps, { runId: 'r1', pathId: 'B' });
    expect(routes.table.get(TOKYO)).toBe('transitGatewayId:tgw-1');
    expect(await restoreRoutes(deps, { runId: 'r1' })).toEqual({ restored: 2 });
    expect(routes.table.get(TOKYO)).toBe('natGatewayId:nat-0dead');
    expect(routes.table.has(OSAKA)).toBe(false);
    const m = await manifestOf(store, 'r1');
    expect(m.restore?.status).toBe('ok');
    expect(m.restore?.errors).toEqual([]);
  });

  it('a 5xx or throttling during the restore is a RouteRestoreRetryableError (the ASL retries it); a refusal stays a RouteSwapError', async () => {
    const fails: unknown[] = [
      new EC2ServiceException({
        name: 'InternalError',
        $fault: 'server',
        $metadata: { httpStatusCode: 500 },
        message: 'An internal error has occurred',
      }),
      new EC2ServiceException({
        name: 'RequestLimitExceeded',
        $fault: 'client',
        $metadata: { httpStatusCode: 503 },
        message: 'Request limit exceeded.',
      }),
      new EC2ServiceException({
        name: 'UnauthorizedOperation',
        $fault: 'client',
        $metadata: { httpStatusCode: 403 },
        message: 'not authorized',
      }),
    ];
    const routes = new HookedRoutes();
    routes.table.set(TOKYO, 'vpcPeeringConnectionId:pcx-1');
    const { deps } = await started(routes);
    await swapRoutes(deps, { runId: 'r1', pathId: 'B' });
    const point = routes.point.bind(routes);
    let fail: unknown;
    routes.point = async (r, t) => {
      if (fail) throw fail;
      return point(r, t);
    };
    for (const [i, want] of [RouteRestoreRetryableError, RouteRestoreRetryableError, RouteSwapError].entries()) {
      fail = fails[i];
      const e = await restoreRoutes(deps, { runId: 'r1' }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(want);
      expect((e as Error).name).toBe(want.name);
    }
    fail = undefined;
    expect((await restoreRoutes(deps, { runId: 'r1' })).restored).toBe(1);
    expect(routes.table.get(TOKYO)).toBe('vpcPeeringConnectionId:pcx-1');
  });

  it('refuses to swap a path whose route is the VPC local route, before changing any route', async () => {
    const routes = new FakeRoutes();
    routes.table.set(TOKYO, 'vpcPeeringConnectionId:pcx-1');
    const { deps } = await started(routes);
    // ValidatePlan refuses it too (below); here the table changed after validation.
    routes.table.set(OSAKA, 'local');
    await expect(swapRoutes(deps, { runId: 'r1', pathId: 'B' })).rejects.toThrow(
      /ap-northeast-3 rtb-osaka 10\.0\.0\.0\/16 is the VPC's local route/,
    );
    expect(routes.calls).toEqual([]);
    expect(routes.table.get(TOKYO)).toBe('vpcPeeringConnectionId:pcx-1');
  });

  it('journals the original before the change: a crash right after ReplaceRoute still leaves a restorable record', async () => {
    const routes = new HookedRoutes();
    routes.table.set(TOKYO, 'vpcPeeringConnectionId:pcx-1');
    const { deps, store } = await started(routes);
    routes.hook = {
      afterPoint: 1,
      run: async () => {
        throw new Error('Lambda killed');
      },
    };
    await expect(swapRoutes(deps, { runId: 'r1', pathId: 'B' })).rejects.toThrow('Lambda killed');
    expect(await store.list(keys.routeJournalPrefix('r1'))).toHaveLength(1);
    await cleanupAfterExecution(deps, { runId: 'r1', status: 'ABORTED' });
    expect(routes.table.get(TOKYO)).toBe('vpcPeeringConnectionId:pcx-1');
  });
});

describe('who can change which route', () => {
  const allowTokyo = {
    region: 'ap-northeast-1',
    routeTableId: 'rtb-tokyo',
    destination: '10.1.0.0/16',
    targets: ['transitGatewayId:tgw-1'],
  };
  const allowOsaka = {
    region: 'ap-northeast-3',
    routeTableId: 'rtb-osaka',
    destination: '10.0.0.0/16',
    targets: ['transitGatewayId:tgw-3'],
  };

  async function deps(allowedRoutes?: (typeof allowTokyo)[]) {
    const s = await scenarioDeps({ routes: new FakeRoutes() });
    cleanups.push(async () => {
      s.query.close();
      await rm(s.dir, { recursive: true, force: true });
    });
    if (allowedRoutes) s.deps.allowedRoutes = allowedRoutes;
    return s;
  }

  it('ValidatePlan accepts the routes and targets the operator allowed', async () => {
    const { deps: d } = await deps([allowTokyo, allowOsaka]);
    await expect(validatePlanStep(d, { input: { plan: scenarioPlan() }, runId: 'ok' })).resolves.toMatchObject({
      runId: 'ok',
    });
  });

  it('ValidatePlan refuses a route or target outside the allow-list, names the field, writes nothing', async () => {
    const { deps: d, store } = await deps([{ ...allowTokyo, targets: ['transitGatewayId:tgw-other'] }]);
    const e = await validatePlanStep(d, { input: { plan: scenarioPlan() }, runId: 'no' }).catch((x: unknown) => x);
    expect(e).toMatchObject({ name: 'PlanInvalidError' });
    const problems = (e as { problems: string[] }).problems;
    expect(problems[0]).toMatch(
      /^paths\[1\]\.routes\[0\]: .*rtb-tokyo 10\.1\.0\.0\/16 may not point at transitGatewayId:tgw-1/,
    );
    expect(problems[1]).toMatch(
      /^paths\[1\]\.routes\[1\]: .*rtb-osaka 10\.0\.0\.0\/16 is not in the stack's allowedRoutes/,
    );
    expect(await store.list('runs/')).toEqual([]);
    expect(await d.lock.current()).toBeUndefined();
  });

  it('an empty allow-list (AWS without allowedRoutes) allows no route change at all, 0.0.0.0/0 included', async () => {
    const { deps: d } = await deps([]);
    const plan = scenarioPlan(['B']);
    (plan.paths[0] as { routes: { destination: string }[] }).routes[0].destination = '0.0.0.0/0';
    const e = await validatePlanStep(d, { input: { plan }, runId: 'none' }).catch((x: unknown) => x);
    expect((e as { problems: string[] }).problems[0]).toMatch(
      /0\.0\.0\.0\/0 is not in the stack's allowedRoutes \(none allowed\)/,
    );
  });

  it('ValidatePlan refuses a route that is the VPC local route, naming the field', async () => {
    const { deps: d } = await deps();
    (d.routes as FakeRoutes).table.set(OSAKA, 'local');
    const e = await validatePlanStep(d, { input: { plan: scenarioPlan() }, runId: 'loc' }).catch((x: unknown) => x);
    expect((e as { problems: string[] }).problems).toEqual([
      "paths[1].routes[1]: ap-northeast-3 rtb-osaka 10.0.0.0/16 is the VPC's local route; it cannot be replaced or restored",
    ]);
  });

  it('SwapRoutes checks the allow-list again before changing anything', async () => {
    const routes = new FakeRoutes();
    const { deps: d } = await started(routes);
    d.allowedRoutes = [allowTokyo];
    await expect(swapRoutes(d, { runId: 'r1', pathId: 'B' })).rejects.toThrow(
      /rtb-osaka 10\.0\.0\.0\/16 is not in the stack's allowedRoutes/,
    );
    expect(routes.calls).toEqual([]);
  });
});

describe('the cleanup outlives a still-running SwapRoutes', () => {
  it("has time for the late sweep: SwapRoutes' timeout + margin after the stop, then two sweeps", async () => {
    const { CLEANUP, CLEANUP_LATE_SWEEP_MARGIN_SECONDS, TASKS } = await import('../../../functions/wiring.js');
    const lateSweepAt = TASKS.SwapRoutes.timeoutSeconds + CLEANUP_LATE_SWEEP_MARGIN_SECONDS;
    // EventBridge delivery and both sweeps (a DescribeRouteTables and a ReplaceRoute per route) fit in a minute.
    expect(CLEANUP.timeoutSeconds).toBeGreaterThanOrEqual(lateSweepAt + 60);
  });
});
