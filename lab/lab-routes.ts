/**
 * Routes adapter for the local lab: a "route table" is a lab router namespace (routeTableId =
 * namespace, e.g. "pb-router" for Tokyo, "pb-osaka" for the Osaka side) and a target is
 * "labNextHop:<name>", mapped to the next-hop address recorded in the lab's state file.
 *
 * Lab routes are shared by the host, so every change is journaled host-wide, next to the lab's
 * state file (`route-journal.json`): the original target and the process that changed it,
 * written before `ip route replace`, removed once the original is back. A run killed with
 * SIGKILL leaves its entries behind; `recoverLeftovers` (the next run, `pathbench lab up` and
 * `status`) puts those routes back before anything records an original.
 */

import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { errorMessage, RouteSwapError } from '../core/errors.js';
import type { RouteEntry, RouteTarget } from '../core/resolved-plan.js';
import { checkDocument } from '../core/stored-document.js';
import type { Routes } from '../functions/ports.js';
import { parseIpRoute, sameDestination } from './ip-route.js';
import { LabStateError } from './lab-errors.js';
import { readState } from './lab-state.js';
import { type LabOptions, labLocation } from './location.js';
import { isAlive, procStartTime, run } from './sys.js';

type RouteKey = Omit<RouteEntry, 'via'>;

const CIDR_RE = /^(\d{1,3}\.){3}\d{1,3}\/\d{1,2}$/;
const IP_RE = /^(\d{1,3}\.){3}\d{1,3}$/;
/** Non-unicast route types a lab route may have had (readLabRoute reports them by name). */
const TYPES = new Set(['blackhole', 'unreachable', 'prohibit', 'throw']);

/** One route a process changed: what it was before, and who changed it. */
export const labJournalEntrySchema = z.object({
  routeTableId: z.string(),
  destination: z.string(),
  original: z.string(),
  pid: z.number(),
  /** The changing process's start time (lab/sys.ts procStartTime); absent when it could not be read. */
  startTime: z.number().optional(),
  at: z.string(),
});
export type LabJournalEntry = z.output<typeof labJournalEntrySchema>;

export function journalPath(dir: string): string {
  return join(dir, 'route-journal.json');
}

/**
 * The host-wide journal of a lab (empty when none, or torn: not JSON). A journal that is JSON
 * but not a list of entries is a LabStateError naming the file and the first wrong field.
 */
export function readLabJournal(dir: string): LabJournalEntry[] {
  const file = journalPath(dir);
  if (!existsSync(file)) return [];
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return [];
  }
  try {
    return checkDocument(file, json, z.array(labJournalEntrySchema), 'lab route journal');
  } catch (e) {
    throw new LabStateError(errorMessage(e));
  }
}

/** Atomic (tmp + rename, fsync'd by writeFileSync's close on the same filesystem). */
function writeLabJournal(dir: string, entries: LabJournalEntry[]): void {
  mkdirSync(dir, { recursive: true });
  const tmp = `${journalPath(dir)}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(entries, null, 2)}\n`);
  renameSync(tmp, journalPath(dir));
}

const same = (e: { routeTableId: string; destination: string }, r: { routeTableId: string; destination: string }) =>
  e.routeTableId === r.routeTableId && e.destination === r.destination;

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

  /** `ip route replace` arguments that put `target` back (every form readLabRoute reports). */
  private routeArgs(route: RouteKey, target: RouteTarget): string[] {
    if (TYPES.has(target)) return [target, route.destination];
    if (target.startsWith('via:') && IP_RE.test(target.slice(4))) return [route.destination, 'via', target.slice(4)];
    if (target.startsWith('dev:') && /^[A-Za-z0-9._-]+$/.test(target.slice(4))) {
      return [route.destination, 'dev', target.slice(4)];
    }
    return [route.destination, 'via', this.gateway(route, target)];
  }

  async point(route: RouteKey, target: RouteTarget): Promise<void> {
    if (target === 'none') return this.remove(route);
    const args = this.routeArgs(route, target);
    const entry = this.journalBefore(route, await this.read(route));
    try {
      await run(['ip', '-n', route.routeTableId, 'route', 'replace', ...args]);
    } catch (e: unknown) {
      throw new RouteSwapError(`could not point ${route.destination} in ${route.routeTableId} at ${target}`, {
        cause: e,
      });
    }
    if (target === entry.original) this.journalDone(route);
  }

  /** Record the route's original (first change only) before changing it. */
  private journalBefore(route: RouteKey, current: RouteTarget): LabJournalEntry {
    const { dir } = labLocation(this.opts);
    const entries = readLabJournal(dir);
    const found = entries.find((e) => same(e, route));
    if (found) return found;
    const entry: LabJournalEntry = {
      routeTableId: route.routeTableId,
      destination: route.destination,
      original: current,
      pid: process.pid,
      startTime: procStartTime(process.pid),
      at: new Date().toISOString(),
    };
    writeLabJournal(dir, [...entries, entry]);
    return entry;
  }

  private journalDone(route: RouteKey): void {
    const { dir } = labLocation(this.opts);
    const entries = readLabJournal(dir);
    if (entries.some((e) => same(e, route)))
      writeLabJournal(
        dir,
        entries.filter((e) => !same(e, route)),
      );
  }

  /**
   * Put back every journaled route whose process is gone (a run killed with SIGKILL), before
   * anything reads an original; returns one line per route, for the caller to say so. Entries of
   * a live process (a run in progress) are left alone.
   */
  async recoverLeftovers(): Promise<string[]> {
    const { dir } = labLocation(this.opts);
    const said: string[] = [];
    // Without a lab its namespaces, and so its routes, are gone: nothing to put back.
    if (!readState(dir)) return said;
    for (const e of readLabJournal(dir)) {
      if (e.startTime !== undefined && isAlive({ pid: e.pid, startTime: e.startTime })) continue;
      const r = { region: 'lab', routeTableId: e.routeTableId, destination: e.destination };
      const now = await this.read(r).catch(() => undefined);
      if (now !== e.original) await this.point(r, e.original);
      this.journalDone(r);
      said.push(
        `${e.routeTableId} ${e.destination}: ${now === e.original ? 'already' : 'put back'} via ${e.original} (left by process ${e.pid}, which is gone)`,
      );
    }
    return said;
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
    const current = await this.read(route);
    if (current === 'none') {
      if (readLabJournal(labLocation(this.opts).dir).find((e) => same(e, route))?.original === 'none') {
        this.journalDone(route);
      }
      return;
    }
    const entry = this.journalBefore(route, current);
    await run(['ip', '-n', route.routeTableId, 'route', 'del', route.destination]);
    if (entry.original === 'none') this.journalDone(route);
  }
}
