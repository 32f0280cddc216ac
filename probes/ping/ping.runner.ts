/**
 * ping probe: `ping -n -D -O -c COUNT -i SECONDS -s SIZE -W SECONDS HOST` (iputils; argv, never a
 * shell). ping's own output is the raw file, byte for byte: `<probe>/1.txt`, stored gzip-compressed
 * (`1.txt.gz`, one line per request). -D puts the epoch time on every line, -O reports a request
 * still unanswered when the next one goes out, -n keeps DNS out of the run. The sidecar
 * `<probe>/1.meta.json` has argv, exit code, signal, wall-clock start/end, the probe's interval,
 * timeout and count (the parser needs them for lost requests and late replies) and a failure
 * reason. ping exits 1 when no reply came at all: that is a measurement (100 % loss: ICMP does not
 * cross an NLB or PrivateLink), not a failed probe. Exit 2 (unknown host, no route) is a failure.
 * The output streams to the file, so a million requests never sit in memory. At the hard
 * deadline (every request's interval and timeout, plus a margin) ping gets SIGINT, on which it
 * prints its statistics, then SIGKILL.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipInPlace } from '../run-kit/compress.js';
import { nicTrial, readNic } from '../run-kit/nic.js';
import { runTool } from '../run-kit/run-tool.js';
import type { ProbeContext, ProbeOutcome, ProbeRunner } from '../run-kit/runner-types.js';
import type { PingProbe } from './ping.schema.js';

/** Options the tests point elsewhere. */
export interface PingOptions {
  command: string;
  /** Added to the probe's own time before ping is interrupted. */
  marginMs: number;
}
export const PING_DEFAULTS: PingOptions = { command: 'ping', marginMs: 5000 };

/** ping's argv for a probe (seconds with decimals: iputils takes fractional -i and -W). */
export function pingArgs(probe: PingProbe, host: string): string[] {
  const seconds = (ms: number) => String(Math.round(ms) / 1000);
  return [
    '-n',
    '-D',
    '-O',
    '-c',
    String(probe.count),
    '-i',
    seconds(probe.intervalMs),
    '-s',
    String(probe.sizeBytes),
    '-W',
    seconds(probe.timeoutMs),
    host,
  ];
}

/** Map ping's stderr to a short reason for exit code 2. */
export function pingFailure(stderr: string): string {
  if (/unknown host|Name or service not known|Temporary failure in name resolution/i.test(stderr))
    return 'unknown-host';
  if (/Network is unreachable/i.test(stderr)) return 'network-unreachable';
  if (/Operation not permitted|cannot flood|minimal interval/i.test(stderr)) return 'not-permitted';
  return 'ping-error';
}

async function pingVersion(command: string): Promise<string | undefined> {
  const r = await runTool(command, ['-V'], { timeoutMs: 5000 });
  return /iputils[- ](\S+)/.exec(`${r.stdout}\n${r.stderr}`)?.[1];
}

interface Ran {
  exitCode: number | null;
  signal: string | null;
  interrupted: boolean;
  notFound: boolean;
  spawnError?: string;
  stderr: string;
  startedAtMs: number;
  endedAtMs: number;
}

/** Run ping with its stdout going straight to `out`; SIGINT at `deadlineMs`, SIGKILL 2 s later. */
function runToFile(command: string, args: string[], out: string, deadlineMs: number): Promise<Ran> {
  return new Promise((resolve) => {
    const fd = openSync(out, 'w');
    const startedAtMs = Date.now();
    const err: Buffer[] = [];
    let interrupted = false;
    let killer: NodeJS.Timeout | undefined;
    let settled = false;
    const child = spawn(command, args, { stdio: ['ignore', fd, 'pipe'] });
    const timer = setTimeout(() => {
      interrupted = true;
      child.kill('SIGINT');
      killer = setTimeout(() => child.kill('SIGKILL'), 2000);
    }, deadlineMs);
    const finish = (r: Partial<Ran>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (killer) clearTimeout(killer);
      closeSync(fd);
      resolve({
        exitCode: null,
        signal: null,
        interrupted,
        notFound: false,
        stderr: Buffer.concat(err).toString('utf8').slice(0, 4000),
        startedAtMs,
        endedAtMs: Date.now(),
        ...r,
      });
    };
    child.stderr?.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e: NodeJS.ErrnoException) => finish({ notFound: e.code === 'ENOENT', spawnError: e.message }));
    child.on('close', (code, signal) => finish({ exitCode: code, signal }));
  });
}

/** Runner with explicit options. */
export async function runPingWith(probe: PingProbe, ctx: ProbeContext, opt: PingOptions): Promise<ProbeOutcome> {
  const dir = path.join(ctx.outDir, probe.name);
  await mkdir(dir, { recursive: true });
  const raw = path.join(dir, '1.txt');
  const args = pingArgs(probe, ctx.target.host);
  const deadlineMs = probe.count * probe.intervalMs + probe.timeoutMs + opt.marginMs;
  const version = await pingVersion(opt.command);
  const nicBefore = await readNic(ctx.nic);
  const ran = await runToFile(opt.command, args, raw, deadlineMs);
  const nic = nicTrial(nicBefore, nicBefore ? await readNic(ctx.nic) : undefined);
  let reason: string | undefined;
  if (ran.notFound) reason = 'ping-not-installed';
  else if (ran.spawnError) reason = 'spawn-failed';
  else if (ran.exitCode === 2) reason = pingFailure(ran.stderr);
  else if (ran.exitCode !== 0 && ran.exitCode !== 1 && !ran.interrupted) reason = `exit-${ran.exitCode ?? ran.signal}`;
  const files: string[] = [];
  const size = await stat(raw).then(
    (s) => s.size,
    () => -1,
  );
  if (size >= 0) {
    try {
      await gzipInPlace(raw);
      files.push(`${probe.name}/1.txt.gz`);
    } catch (e) {
      ctx.log('ping: could not compress the output; keeping it plain', { error: (e as Error).message });
      files.push(`${probe.name}/1.txt`);
    }
  }
  const sidecar = {
    tool: 'ping',
    version,
    argv: [opt.command, ...args],
    exitCode: ran.exitCode,
    signal: ran.signal,
    interrupted: ran.interrupted,
    startedAtMs: ran.startedAtMs,
    endedAtMs: ran.endedAtMs,
    count: probe.count,
    intervalMs: probe.intervalMs,
    timeoutMs: probe.timeoutMs,
    sizeBytes: probe.sizeBytes,
    ...(ran.exitCode === 1 ? { note: 'no reply to any request' } : {}),
    ...(reason ? { reason } : {}),
    stderr: ran.stderr,
    ...nic,
  };
  await writeFile(path.join(dir, '1.meta.json'), `${JSON.stringify(sidecar, null, 2)}\n`);
  files.push(`${probe.name}/1.meta.json`);
  if (reason) ctx.log('ping failed', { probe: probe.name, reason, exitCode: ran.exitCode });
  return {
    status: reason ? 'failed' : 'ok',
    files,
    trials: 1,
    ...(reason ? { reason } : {}),
    ...(version ? { tools: { ping: `iputils ${version}` } } : {}),
  };
}

/** The ping probe runner (see module header). */
export const runPing: ProbeRunner<PingProbe> = (probe, ctx) => runPingWith(probe, ctx, PING_DEFAULTS);
