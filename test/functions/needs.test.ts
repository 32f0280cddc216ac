/** A task runs with the ports of its needs only, locally as on AWS. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import { restrictToNeeds } from '../../functions/needs.js';
import type { Deps } from '../../functions/ports.js';
import { LoopbackFleet, LoopbackRoutes } from '../../local/loopback.js';

function deps(): Deps {
  const unused = {} as never;
  const log = { info() {}, warn() {}, error() {} };
  return {
    store: { location: 'mem' } as Deps['store'],
    fleet: new LoopbackFleet(log),
    routes: new LoopbackRoutes(log),
    runner: { stopUploadGraceSeconds: 5, send: async () => ({ commandId: 'c' }) } as unknown as Deps['runner'],
    query: unused,
    lock: unused,
    plans: { get: async () => undefined },
    publisher: { publish: async () => {} },
    log,
    driver: 'local',
    now: () => new Date(0),
  };
}

describe('restrictToNeeds', () => {
  it('keeps the ports of the needs as they are and leaves the optional ports out', () => {
    const d = deps();
    const r = restrictToNeeds(d, 'SendProbe');
    expect(r.store).toBe(d.store);
    expect(r.runner).toBe(d.runner);
    expect(r.plans).toBeUndefined();
    expect(r.publisher).toBeUndefined();
    expect(restrictToNeeds(d, 'ValidatePlan').plans).toBe(d.plans);
    expect(restrictToNeeds(d, 'SummarizeRun').publisher).toBe(d.publisher);
  });

  it("reads a port's plain values through and refuses its methods, naming the task and its needs", async () => {
    const d = deps();
    const r = restrictToNeeds(d, 'PollProbe');
    expect(r.fleet.pollSeconds).toBe(d.fleet.pollSeconds);
    expect(r.fleet.rebootable).toBe(false);
    expect(() => r.fleet.stop({ region: 'local', instanceId: 'x' })).toThrow(ConfigError);
    expect(() => r.routes.read({ region: 'local', routeTableId: 'r', destination: '10.0.0.0/8' })).toThrow(
      'PollProbe has no routes port (routes.read): its needs in functions/wiring.ts are store:read, store:write, runner, runner:cancel, lock:read',
    );
    // Awaiting an absent port calls nothing.
    expect(await Promise.resolve(restrictToNeeds(d, 'EndTaskProbe').lock)).toBeDefined();
    const released = restrictToNeeds(d, 'ReleaseLock');
    expect(() => released.runner.send({} as never)).toThrow('ReleaseLock has no runner port (runner.send)');
    expect(released.runner.stopUploadGraceSeconds).toBe(5);
  });
});
