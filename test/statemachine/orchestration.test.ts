/**
 * Orchestration faults through the real ASL file (orchestration limits): Lambda
 * crashes retried where the task is idempotent, a start that fails for capacity, and the
 * client left stopped by it. Fakes stand in for the instance and the remote command only.
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunManifest, readManifest } from '../../core/run-manifest.js';
import type { ProbeCommand } from '../../functions/ports.js';
import { runStateMachine } from '../../local/asl-interpreter.js';
import type { DirStore } from '../../local/dir-store.js';
import { allEvents, type ExecutionEvent } from '../../local/local-execution.js';
import { FakeFleet, FakeRunner, noRetryWaits, noWaits, scenarioDeps, scenarioPlan } from '../helpers/fakes.js';

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

const entered = (events: ExecutionEvent[]) => events.filter((e) => e.type === 'StateEntered').map((e) => e.state?.name);

async function manifest(store: DirStore, runId: string): Promise<RunManifest> {
  return (await readManifest(store, runId)) as RunManifest;
}

/** An error as Step Functions names it when the Lambda service fails or the function dies. */
function lambdaError(name: 'Lambda.Unknown' | 'Lambda.InternalError'): Error {
  const e = new Error(`${name}: the function failed without a result`);
  e.name = name;
  return e;
}

/** Throws `error` on the `at`-th call (1-based) of `fn`, then behaves. */
function failOnce<A extends unknown[], R>(fn: (...a: A) => Promise<R>, at: number, error: () => Error) {
  let n = 0;
  return async (...a: A): Promise<R> => {
    n += 1;
    if (n === at) throw error();
    return fn(...a);
  };
}

/** SSM refuses a command for an instance that is not running (InvalidInstanceId). */
class InstanceBoundRunner extends FakeRunner {
  constructor(
    store: DirStore,
    private readonly fleet: FakeFleet,
  ) {
    super(store);
  }
  override async send(cmd: ProbeCommand) {
    if (this.fleet.state !== 'running') {
      const e = new Error(`Instances [[${cmd.client.instanceId}]] not in a valid state for account`);
      e.name = 'InvalidInstanceId';
      throw e;
    }
    return super.send(cmd);
  }
}

const run = (deps: Parameters<typeof runStateMachine>[0]['deps'], plan: unknown, runId: string) =>
  runStateMachine({
    deps,
    input: { plan },
    runId,
    waitTimeOverrides: noWaits(),
    retryIntervalOverrides: noRetryWaits(),
  });

describe('orchestration faults', () => {
  it('LambdaCrash: Lambda.Unknown / Lambda.InternalError in idempotent tasks are retried; the path succeeds', async () => {
    const fleet = new FakeFleet();
    const { deps, store } = await setup({ fleet });
    // BeginPath's describe is call 1; the first CheckStopped is call 2; CheckReady comes later.
    fleet.describe = failOnce(fleet.describe.bind(fleet), 2, () => lambdaError('Lambda.Unknown'));
    const runner = deps.runner as FakeRunner;
    runner.status = failOnce(runner.status.bind(runner), 1, () => lambdaError('Lambda.InternalError'));
    const list = store.list.bind(store);
    let collectFailed = false;
    store.list = async (prefix: string) => {
      if (!collectFailed && prefix.startsWith('raw/')) {
        collectFailed = true;
        throw lambdaError('Lambda.Unknown');
      }
      return list(prefix);
    };
    const r = await run(deps, scenarioPlan(['A']), 'crash-retried');
    expect(r.status).toBe('SUCCEEDED');
    expect(entered(allEvents(r))).not.toContain('RecordPathFailure');
    expect(collectFailed).toBe(true);
    const m = await manifest(store, 'crash-retried');
    expect(m.paths[0].status).toBe('succeeded');
    expect(await store.list('samples/path=A/run=crash-retried/')).toEqual([
      'samples/path=A/run=crash-retried/tcp-connect-1.jsonl',
    ]);
  });

  it('LambdaCrash: SendProbe is not retried after a crash (a second SendCommand could start a second agent)', async () => {
    const { deps, store } = await setup();
    const runner = deps.runner as FakeRunner;
    runner.send = failOnce(runner.send.bind(runner), 1, () => lambdaError('Lambda.Unknown'));
    const r = await run(deps, scenarioPlan(['A', 'C']), 'send-crash');
    expect(r.status).toBe('SUCCEEDED');
    const m = await manifest(store, 'send-crash');
    expect(m.paths[0]).toMatchObject({ status: 'failed', failedStep: 'SendProbe' });
    expect(m.paths[0].error).toMatch(/^Lambda\.Unknown: /);
    expect(m.paths[1].status).toBe('succeeded');
  });

  it('StartCapacity: a start refused for capacity is retried with backoff and the path is measured', async () => {
    const fleet = new FakeFleet({ startFailures: 2 });
    const { deps, store } = await setup({ fleet });
    const r = await run(deps, scenarioPlan(['A']), 'capacity-back');
    expect(r.status).toBe('SUCCEEDED');
    expect(fleet.calls.filter((c) => c.startsWith('start '))).toHaveLength(3);
    expect((await manifest(store, 'capacity-back')).paths[0].status).toBe('succeeded');
  });

  it('StartCapacity: after the retries fail, that path fails with the reason and a later reboot:false path starts the client', async () => {
    const fleet = new FakeFleet({ startFailures: 4 });
    const { deps, store } = await setup({ fleet });
    deps.runner = new InstanceBoundRunner(store, fleet);
    const base = scenarioPlan(['A', 'C']);
    const plan = { ...base, paths: [base.paths[0], { ...base.paths[1], reboot: false }] };
    const r = await run(deps, plan, 'capacity-gone');
    expect(r.status).toBe('SUCCEEDED');
    const m = await manifest(store, 'capacity-gone');
    const [a, c] = m.paths;
    expect(a).toMatchObject({ status: 'failed', failedStep: 'StartClient' });
    expect(a.error).toMatch(/^InstanceCapacityError: InsufficientInstanceCapacity/);
    // C asked for no reboot, found the client stopped, started it and was measured.
    expect(c.status).toBe('succeeded');
    expect(c.notes.join('\n')).toMatch(/was stopped when the path began .*started before probing/);
    expect(fleet.calls.filter((x) => x.startsWith('start '))).toHaveLength(5);
    expect(await store.list('samples/path=C/run=capacity-gone/')).toHaveLength(1);
  });

  it('a reboot:false path on a running client is not rebooted', async () => {
    const fleet = new FakeFleet();
    const { deps } = await setup({ fleet });
    const base = scenarioPlan(['A']);
    const plan = { ...base, defaults: { ...base.defaults, reboot: false } };
    const r = await run(deps, plan, 'no-reboot');
    expect(r.status).toBe('SUCCEEDED');
    expect(entered(allEvents(r))).not.toContain('StopClient');
    expect(fleet.calls.some((c) => c.startsWith('stop '))).toBe(false);
  });
});
