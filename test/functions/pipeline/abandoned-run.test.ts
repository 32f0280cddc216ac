/**
 * cleanupAfterExecution with the real local store (a temp directory) and the real file lock;
 * only the route tables are faked. Each case is a state an execution can leave behind.
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { RouteSwapError } from '../../../core/errors.js';
import { keys } from '../../../core/keys.js';
import { type RunManifest, readManifest } from '../../../core/run-manifest.js';
import { cleanupAfterExecution } from '../../../functions/pipeline/abandoned-run.js';
import { beginPath } from '../../../functions/pipeline/path-begin.js';
import { prepareTaskProbe } from '../../../functions/pipeline/task-probe.js';
import { validatePlanStep } from '../../../functions/pipeline/validate.js';
import { FakeRoutes, type FakeRunner, scenarioDeps } from '../../helpers/fakes.js';

const TOKYO = 'ap-northeast-1|rtb-tokyo|10.1.0.0/16';
const OSAKA = 'ap-northeast-3|rtb-osaka|10.0.0.0/16';
const NOW = new Date('2026-11-30T01:00:00.000Z');

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function setup(routes = new FakeRoutes()) {
  const s = await scenarioDeps({ routes });
  s.deps.now = () => NOW;
  cleanups.push(async () => {
    s.query.close();
    await rm(s.dir, { recursive: true, force: true });
  });
  return { ...s, routes };
}

/** A manifest as SwapRoutes leaves it: path B running, Tokyo re-pointed, Osaka route created. */
function manifest(runId: string, swapped: boolean, status: RunManifest['status'] = 'running'): RunManifest {
  return {
    runId,
    planName: 'scenario',
    driver: 'local',
    status,
    startedAt: '2026-11-30T00:00:00.000Z',
    paths: [
      { id: 'A', label: 'A', status: 'succeeded', steps: [], probes: [], notes: [] },
      { id: 'B', label: 'B', status: swapped ? 'running' : 'failed', steps: [], probes: [], notes: [] },
      { id: 'C', label: 'C', status: 'pending', steps: [], probes: [], notes: [] },
    ],
    routeChanges: [
      {
        region: 'ap-northeast-1',
        routeTableId: 'rtb-tokyo',
        destination: '10.1.0.0/16',
        original: 'vpcPeeringConnectionId:pcx-1',
        current: swapped ? 'transitGatewayId:tgw-1' : 'vpcPeeringConnectionId:pcx-1',
      },
      {
        region: 'ap-northeast-3',
        routeTableId: 'rtb-osaka',
        destination: '10.0.0.0/16',
        original: 'none',
        current: swapped ? 'transitGatewayId:tgw-3' : 'none',
      },
    ],
  };
}

async function writeManifest(store: { put(k: string, b: string): Promise<void> }, m: RunManifest) {
  await store.put(keys.manifest(m.runId), `${JSON.stringify(m, null, 2)}\n`);
}

