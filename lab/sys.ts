/**
 * The lab's only contact with the machine: running commands, spawning tracked background
 * processes inside namespaces, checking and ending them by PID (the state file is lab-state.ts).
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { runTool } from '../probes/run-kit/run-tool.js';
import { LabCommandError } from './lab-errors.js';
import type { Argv } from './topology-commands.js';

/**
 * Run a command (the agent's bounded runner: no shell, own process group, killed at the
 * timeout); throws LabCommandError with the command and its stderr on failure.
 */
export async function run(argv: Argv, opts: { timeoutMs?: number } = {}): Promise<string> {
  const r = await runTool(argv[0], argv.slice(1), { timeoutMs: opts.timeoutMs ?? 30_000 });
  if (r.exitCode === 0 && !r.timedOut) return r.stdout;
  const why =
    r.spawnError ?? (r.timedOut ? 'timed out' : r.signal ? `killed by ${r.signal}` : `exit code ${r.exitCode}`);
  const detail = (r.stderr.trim() || why).split('\n')[0];
  throw new LabCommandError(`${argv.join(' ')}: ${detail}`, { cause: r });
}

/** Run a command and report success instead of throwing. */
export async function tryRun(argv: Argv, opts: { timeoutMs?: number } = {}): Promise<boolean> {
  try {
    await run(argv, opts);
    return true;
  } catch {
    return false;
  }
}

/** Names of existing network namespaces. */
export async function listNamespaces(): Promise<string[]> {
  const out = await run(['ip', 'netns', 'list']);
  return out
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0])
    .filter((n) => n.length > 0);
}

/** PIDs of processes whose network namespace is `ns` (they can only be there because we put them there). */
export async function namespacePids(ns: string): Promise<number[]> {
  try {
    const out = await run(['ip', 'netns', 'pids', ns]);
    return out
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => Number.isInteger(n) && n > 0);
  } catch {
    return [];
  }
}

export const labProcessSchema = z.object({
  role: z.string(),
  ns: z.string(),
  pid: z.number(),
  /** /proc/<pid>/stat start time (clock ticks since boot): guards against a reused PID. */
  startTime: z.number(),
  argv: z.array(z.string()),
  log: z.string(),
});
export type LabProcess = z.output<typeof labProcessSchema>;

/** Process start time from /proc, or undefined when the process is gone. */
export function procStartTime(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the ")" of the command name; starttime is field 22 overall.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const state = rest[0];
    if (state === 'Z' || state === 'X') return undefined;
    return Number(rest[19]);
  } catch {
    return undefined;
  }
}

/** True when the recorded process is still the one we started. */
export function isAlive(p: Pick<LabProcess, 'pid' | 'startTime'>): boolean {
  return procStartTime(p.pid) === p.startTime;
}

/**
 * Start `argv` inside namespace `ns` as a detached background process with output to `log`.
 * `ip netns exec` execs the command after entering the namespace, so the PID is the tool's own.
 */
export function spawnInNamespace(role: string, ns: string, argv: Argv, log: string): LabProcess {
  const fd = openSync(log, 'a');
  try {
    const child = spawn('ip', ['netns', 'exec', ns, ...argv], { detached: true, stdio: ['ignore', fd, fd] });
    child.on('error', () => {});
    child.unref();
    if (!child.pid) throw new LabCommandError(`could not start ${argv[0]} in ${ns}`);
    return { role, ns, pid: child.pid, startTime: procStartTime(child.pid) ?? 0, argv, log };
  } finally {
    closeSync(fd);
  }
}

/** SIGTERM, then SIGKILL after graceMs; only when the PID is still the recorded process. */
export async function stopProcess(p: Pick<LabProcess, 'pid' | 'startTime'>, graceMs = 2000): Promise<boolean> {
  if (!isAlive(p)) return false;
  try {
    process.kill(p.pid, 'SIGTERM');
  } catch {
    return false;
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isAlive(p)) return true;
    await sleep(25);
  }
  try {
    process.kill(p.pid, 'SIGKILL');
  } catch {
    // already gone
  }
  for (let i = 0; i < 40 && isAlive(p); i++) await sleep(25);
  return true;
}

/** Poll `check` every 50 ms until it holds; LabCommandError after timeoutMs. */
export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(50);
  }
  throw new LabCommandError(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** Whether something listens on `port` inside namespace `ns`. */
export async function listening(ns: string, port: number, proto: 'tcp' | 'udp' = 'tcp'): Promise<boolean> {
  try {
    const out = await run([
      'ip',
      'netns',
      'exec',
      ns,
      'ss',
      '-Hn',
      proto === 'tcp' ? '-tl' : '-ul',
      `sport = :${port}`,
    ]);
    return out.trim().length > 0;
  } catch {
    return false;
  }
}

/** The last 2000 characters of a log file ('' when unreadable). */
export function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').slice(-2000);
  } catch {
    return '';
  }
}

/**
 * The CPU the lab pins its delay helpers and its client to: the first CPU this process may
 * run on. Same CPU on purpose: on a VM a helper woken by an IPI on another, idle vCPU adds
 * ~0.18 ms per handshake, depending on where the scheduler happened to put it.
 */
export function labCpu(): number {
  try {
    const m = /^Cpus_allowed_list:\s*(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Modification time in ms, 0 when missing. */
export function mtimeMs(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}
