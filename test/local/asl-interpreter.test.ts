/**
 * local/asl-interpreter.ts options the fault suite relies on: the Lambda boundary (`invoke`), fake
 * retry back-off (`retryIntervalOverrides`) and StopExecution (`signal`).
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { runStateMachine } from '../../local/asl-interpreter.js';
import { noWaits, scenarioDeps, scenarioPlan } from '../helpers/fakes.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function setup() {
  const s = await scenarioDeps();
  cleanups.push(async () => {
    s.query.close();
    await rm(s.dir, { recursive: true, force: true });
  });
  return s;
}

describe('runStateMachine options', () => {
  it('invoke sees every Task call; a throttled invocation is retried by the ASL (its back-off overridden to 0)', async () => {
    const { deps } = await setup();
    const calls: string[] = [];
    let throttled = 0;
    const r = await runStateMachine({
      deps,
      input: { plan: scenarioPlan(['A']) },
      runId: 'invoke',
      waitTimeOverrides: noWaits(),
      retryIntervalOverrides: { BeginPath: 0 },
      invoke: async ({ state, run }) => {
        calls.push(state);
        if (state === 'BeginPath' && throttled++ < 2) {
          const e = new Error('Rate Exceeded.');
          e.name = 'Lambda.TooManyRequestsException';
          throw e;
        }
        return run();
      },
    });
    expect(r.status).toBe('SUCCEEDED');
    expect(calls.filter((s) => s === 'BeginPath')).toHaveLength(3);
    expect(calls[0]).toBe('ValidatePlan');
    expect(calls.at(-1)).toBe('ReleaseLock');
  });

  it('an aborted signal stops the execution: ABORTED, and nothing after the stop runs', async () => {
    const { deps } = await setup();
    const stop = new AbortController();
    const calls: string[] = [];
    let running: Promise<unknown> | undefined;
    const r = await runStateMachine({
      deps,
      input: { plan: scenarioPlan(['A']) },
      runId: 'stopped',
      waitTimeOverrides: noWaits(),
      signal: stop.signal,
      invoke: async ({ state, run }) => {
        calls.push(state);
        if (state !== 'BeginPath') return run();
        stop.abort();
        // the invoked Lambda runs to its end anyway
        running = run();
        return running;
      },
    });
    await running;
    expect(r.status).toBe('ABORTED');
    expect(calls).not.toContain('ReleaseLock');
  });
});
