/**
 * The lab's only contact with the machine: running commands, spawning tracked background
 * processes inside namespaces, checking and ending them by PID, and the crash-safe state file.
 */
import { spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { errorMessage } from '../core/errors.js';
import { checkDocument } from '../core/stored-document.js';
import { targetPortsSchema } from '../core/target-ports.js';
import type { InstanceState } from '../functions/ports.js';
import { runTool } from '../probes/run-kit/run-tool.js';
import { LabCommandError, LabStateError } from './lab-errors.js';
import { LAB_PROFILES, labCreditsSchema } from './profiles/lab-profile.js';
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

export const delayMechanismSchema = z.enum(['netem', 'nfqueue']);
export type DelayMechanism = z.output<typeof delayMechanismSchema>;

export const labTargetInfoSchema = z.object({
  id: z.string(),
  label: z.string(),
  host: z.string(),
  ns: z.string(),
  rttMs: z.number(),
  nextHop: z.enum(['peering', 'tgw']).optional(),
});
export type LabTargetInfo = z.output<typeof labTargetInfoSchema>;

/** The lab client's instance states (the Fleet port's InstanceState). */
const instanceStateSchema = z.enum([
  'pending',
  'running',
  'stopping',
  'stopped',
  'shutting-down',
  'terminated',
]) satisfies z.ZodType<InstanceState>;

export const clientTrackSchema = z.object({
  state: instanceStateSchema,
  /** When a transitional state (stopping/pending) completes. */
  until: z.string().optional(),
  since: z.string(),
  starts: z.number(),
});
export type ClientTrack = z.output<typeof clientTrackSchema>;

/** Everything `down` needs after a crash, and what `status`/the adapters read (`<state dir>/state.json`). */
export const labStateSchema = z.object({
  version: z.literal(1),
  prefix: z.string(),
  profile: z.enum(LAB_PROFILES),
  createdAt: z.string(),
  phase: z.enum(['building', 'up']),
  namespaces: z.array(z.string()),
  processes: z.array(labProcessSchema),
  delay: z.object({
    mechanism: delayMechanismSchema,
    /** Round trip added per path on top of the bare topology, µs. */
    addedRttUs: z.record(z.string(), z.number()),
    /** Clock the delays were calibrated with: the precise helper's kernel RTT, or the C fallback. */
    clock: z.enum(['kernel-tcpi_rtt', 'tcp-rtt-c']).optional(),
    /** Why the fallback clock is in use (absent with the precise helper). */
    note: z.string().optional(),
    /** Last calibration measurement per path: target and measured p50 (ms). */
    calibration: z.record(z.string(), z.object({ targetMs: z.number(), measuredMs: z.number() })).optional(),
  }),
  /** Router namespace → next-hop name → gateway address (what LabRoutes maps). */
  routers: z.record(z.string(), z.record(z.string(), z.string())),
  credits: labCreditsSchema,
  client: clientTrackSchema,
  clientNs: z.string(),
  /** Further namespaces the pipeline may use as clients (seed-004: every host); not rebootable. */
  extraClients: z.array(z.string()).optional(),
  targets: z.array(labTargetInfoSchema),
  /** The targets' ports (a lab brought up before the pingpong probe has no pingpong server). */
  ports: targetPortsSchema.partial({ pingpong: true }),
  server: z.enum(['agent', 'fallback']),
  /** Role → namespace name. */
  roles: z.record(z.string(), z.string()),
});
export type LabState = z.output<typeof labStateSchema>;

/** Default state directory: tmpfs, survives a crash of the CLI, gone with a reboot (like the namespaces). */
export function defaultStateDir(prefix: string): string {
  const base = process.env.PATHBENCH_LAB_STATE_DIR ?? join('/run', 'pathbench-lab');
  return join(base, prefix.replace(/-+$/, ''));
}

export function statePath(dir: string): string {
  return join(dir, 'state.json');
}

/**
 * The lab's state, or undefined when there is none (or a torn file that is not JSON). A state
 * that is JSON but not a lab state is a LabStateError naming the file and the first wrong field.
 */
export function readState(dir: string): LabState | undefined {
  const file = statePath(dir);
  if (!existsSync(file)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  try {
    return checkDocument(file, json, labStateSchema, 'lab state');
  } catch (e) {
    throw new LabStateError(`${errorMessage(e)} (\`pathbench lab down\` takes the lab down without it)`);
  }
}

/** Atomic write (tmp + rename) so a crash never leaves a torn state file. */
export function writeState(dir: string, state: LabState): void {
  mkdirSync(dir, { recursive: true });
  const tmp = `${statePath(dir)}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(tmp, statePath(dir));
}

export function removeState(dir: string): void {
  rmSync(statePath(dir), { force: true });
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
