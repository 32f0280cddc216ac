/**
 * A probe command stopped by SIGTERM (execution timeout, cancel): the SSM document uploads what
 * exists and an interrupted.json naming the trial in progress; the manifest says so.
 */
import { rm } from 'node:fs/promises';
import { afterEach, expect, it } from 'vitest';
import { type RunManifest, readManifest } from '../../../core/run-manifest.js';
import type { ProbeCommand } from '../../../functions/ports.js';
import { runStateMachine } from '../../../local/asl-interpreter.js';
import type { DirStore } from '../../../local/dir-store.js';
import { FakeRunner, noWaits, scenarioDeps, scenarioPlan } from '../../helpers/fakes.js';

class StoppedRunner extends FakeRunner {
  constructor(
    private readonly data: DirStore,
    behaviour: ConstructorParameters<typeof FakeRunner>[1],
  ) {
    super(data, behaviour);
  }
  override async send(cmd: ProbeCommand) {
    const out = await super.send(cmd);
    await this.data.put(
      `${cmd.rawPrefix}interrupted.json`,
      '{"signal":"TERM","at":"2026-12-01T00:00:00Z","incomplete":["tcp/1.jsonl"]}\n',
    );
    return out;
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

it('StoppedProbe: the samples uploaded before the stop are kept and the manifest names the incomplete trial', async () => {
  const s = await scenarioDeps();
  cleanups.push(async () => {
    s.query.close();
    await rm(s.dir, { recursive: true, force: true });
  });
  const deps = { ...s.deps, runner: new StoppedRunner(s.store, { A: 'crash' }) };
  const r = await runStateMachine({
    deps,
    input: { plan: scenarioPlan(['A']) },
    runId: 'stop',
    waitTimeOverrides: noWaits(),
  });
  expect(r.status).toBe('SUCCEEDED');
  const m = (await readManifest(s.store, 'stop')) as RunManifest;
  const a = m.paths[0];
  expect(a.status).toBe('failed');
  expect(a.probes[0].samples).toBe(3);
  expect(a.notes).toContain(
    'the probe command was stopped (TERM at 2026-12-01T00:00:00Z): trial in progress incomplete: tcp/1.jsonl',
  );
});
