/**
 * A second start that reuses a running run's id, through the real ASL (ValidatePlan →
 * ReleaseLockAfterReject) and the execution cleanup: the first run keeps its lock, manifest
 * and routes, and a third run is still refused.
 */
import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, expect, it } from 'vitest';
import { keys } from '../../core/keys.js';
import { type RunManifest, readManifest } from '../../core/run-manifest.js';
import { cleanupAfterExecution } from '../../functions/pipeline/abandoned-run.js';
import type { ProbeCommand } from '../../functions/ports.js';
import { runStateMachine } from '../../local/asl-interpreter.js';
import { FakeRunner, noWaits, scenarioDeps, scenarioPlan } from '../helpers/fakes.js';

/** Holds the first SendProbe until `open()`: the run is mid-way, holding the lock. */
class GatedRunner extends FakeRunner {
  reached!: () => void;
  readonly atGate = new Promise<void>((r) => {
    this.reached = r;
  });
  open!: () => void;
  private readonly gate = new Promise<void>((r) => {
    this.open = r;
  });
  override async send(cmd: ProbeCommand) {
    this.reached();
    await this.gate;
    return super.send(cmd);
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

it('RunIdReusedWhileRunning: the refused start leaves the first run its lock; a third run is still refused', async () => {
  const s = await scenarioDeps();
  cleanups.push(async () => {
    s.query.close();
    await rm(s.dir, { recursive: true, force: true });
  });
  const runner = new GatedRunner(s.store);
  const deps = { ...s.deps, runner };
  const first = runStateMachine({
    deps,
    input: { plan: scenarioPlan(['A']) },
    runId: 'same',
    waitTimeOverrides: noWaits(),
  });
  await runner.atGate;
  const held = await deps.lock.current();
  expect(held).toMatchObject({ runId: 'same' });
  const manifest = await s.store.getText(keys.manifest('same'));
  expect(JSON.parse(manifest ?? '{}').startedAt).toBe(held?.startedAt);

  await sleep(5); // another start time
  const second = await runStateMachine({
    deps,
    input: { plan: scenarioPlan(['A']) },
    runId: 'same',
    waitTimeOverrides: noWaits(),
  });
  expect(second.status).toBe('FAILED');
  expect(second.error?.name).toBe('RunLockedError');
  expect(second.error?.message).toMatch(/choose another run id/);
  expect(await deps.lock.current()).toEqual(held);

  // The cleanup rule also fires for the refused execution (FAILED): it names it by start time.
  const secondStart = new Date(Date.parse(held?.startedAt ?? '') + 5_000).toISOString();
  const c = await cleanupAfterExecution(deps, { runId: 'same', status: 'FAILED', startedAt: secondStart });
  expect(c.released).toBe(false);
  expect(await deps.lock.current()).toEqual(held);
  expect(await s.store.getText(keys.manifest('same'))).toBe(manifest);

  const third = await runStateMachine({
    deps,
    input: { plan: scenarioPlan(['A']) },
    runId: 'third',
    waitTimeOverrides: noWaits(),
  });
  expect(third.status).toBe('FAILED');
  expect(third.error?.name).toBe('RunLockedError');
  expect(third.error?.message).toMatch(/run same/);

  runner.open();
  expect((await first).status).toBe('SUCCEEDED');
  expect(((await readManifest(s.store, 'same')) as RunManifest).status).toBe('succeeded');
  expect(await deps.lock.current()).toBeUndefined();
});
