/**
 * mtu probe: path-MTU by binary search with don't-fragment pings,
 * `ping -M do -s PAYLOAD -c 1 -W SECONDS -4|-6 HOST` (payload = MTU − 28 for IPv4, − 48 for IPv6).
 * ping prints text, so the raw file `<probe>/1.json` is pathbench's own record of every attempt
 * (argv, exit code, stdout/stderr excerpts, what it meant) and the result:
 * `{ status: "ok", mtu } | { status: "icmp-blocked" } | { status: "failed", reason }`.
 *
 * Why each rule:
 * - The smallest size is tried first: if even that gets no reply, ICMP does not cross the path
 *   (an NLB / PrivateLink drops it, seed 000) and the answer is `icmp-blocked`, never a number.
 * - "local error: message too long, mtu=N" (our own interface, or a cached PMTU after
 *   "Frag needed") is an answer, not a block: the size is too big and nothing above N fits, so
 *   the search jumps to N.
 * - A size with no reply is asked twice before it counts as too big: one lost packet must not
 *   shrink the reported MTU.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { runTool } from '../run-kit/run-tool.js';
import type { ProbeOutcome, ProbeRunner } from '../run-kit/runner-types.js';
import type { MtuProbe } from './mtu.schema.js';

export type MtuResult =
  | { status: 'ok'; mtu: number }
  | { status: 'icmp-blocked' }
  | { status: 'failed'; reason: string };

interface Attempt {
  mtu: number;
  payload: number;
  try: number;
  outcome: 'reply' | 'too-big' | 'no-reply' | 'not-installed';
  localMtu?: number;
  exitCode: number | null;
  t_start: number;
  t_end: number;
  stdout: string;
  stderr: string;
}

function cut(s: string, n = 600): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

/** Classify one ping's output: a reply, a local "message too long" (with the MTU it names), or silence. */
export function classifyPing(
  stdout: string,
  stderr: string,
  exitCode: number | null,
): { outcome: 'reply' | 'too-big' | 'no-reply'; localMtu?: number } {
  const text = `${stdout}\n${stderr}`;
  const m = /message too long, mtu\s*=\s*(\d+)/i.exec(text) ?? /frag needed and DF set \(mtu\s*=\s*(\d+)\)/i.exec(text);
  if (m) return { outcome: 'too-big', localMtu: Number(m[1]) };
  if (exitCode === 0 && /bytes from/.test(stdout)) return { outcome: 'reply' };
  return { outcome: 'no-reply' };
}

/** Options the tests shorten or point elsewhere. */
export interface MtuOptions {
  command: string;
  /** Asks per size before "no reply" counts. */
  triesPerSize: number;
}

export const MTU_DEFAULTS: MtuOptions = { command: 'ping', triesPerSize: 2 };

/** Runner with explicit options. */
export async function runMtuWith(
  probe: MtuProbe,
  ctx: { target: { host: string }; outDir: string; log: (m: string, d?: Record<string, unknown>) => void },
  opt: MtuOptions,
): Promise<ProbeOutcome> {
  const dir = path.join(ctx.outDir, probe.name);
  await mkdir(dir, { recursive: true });
  const host = ctx.target.host;
  const v6 = net.isIPv6(host);
  const headerBytes = v6 ? 48 : 28;
  const attempts: Attempt[] = [];
  const startedAtMs = Date.now();
  let missing = false;

  const ask = async (mtu: number): Promise<Attempt> => {
    let last: Attempt | undefined;
    for (let t = 1; t <= opt.triesPerSize; t++) {
      const payload = mtu - headerBytes;
      const args = [
        '-M',
        'do',
        '-s',
        String(payload),
        '-c',
        '1',
        '-W',
        String(probe.timeoutMs / 1000),
        v6 ? '-6' : '-4',
        host,
      ];
      const r = await runTool(opt.command, args, { timeoutMs: probe.timeoutMs + 5000 });
      const base = {
        mtu,
        payload,
        try: t,
        exitCode: r.exitCode,
        t_start: r.startedAtMs,
        t_end: r.endedAtMs,
        stdout: cut(r.stdout),
        stderr: cut(r.stderr),
      };
      if (r.notFound) {
        missing = true;
        last = { ...base, outcome: 'not-installed' };
        attempts.push(last);
        return last;
      }
      last = { ...base, ...classifyPing(r.stdout, r.stderr, r.exitCode) };
      attempts.push(last);
      if (last.outcome !== 'no-reply') return last;
    }
    return last!;
  };

  let result: MtuResult;
  const first = await ask(probe.min);
  if (missing) result = { status: 'failed', reason: 'ping-not-installed' };
  else if (first.outcome === 'no-reply') result = { status: 'icmp-blocked' };
  else if (first.outcome === 'too-big') {
    // Even the smallest size does not fit our own interface: that MTU is the answer.
    result = first.localMtu ? { status: 'ok', mtu: first.localMtu } : { status: 'failed', reason: 'min-too-big' };
  } else {
    let lo = probe.min; // known to fit
    let hi = probe.max + 1; // known not to fit
    let hint: number | undefined;
    const top = await ask(probe.max);
    if (top.outcome === 'reply') lo = probe.max;
    else {
      hi = probe.max;
      if (top.localMtu && top.localMtu + 1 < hi) {
        hi = Math.max(lo + 1, top.localMtu + 1);
        hint = top.localMtu;
      }
    }
    while (hi - lo > 1 && !missing) {
      // A named local MTU inside the range is the likeliest answer: try it first.
      const mid = hint !== undefined && hint > lo && hint < hi ? hint : Math.floor((lo + hi) / 2);
      hint = undefined;
      const a = await ask(mid);
      if (a.outcome === 'reply') lo = mid;
      else {
        hi = mid;
        if (a.localMtu && a.localMtu + 1 < hi) {
          hi = Math.max(lo + 1, a.localMtu + 1);
          hint = a.localMtu;
        }
      }
    }
    result = missing ? { status: 'failed', reason: 'ping-not-installed' } : { status: 'ok', mtu: lo };
  }
  const raw = {
    tool: 'ping',
    target: host,
    family: v6 ? 'ipv6' : 'ipv4',
    headerBytes,
    min: probe.min,
    max: probe.max,
    timeoutMs: probe.timeoutMs,
    startedAtMs,
    endedAtMs: Date.now(),
    attempts,
    result,
  };
  await writeFile(path.join(dir, '1.json'), `${JSON.stringify(raw, null, 2)}\n`);
  ctx.log('mtu result', { probe: probe.name, ...result, attempts: attempts.length });
  const reason = result.status === 'ok' ? undefined : result.status === 'icmp-blocked' ? 'icmp-blocked' : result.reason;
  return {
    status: reason ? 'failed' : 'ok',
    files: [`${probe.name}/1.json`],
    trials: 1,
    ...(reason ? { reason } : {}),
  };
}

/** The mtu probe runner (see module header). */
export const runMtu: ProbeRunner<MtuProbe> = (probe, ctx) => runMtuWith(probe, ctx, MTU_DEFAULTS);