describe('cleanupAfterExecution', () => {
  it('restores routes an ABORTED run left swapped, marks it failed and releases its lock', async () => {
    // Prepare
    const { deps, store, routes } = await setup();
    routes.table.set(TOKYO, 'transitGatewayId:tgw-1');
    routes.table.set(OSAKA, 'transitGatewayId:tgw-3');
    await writeManifest(store, manifest('aborted', true));
    await deps.lock.acquire('aborted');
    // Act
    const r = await cleanupAfterExecution(deps, { runId: 'aborted', status: 'ABORTED' });
    // Assess
    expect(r).toMatchObject({ restored: 2, released: true });
    expect(r.notes).toEqual(['restored 2 route(s)', 'manifest marked failed (execution ABORTED)', 'lock released']);
    expect(routes.table.get(TOKYO)).toBe('vpcPeeringConnectionId:pcx-1');
    expect(routes.table.has(OSAKA)).toBe(false);
    // Last change undone first.
    expect(routes.calls).toEqual([`remove ${OSAKA}`, `point ${TOKYO} vpcPeeringConnectionId:pcx-1`]);
    const m = (await readManifest(store, 'aborted')) as RunManifest;
    expect(m.status).toBe('failed');
    expect(m.endedAt).toBe(NOW.toISOString());
    expect(m.notes).toEqual(['execution ABORTED']);
    expect(m.restore?.status).toBe('ok');
    expect(m.routeChanges.every((c) => c.current === c.original)).toBe(true);
    expect(m.paths.map((p) => p.status)).toEqual(['succeeded', 'failed', 'pending']);
    expect(m.paths[1].error).toBe('execution ABORTED while this path was running');
    expect(await deps.lock.current()).toBeUndefined();
  });

  it('leaves a lock held by another run untouched', async () => {
    const { deps, store, routes } = await setup();
    await writeManifest(store, manifest('timed-out', false));
    await deps.lock.acquire('next-run');
    const r = await cleanupAfterExecution(deps, { runId: 'timed-out', status: 'TIMED_OUT' });
    expect(r.released).toBe(false);
    expect(r.notes).toContain('lock not held by this run');
    expect((await deps.lock.current())?.runId).toBe('next-run');
    expect(routes.calls).toEqual([]);
    // Still marked: the execution died while the manifest said running.
    const m = (await readManifest(store, 'timed-out')) as RunManifest;
    expect(m.status).toBe('failed');
    expect(m.notes).toEqual(['execution TIMED_OUT']);
  });

  it('without a manifest only releases the lock and writes nothing', async () => {
    const { deps, store, routes } = await setup();
    await deps.lock.acquire('early');
    const r = await cleanupAfterExecution(deps, { runId: 'early', status: 'FAILED' });
    expect(r).toEqual({
      restored: 0,
      released: true,
      notes: ['no manifest: the run ended before ValidatePlan wrote one', 'lock released'],
    });
    expect(await deps.lock.current()).toBeUndefined();
    expect(await store.list('runs/')).toEqual([]);
    expect(routes.calls).toEqual([]);
  });

  it('ABORTED without a manifest marks the run stopped: a ValidatePlan still running takes no lock', async () => {
    const { deps, store } = await setup();
    const r = await cleanupAfterExecution(deps, { runId: 'early', status: 'ABORTED' });
    expect(r.notes[0]).toBe('no manifest: the run ended before ValidatePlan wrote one; marked stopped');
    expect(await store.getText(keys.runStopped('early'))).toContain('"ABORTED"');
  });

  it('is a no-op after a run that finished on its own (FAILED after RunFailed)', async () => {
    const { deps, store, routes } = await setup();
    routes.table.set(TOKYO, 'vpcPeeringConnectionId:pcx-1');
    const done: RunManifest = {
      ...manifest('finished', false, 'failed'),
      endedAt: '2026-11-30T00:30:00.000Z',
      restore: { status: 'ok', at: '2026-11-30T00:29:00.000Z', errors: [] },
    };
    await writeManifest(store, done);
    const before = await store.getText(keys.manifest('finished'));
    const r = await cleanupAfterExecution(deps, { runId: 'finished', status: 'FAILED' });
    expect(r).toEqual({
      restored: 0,
      released: false,
      notes: ['no route left to restore', 'lock not held by this run'],
    });
    expect(await store.getText(keys.manifest('finished'))).toBe(before);
    expect(routes.calls).toEqual([]);
    expect(await deps.lock.current()).toBeUndefined();
  });

  it('releases the lock even when a route cannot be restored, then fails with the restore error', async () => {
    // The original target never verifies as active.
    const { deps, store, routes } = await setup(new FakeRoutes('vpcPeeringConnectionId:pcx-1'));
    routes.table.set(TOKYO, 'transitGatewayId:tgw-1');
    routes.table.set(OSAKA, 'transitGatewayId:tgw-3');
    await writeManifest(store, manifest('stuck', true));
    await deps.lock.acquire('stuck');
    const e = await cleanupAfterExecution(deps, { runId: 'stuck', status: 'ABORTED' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RouteSwapError);
    expect((e as Error).message).toMatch(/could not restore 1 route\(s\): ap-northeast-1 rtb-tokyo/);
    expect(await deps.lock.current()).toBeUndefined();
    const m = (await readManifest(store, 'stuck')) as RunManifest;
    expect(m.status).toBe('failed');
    expect(m.restore?.status).toBe('failed');
    // The Osaka route was still removed: one failure does not stop the others.
    expect(routes.table.has(OSAKA)).toBe(false);
  });

  it('treats an execution name that is no run id as a run that never started', async () => {
    const { deps, routes } = await setup();
    await deps.lock.acquire('other');
    const r = await cleanupAfterExecution(deps, { runId: 'console run!', status: 'ABORTED' });
    expect(r.released).toBe(false);
    expect(r.notes[0]).toMatch(/is not a run id/);
    expect((await deps.lock.current())?.runId).toBe('other');
    expect(routes.calls).toEqual([]);
  });

  it('salvages the raw output a task client (kind ecs-task, no SSM command) uploaded before an ABORTED run, cancels nothing', async () => {
    // Prepare: the real pipeline steps up to the queue message, then the task's upload.
    const { deps, store } = await setup();
    deps.accountId = '123456789012';
    const plan = {
      name: 'task-abort',
      defaults: { reboot: false, creditWaitSeconds: 0, probes: [{ kind: 'tcp-connect', count: 10, intervalMs: 10 }] },
      paths: [
        {
          id: 'D',
          client: { kind: 'ecs-task', cluster: 'seed002', service: 'client', region: 'ap-northeast-1' },
          target: { host: '10.1.0.10', port: 7000 },
        },
      ],
    };
    await validatePlanStep(deps, { input: { plan }, runId: 'task-abort', startedAt: NOW.toISOString() });
    await beginPath(deps, { runId: 'task-abort', pathId: 'D' });
    const msg = await prepareTaskProbe(deps, { runId: 'task-abort', pathId: 'D' });
    expect(msg.queueUrl).toBe('https://sqs.ap-northeast-1.amazonaws.com/123456789012/pathbench-client-seed002-client');
    // What the task client uploads under its own prefix (the same files an agent writes).
    await (deps.runner as FakeRunner).send({
      ...msg.probe,
      client: { instanceId: 'client', region: 'ap-northeast-1' },
    } as never);
    const runner = deps.runner as FakeRunner;
    runner.sent.length = 0;
    // Act
    const r = await cleanupAfterExecution(deps, {
      runId: 'task-abort',
      status: 'ABORTED',
      startedAt: NOW.toISOString(),
    });
    // Assess
    expect(runner.cancelled).toEqual([]);
    expect(r.notes).toContain('path D: task client client stops its agent at its next refused heartbeat');
    expect(r.notes).toContain('path D: kept 10 sample(s) of its raw output');
    const m = (await readManifest(store, 'task-abort')) as RunManifest;
    expect(m.status).toBe('failed');
    expect(m.paths[0]).toMatchObject({ status: 'failed', clientKind: 'ecs-task' });
    expect(m.paths[0].probes.reduce((n, p) => n + p.samples, 0)).toBe(10);
    expect(await store.list('samples/path=D/run=task-abort/')).toHaveLength(1);
  });
});
