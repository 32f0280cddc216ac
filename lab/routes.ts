/**
 * Routes adapter for the local lab: a "route table" is a lab router namespace (routeTableId =
 * namespace, e.g. "pb-router" for Tokyo, "pb-osaka" for the Osaka side) and a target is
 * "labNextHop:<name>", mapped to the next-hop address recorded in the lab's state file.
 */
import { RouteSwapError } from '../functions/core/errors.js';
import type { RouteEntry, RouteTarget } from '../functions/core/model.js';
import type { Routes } from '../functions/ports.js';
import { parseIpRoute, sameDestination } from './ip-route.js';
import { type LabOptions, labLocation } from './location.js';
import { readState, run } from './sys.js';

type RouteKey = Omit<RouteEntry, 'via'>;

const CIDR_RE = /^(\d{1,3}\.){3}\d{1,3}\/\d{1,2}$/;

/** Read a router namespace's route for `destination` as "labNextHop:<name>", "none", or "via:<ip>". */
export async function readLabRoute(
  ns: string,
  destination: string,
  hops: Record<string, string>,
): Promise<RouteTarget> {
  const routes = parseIpRoute(await run(['ip', '-n', ns, 'route', 'show', destination]));
  const r = routes.find((x) => sameDestination(x.destination, destination));
  if (!r) return 'none';
  if (r.type !== 'unicast') return r.type;
  const name = Object.entries(hops).find(([, ip]) => ip === r.via)?.[0];
  if (name) return `labNextHop:${name}`;
  return r.via ? `via:${r.via}` : `dev:${r.dev ?? '?'}`;
}

export class LabRoutes implements Routes {
  constructor(private readonly opts: LabOptions = {}) {}

  /** Next-hop name → gateway address for the route table (router namespace). */
  private hops(route: RouteKey): Record<string, string> {
    if (!CIDR_RE.test(route.destination))
      throw new RouteSwapError(`lab route destination "${route.destination}" is not an IPv4 CIDR`);
    const { dir } = labLocation(this.opts);
    const state = readState(dir);
    if (!state) throw new RouteSwapError('the lab is not up (run `pathbench lab up`)');
    const hops = state.routers[route.routeTableId];
    if (!hops) {
      throw new RouteSwapError(
        `lab route table "${route.routeTableId}" is not a lab router (known: ${Object.keys(state.routers).join(', ')})`,
      );
    }
    return hops;
  }

  private gateway(route: RouteKey, target: RouteTarget): string {
    const hops = this.hops(route);
    const [kind, name] = target.split(':', 2);
    if (kind !== 'labNextHop' || !name)
      throw new RouteSwapError(`lab routes take "labNextHop:<name>" targets, got "${target}"`);
    const ip = hops[name];
    if (!ip)
      throw new RouteSwapError(
        `unknown lab next hop "${name}" for ${route.routeTableId} (known: ${Object.keys(hops).join(', ')})`,
      );
    return ip;
  }

  async read(route: RouteKey): Promise<RouteTarget> {
    return readLabRoute(route.routeTableId, route.destination, this.hops(route));
  }

  async point(route: RouteKey, target: RouteTarget): Promise<void> {
    const via = this.gateway(route, target);
    try {
      await run(['ip', '-n', route.routeTableId, 'route', 'replace', route.destination, 'via', via]);
    } catch (e: unknown) {
      throw new RouteSwapError(`could not point ${route.destination} in ${route.routeTableId} at ${target}`, {
        cause: e,
      });
    }
  }

  async verify(route: RouteKey, target: RouteTarget): Promise<boolean> {
    if ((await this.read(route)) !== target) return false;
    // The kernel's own lookup must agree (catches a next hop whose link is down).
    const host = route.destination.split('/')[0].replace(/\.0$/, '.1');
    try {
      const out = await run(['ip', '-n', route.routeTableId, 'route', 'get', host]);
      return out.includes(`via ${this.gateway(route, target)} `);
    } catch {
      return false;
    }
  }

  async remove(route: RouteKey): Promise<void> {
    this.hops(route);
    if ((await this.read(route)) === 'none') return;
    await run(['ip', '-n', route.routeTableId, 'route', 'del', route.destination]);
  }
}
