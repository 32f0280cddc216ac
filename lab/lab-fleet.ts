/**
 * Fleet adapter for the local lab. "Rebooting" the client refills its burst credits: stop takes
 * the client's link down and marks it stopping → stopped; start brings it back, re-creates the
 * token bucket (full again) and marks it pending → running. The transitions take a small real
 * time so the state machine's poll loops are exercised, and live in the state file so any
 * process (CLI, runner, test) sees the same instance state.
 */

import type { ClientNetwork } from '../core/client-network.js';
import type { ClientRef } from '../core/resolved-plan.js';
import type { Fleet, InstanceInfo } from '../functions/ports.js';
import { resolveClient } from './client.js';
import { LabStateError } from './lab-errors.js';
import { type LabState, readState, writeState } from './lab-state.js';
import { type LabOptions, labLocation } from './location.js';
import { hostOf } from './profiles/lab-profile.js';
import { labProfile } from './profiles/profile-by-name.js';
import { listNamespaces, run, tryRun } from './sys.js';
import { tcRateBps } from './tc-rate.js';
import { buildCreditCommand } from './topology-commands.js';

/** What the lab client calls itself where EC2 has an instance type and an AZ id. */
const LAB_INSTANCE_TYPE = 'netns';
const LAB_AZ_ID = 'lab-az1';

/** The AZ id a lab namespace stands for: seed-004's are named by it ("pb-apne1-az2", "pb-apne1-az1-ref"). */
function labAzId(state: LabState, ns: string): string {
  const m = /^([a-z]{2,}[0-9]*-az[0-9]+)(-ref\d*)?$/.exec(ns.slice(state.prefix.length));
  return m ? m[1] : LAB_AZ_ID;
}

export interface LabFleetOptions extends LabOptions {
  /** How long stopping/pending last (ms); default 1500. */
  transitionMs?: number;
}

/** Transitions take ~1.5 s, so a one-second poll exercises the loop without slowing runs. */
export const LAB_POLL_SECONDS = 1;

export class LabFleet implements Fleet {
  readonly rebootable = true;
  readonly pollSeconds = LAB_POLL_SECONDS;
  private readonly transitionMs: number;

  constructor(private readonly opts: LabFleetOptions = {}) {
    this.transitionMs = opts.transitionMs ?? 1500;
  }

  private load(client: ClientRef, rebooting = false): { state: LabState; dir: string } {
    const { dir } = labLocation(this.opts);
    const state = readState(dir);
    if (!state) throw new LabStateError('the lab is not up (run `pathbench lab up`)');
    const extra = state.extraClients ?? [];
    if (client.instanceId !== state.clientNs && !extra.includes(client.instanceId)) {
      const known = [state.clientNs, ...extra].join(', ');
      throw new LabStateError(`unknown lab instance "${client.instanceId}" (the lab clients are ${known})`);
    }
    if (rebooting && client.instanceId !== state.clientNs)
      throw new LabStateError(
        `lab instance "${client.instanceId}" cannot be stopped or started (only "${state.clientNs}" can; set "reboot": false)`,
      );
    return { state, dir };
  }

  private until(): string {
    return new Date(Date.now() + this.transitionMs).toISOString();
  }

  async stop(client: ClientRef): Promise<void> {
    const { state, dir } = this.load(client, true);
    const now = resolveClient(state.client, new Date());
    if (now.state === 'stopped' || now.state === 'stopping') return;
    await run(['ip', '-n', state.clientNs, 'link', 'set', 'eth0', 'down']);
    state.client = { ...now, state: 'stopping', since: new Date().toISOString(), until: this.until() };
    writeState(dir, state);
  }

  async start(client: ClientRef): Promise<void> {
    const { state, dir } = this.load(client, true);
    const now = resolveClient(state.client, new Date());
    if (now.state === 'running' || now.state === 'pending') return;
    const ns = state.clientNs;
    await run(['ip', '-n', ns, 'link', 'set', 'eth0', 'up']);
    // Link down dropped the default route; the gateway is the router end of the client link.
    const profile = labProfile(state.profile);
    const link = profile.links.find((l) => l.a.role === profile.clientRole || l.b.role === profile.clientRole)!;
    const gw = hostOf((link.a.role === profile.clientRole ? link.b : link.a).addr);
    await run(['ip', '-n', ns, 'route', 'replace', 'default', 'via', gw]);
    // A fresh qdisc is a full bucket: that is the whole point of the reboot.
    await tryRun(['tc', '-n', ns, 'qdisc', 'del', 'dev', 'eth0', 'root']);
    await run(buildCreditCommand(state.prefix, state.credits, 'add', profile.clientRole));
    state.client = { state: 'pending', since: new Date().toISOString(), until: this.until(), starts: now.starts + 1 };
    writeState(dir, state);
  }

  async describe(client: ClientRef): Promise<InstanceInfo> {
    const { state } = this.load(client);
    // Only the main client is ever stopped; the other hosts (seed-004) are always running.
    const main = client.instanceId === state.clientNs;
    const now = main ? resolveClient(state.client, new Date()) : { state: 'running' as const };
    const exists = (await listNamespaces()).includes(client.instanceId);
    return {
      instanceId: client.instanceId,
      state: exists ? now.state : 'terminated',
      commandReady: exists && now.state === 'running',
      azId: labAzId(state, client.instanceId),
      instanceType: LAB_INSTANCE_TYPE,
      ...(exists ? {} : { stateReason: 'lab client namespace is gone' }),
    };
  }

  /**
   * The burst-credit token bucket the lab configured (lab state `credits`): its sustained `rate`
   * is the client's baseline, its `peakrate` the bandwidth while the bucket has tokens.
   */
  async network(client: ClientRef): Promise<ClientNetwork> {
    const { state } = this.load(client);
    return {
      instanceType: LAB_INSTANCE_TYPE,
      azId: labAzId(state, client.instanceId),
      baselineBps: tcRateBps(state.credits.rate),
      peakBps: tcRateBps(state.credits.peakrate),
    };
  }
}
