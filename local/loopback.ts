/**
 * Fleet and Routes for plain loopback runs: nothing to reboot, nothing to swap. They say so
 * (in the log and, through the pipeline, in the manifest) instead of pretending.
 */
import { routeKey } from '../core/keys.js';
import type { ClientRef, RouteEntry, RouteTarget } from '../core/resolved-plan.js';
import type { Fleet, InstanceInfo, Logger, Routes } from '../functions/ports.js';

/** Loopback clients change state at once: no wait between polls. */
export const LOOPBACK_POLL_SECONDS = 0;

export class LoopbackFleet implements Fleet {
  readonly rebootable = false;
  readonly pollSeconds = LOOPBACK_POLL_SECONDS;
  constructor(private readonly log: Logger) {}
  async stop(client: ClientRef): Promise<void> {
    this.log.info('nothing rebooted: loopback client has no instance', { instanceId: client.instanceId });
  }
  async start(_client: ClientRef): Promise<void> {}
  async describe(client: ClientRef): Promise<InstanceInfo> {
    return { instanceId: client.instanceId, state: 'running', commandReady: true };
  }
  /** No instance, no instance type: nothing to say about baseline or peak bandwidth. */
  async network(_client: ClientRef): Promise<undefined> {
    return undefined;
  }
}

/** Remembers what it was told so read/verify stay consistent, but changes no real route. */
export class LoopbackRoutes implements Routes {
  private readonly table = new Map<string, RouteTarget>();
  constructor(private readonly log: Logger) {}
  async read(r: Omit<RouteEntry, 'via'>): Promise<RouteTarget> {
    return this.table.get(routeKey(r)) ?? 'none';
  }
  async point(r: Omit<RouteEntry, 'via'>, target: RouteTarget): Promise<void> {
    this.log.info('route not swapped: the loopback driver has no route tables', { ...r, target });
    this.table.set(routeKey(r), target);
  }
  async verify(r: Omit<RouteEntry, 'via'>, target: RouteTarget): Promise<boolean> {
    return this.table.get(routeKey(r)) === target;
  }
  async remove(r: Omit<RouteEntry, 'via'>): Promise<void> {
    this.table.delete(routeKey(r));
  }
}
