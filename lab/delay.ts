/**
 * The paths' delays: tc netem on the delay namespace's egress when the kernel has it, else the
 * NFQUEUE delay helper (lab/native/nfq-delay.c) behind iptables rules, one per delay namespace.
 */

import { appliedLogPath } from './applied-delay.js';
import { buildHelper } from './build-helpers.js';
import type { LabBuilder } from './builder.js';
import { LabCommandError, LabInputError, LabUnavailableError } from './lab-errors.js';
import type { DelayMechanism } from './lab-state.js';
import { type LabPathDef, type LabProfile, type LabRole, queuesByRole } from './profiles/lab-profile.js';
import { isAlive, labCpu, run, tail, tryRun, waitFor } from './sys.js';
import { buildDelayRuleCommands } from './topology-commands.js';

async function hasNetem(ns: string): Promise<boolean> {
  const ok = await tryRun(['tc', '-n', ns, 'qdisc', 'add', 'dev', 'lo', 'root', 'netem', 'delay', '0ms']);
  if (ok) await tryRun(['tc', '-n', ns, 'qdisc', 'del', 'dev', 'lo', 'root']);
  return ok;
}

/** Interface on `role` facing `towards` (the egress a netem delay goes on). */
function egressIf(profile: LabProfile, role: LabRole, towards: LabRole): string | undefined {
  for (const l of profile.links) {
    if (l.a.role === role && l.b.role === towards) return l.a.ifname;
    if (l.b.role === role && l.a.role === towards) return l.b.ifname;
  }
  return undefined;
}

/** Where a path's delay sits for netem: the delay namespace's link towards the target side. */
function netemIf(profile: LabProfile, p: LabPathDef): string {
  const towards: LabRole = p.delayRole === 'router' ? p.targetRole : 'osaka';
  const ifname = egressIf(profile, p.delayRole, towards);
  if (!ifname) throw new LabInputError(`no link from ${p.delayRole} towards ${towards} for path ${p.id}`);
  return ifname;
}

/**
 * Pick the delay mechanism (netem when `want` allows and the kernel has it) and record it in
 * the state; for NFQUEUE build the helper and install the queue rules. Returns the helper's
 * path (undefined with netem), which applyDelays needs.
 */
export async function setUpDelayMechanism(b: LabBuilder, want: 'auto' | DelayMechanism): Promise<string | undefined> {
  const netem = want === 'nfqueue' ? false : await hasNetem(b.ns('router'));
  if (want === 'netem' && !netem) throw new LabUnavailableError('tc netem is not available in this kernel');
  b.state.delay.mechanism = netem ? 'netem' : 'nfqueue';
  if (netem) return undefined;
  const nfqBin = await buildHelper('nfq-delay');
  for (const cmd of buildDelayRuleCommands(b.prefix, b.profile)) await run(cmd);
  return nfqBin;
}

/**
 * The helper's argument for one path's queue: `QUEUE:ONE_WAY_US`, half the added round trip per
 * direction; for a mixed path (all of it on the way to the target) `QUEUE:D1,D2@SHARE[,D3@SHARE3]`,
 * where D2 (D3) adds the difference between that route's round trip and the path's.
 */
export function queueArg(p: LabPathDef, addedRttUs: number): string {
  const added = Math.max(0, addedRttUs);
  // Asymmetric: this queue holds the way to the target only (reverseQueueArg the way back).
  if (p.reverse) return `${p.queue}:${(added * (1 - p.reverse.share)).toFixed(1)}`;
  const more = p.mix ? [p.mix] : (p.routes ?? []);
  if (more.length === 0) return `${p.queue}:${(added / 2).toFixed(1)}`;
  // QUEUE:D1,D2@SHARE2[,D3@SHARE3]: each further route adds the difference of its round trip.
  const rest = more.map((r) => `${Math.max(0, added + (r.rttMs - p.rttMs) * 1000).toFixed(1)}@${r.share}`);
  return `${p.queue}:${added.toFixed(1)},${rest.join(',')}`;
}

/** An asymmetric path's way back: `REVERSE_QUEUE:US`, its share of the added round trip. */
export function reverseQueueArg(reverse: { queue: number; share: number }, addedRttUs: number): string {
  const { queue, share } = reverse;
  return `${queue}:${(Math.max(0, addedRttUs) * share).toFixed(1)}`;
}

/** Apply the current addedRttUs with the chosen mechanism (restarting helpers for NFQUEUE). */
export async function applyDelays(b: LabBuilder, nfqBin: string | undefined): Promise<void> {
  const added = b.state.delay.addedRttUs;
  if (b.state.delay.mechanism === 'netem') {
    const setBy = new Map<string, string>();
    for (const p of b.profile.paths) {
      const us = Math.max(0, Math.round(added[p.id] ?? 0));
      // netem holds one delay per interface: a path through another's (C-NLB behind C) gets that one's.
      const where = `${p.delayRole}/${netemIf(b.profile, p)}`;
      if (setBy.has(where)) {
        b.log(
          `path ${p.id}: netem holds one delay per interface; ${setBy.get(where)}'s applies (use the NFQUEUE helper)`,
        );
        continue;
      }
      setBy.set(where, p.id);
      // netem holds one delay per interface: a mixed path gets its first delay only.
      if (p.mix || p.routes?.length)
        b.log(`path ${p.id}: netem cannot mix delays; only ${us} µs applied (use the NFQUEUE helper)`);
      await run([
        'tc',
        '-n',
        b.ns(p.delayRole),
        'qdisc',
        'replace',
        'dev',
        netemIf(b.profile, p),
        'root',
        'netem',
        'delay',
        `${us}us`,
        'limit',
        '100000',
      ]);
    }
    return;
  }
  if (!nfqBin) throw new LabCommandError('nfq-delay helper is not built');
  for (const [role, queues] of queuesByRole(b.profile)) {
    // Half per direction: one-way delays stay symmetric like a real long link (queueArg), but
    // for an asymmetric path, whose way back has a queue of its own (reverseQueueArg).
    const args = queues.map((q) => {
      const back = b.profile.paths.find((x) => x.reverse?.queue === q);
      if (back?.reverse) return reverseQueueArg(back.reverse, added[back.id] ?? 0);
      const p = b.profile.paths.find((x) => x.queue === q)!;
      return queueArg(p, added[p.id] ?? 0);
    });
    const procRole = `delay-${role}`;
    await b.stopRole(procRole);
    // Every released packet's applied delay goes to the log (lab/applied-delay.ts reads it).
    const log = ['--log', appliedLogPath(b.dir, role)];
    const proc = b.spawn(procRole, b.ns(role), [nfqBin, '--cpu', String(labCpu()), ...log, ...args]);
    await waitFor(
      `nfq-delay in ${b.ns(role)}`,
      () => {
        if (!isAlive(proc)) throw new LabCommandError(`nfq-delay exited in ${b.ns(role)}: ${tail(proc.log)}`);
        return tail(proc.log).includes('nfq-delay: ready');
      },
      5000,
    );
  }
}
