/**
 * CommandRunner as a child process running the same agent bundle the SSM document runs on AWS
 * (dist/agent.cjs). In the lab the argv is wrapped to run inside the client namespace. When the
 * child ends, every file it wrote is copied into the store under the raw prefix — the local
 * equivalent of the document's `aws s3 cp --recursive` — even after a failure or timeout. A
 * command reads as ended (Success, Failed, TimedOut, Cancelled) only once that copy is done.
 *
 * The agent holds its stdin from this process (`--with-parent`) and ends with its tools when this
 * process is gone. Each agent is recorded in the state directory (`<data>/.agents/`: process,
 * output directory, raw prefix) until its output is stored, so after a kill -9 of this process
 * the next run ends whatever of it still runs and stores what it measured (`recoverOrphans`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { z } from 'zod';
import { errorMessage, RunAbortedError } from '../core/errors.js';
import { setLongTimeout } from '../core/long-timer.js';
import type { ClientRef } from '../core/resolved-plan.js';
import { parseDocument } from '../core/stored-document.js';
import type { CommandInvocation, CommandRunner, Logger, ObjectStore, ProbeCommand } from '../functions/ports.js';

/** Environment variable every agent (and each tool it starts) carries: its command id. */
const MARKER = 'PATHBENCH_AGENT_COMMAND';

/** `<stateDir>/<commandId>.json`: an agent whose output is not stored yet. */
const agentRecordSchema = z.object({
  commandId: z.string().regex(/^[A-Za-z0-9._-]+$/),
  runId: z.string(),
  pathId: z.string(),
  rawPrefix: z.string(),
  /** The agent's process id, which is also its process group's (it is started detached). */
  pid: z.number().int().positive(),
  /** The temporary directory holding the spec and the output directory. */
  work: z.string(),
  outDir: z.string(),
  /** The process that started it. */
  owner: z.object({ pid: z.number().int(), host: z.string() }),
  startedAt: z.string(),
});
type AgentRecord = z.output<typeof agentRecordSchema>;

/** Commands whose agent a runner of this process still watches (not yet exited and stored). */
const watching = new Set<string>();

/** What `recoverOrphans` collected of one agent. */
export interface RecoveredAgent {
  runId: string;
  pathId: string;
  commandId: string;
  /** The agent (or a tool it started) was still running and was killed. */
  killed: boolean;
  /** Raw files stored from its output directory. */
  files: number;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Live processes that carry `MARKER=commandId` in their environment (Linux /proc). */
function markedProcesses(commandId: string): number[] {
  const want = `${MARKER}=${commandId}`;
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/environ`, 'latin1').split('\0').includes(want)) out.push(Number(e));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

export interface LocalCommandRunnerOptions {
  agentPath: string;
  store: ObjectStore;
  log: Logger;
  /** Rewrites the argv (e.g. `ip netns exec pb-client …`); identity when absent. */
  wrap?: (argv: string[], client: ClientRef) => string[];
  /** Receives the agent's progress lines (stderr). */
  onAgentLine?: (line: string, cmd: ProbeCommand) => void;
  /** Where each running agent is recorded until its output is stored (`<data>/.agents`); none when absent. */
  stateDir?: string;
}

interface Running {
  child: ChildProcess;
  pathId: string;
  outDir: string;
  /** Line-per-sample raw files (.jsonl) read so far: file → [bytes read, newlines seen]. */
  counted: Map<string, [number, number]>;
  /** The count once the agent has exited (its directory is gone after the upload). */
  finalSamples?: number;
  /**
   * What callers see. It stays InProgress until the child has exited AND its files are in the
   * store: a command that read as ended while its copy was still running let CollectOutput read
   * only part of the killed agent's output (the rest was stored after the collect, uncounted).
   */
  status: CommandInvocation['status'];
  detail?: string;
  /** Why the child is being ended (timeout, cancel): applied once its output is stored. */
  ending?: { status: 'TimedOut' | 'Cancelled'; detail: string };
  done: Promise<void>;
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const f = join(d, e.name);
      if (e.isDirectory()) await walk(f);
      else out.push(f);
    }
  };
  await walk(dir);
  return out.sort();
}

export class LocalCommandRunner implements CommandRunner {
  private readonly commands = new Map<string, Running>();
  /** run/path → the command sent for it. */
  private readonly byPath = new Map<string, string>();
  private seq = 0;
  private aborted = false;
  constructor(private readonly opts: LocalCommandRunnerOptions) {}

  async send(cmd: ProbeCommand): Promise<{ commandId: string }> {
    if (this.aborted) throw new RunAbortedError('the run was interrupted: no further probe is started');
    // A SendProbe retried after its first attempt sent (and failed before recording it) resumes
    // that agent: a second one would write the same raw keys.
    const already = this.byPath.get(`${cmd.runId}/${cmd.pathId}`);
    if (already) {
      this.opts.log.warn('probe already sent for this run and path: resuming it', { commandId: already });
      return { commandId: already };
    }
    const commandId = `local-${cmd.runId}-${cmd.pathId}-${++this.seq}`;
    const work = await mkdtemp(join(tmpdir(), 'pathbench-agent-'));
    const specText = await this.opts.store.getText(cmd.specKey);
    if (specText === undefined) throw new Error(`spec ${cmd.specKey} not found`);
    const specFile = join(work, 'spec.json');
    const outDir = join(work, 'out');
    await writeFile(specFile, specText);
    const base = [process.execPath, this.opts.agentPath, 'run', '--spec', specFile, '--out', outDir, '--with-parent'];
    const argv = this.opts.wrap ? this.opts.wrap(base, cmd.client) : base;
    // stdin stays open for the agent's life: its end tells the agent this process is gone.
    const child = spawn(argv[0], argv.slice(1), {
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
      env: { ...process.env, [MARKER]: commandId },
    });
    child.stdin?.on('error', () => undefined);
    // Listen before the first await below: an agent that ends at once (it cannot start, a wrapper
    // that fails) would otherwise close before anyone hears it, and its command never end.
    let startError: Error | undefined;
    child.on('error', (e) => {
      startError ??= e;
    });
    const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
      child.once('close', (code, signal) => res({ code, signal })),
    );
    watching.add(commandId);
    const record: AgentRecord | undefined =
      this.opts.stateDir && child.pid
        ? {
            commandId,
            runId: cmd.runId,
            pathId: cmd.pathId,
            rawPrefix: cmd.rawPrefix,
            pid: child.pid,
            work,
            outDir,
            owner: { pid: process.pid, host: hostname() },
            startedAt: new Date().toISOString(),
          }
        : undefined;
    if (record) {
      try {
        await this.writeRecord(record);
      } catch (e) {
        // Unrecorded, a kill -9 of this process would lose its output: do not measure at all.
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
        await rm(work, { recursive: true, force: true });
        throw new Error(`could not record the agent in ${this.opts.stateDir}: ${errorMessage(e)}`);
      }
    }
    const running: Running = {
      child,
      pathId: cmd.pathId,
      outDir,
      counted: new Map(),
      status: 'InProgress',
      done: Promise.resolve(),
    };
    let tail = '';
    let partial = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      tail = (tail + chunk).slice(-2000);
      partial += chunk;
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) if (l.trim()) this.opts.onAgentLine?.(l, cmd);
    });
    child.stdout?.resume();
    // A plan's deadline can exceed what setTimeout holds (2^31-1 ms); the long timer does not fire early.
    const timer = setLongTimeout(() => {
      running.ending ??= { status: 'TimedOut', detail: `killed after ${cmd.timeoutSeconds}s` };
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }, cmd.timeoutSeconds * 1000);
    running.done = new Promise<void>((resolve) => {
      const failedToStart = (e: Error) => {
        running.status = 'Failed';
        running.detail = `could not start the agent: ${e.message}`;
      };
      if (startError) failedToStart(startError);
      child.on('error', failedToStart);
      void closed.then(async ({ code, signal }) => {
        timer.clear();
        running.finalSamples = await this.countSamples(running);
        try {
          await this.upload(outDir, cmd.rawPrefix);
          await rm(work, { recursive: true, force: true });
          if (record) await rm(this.recordFile(commandId), { force: true });
        } catch (e) {
          // Keep the agent's only copy, and its record: the next run stores it (recoverOrphans).
          running.status = 'Failed';
          running.detail = `could not store raw output (${(e as Error).message}); it is kept in ${outDir}${
            record ? ' and the next run on this data directory stores it' : ''
          }`;
        }
        watching.delete(commandId);
        if (running.status === 'InProgress') {
          if (running.ending) {
            running.status = running.ending.status;
            running.detail = running.ending.detail;
          } else if (code === 0) running.status = 'Success';
          else {
            running.status = 'Failed';
            running.detail = `agent exited ${code ?? signal}: ${tail.trim().split('\n').slice(-3).join(' | ')}`;
          }
        }
        resolve();
      });
    });
    this.commands.set(commandId, running);
    this.byPath.set(`${cmd.runId}/${cmd.pathId}`, commandId);
    this.opts.log.info('agent started', { commandId, pid: child.pid, pathId: cmd.pathId });
    return { commandId };
  }

  private recordFile(commandId: string): string {
    return join(this.opts.stateDir ?? '', `${commandId}.json`);
  }

  private async writeRecord(r: AgentRecord): Promise<void> {
    const dir = this.opts.stateDir ?? '';
    await mkdir(dir, { recursive: true });
    const tmp = join(dir, `.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`);
    try {
      await writeFile(tmp, `${JSON.stringify(r)}\n`);
      await rename(tmp, this.recordFile(r.commandId));
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
  }

  /**
   * Agents recorded by a process that is gone (kill -9, a crash, a full disk that kept their
   * output from being stored), or — with `runId` — by a run found abandoned: end what of them
   * still runs (every process carrying the agent's mark: the agent and the tools it started),
   * store their output under the raw prefix (never over a file already there), then remove their
   * temporary directory and record. An agent of a live process, or one this runner still
   * watches, is left alone. Returns what was collected, for the caller to salvage into the path.
   */
  async recoverOrphans(runId?: string): Promise<RecoveredAgent[]> {
    const dir = this.opts.stateDir;
    if (!dir) return [];
    let names: string[];
    try {
      names = (await readdir(dir)).filter((n) => n.endsWith('.json') && !n.startsWith('.'));
    } catch {
      return [];
    }
    const out: RecoveredAgent[] = [];
    for (const name of names.sort()) {
      const file = join(dir, name);
      let r: AgentRecord;
      try {
        r = parseDocument(file, await readFile(file, 'utf8'), agentRecordSchema, 'agent record');
      } catch (e) {
        this.opts.log.warn(`agent record ${file} unreadable, left alone: ${errorMessage(e)}`);
        continue;
      }
      if (runId !== undefined && r.runId !== runId) continue;
      // A runner of this process still watches it, or another live process does.
      if (r.owner.host !== hostname() || watching.has(r.commandId)) continue;
      if (r.owner.pid !== process.pid && alive(r.owner.pid)) continue;
      const killed = await this.killMarked(r.commandId);
      let files = 0;
      try {
        files = await this.upload(r.outDir, r.rawPrefix);
      } catch (e) {
        this.opts.log.error(
          `could not store the output of agent ${r.commandId} (run ${r.runId}, path ${r.pathId}): ${errorMessage(e)}; it stays in ${r.outDir}`,
        );
        continue;
      }
      await rm(r.work, { recursive: true, force: true });
      await rm(file, { force: true });
      this.opts.log.warn(
        `agent ${r.commandId} of run ${r.runId} outlived its run${killed ? ' and was killed' : ''}: stored ${files} raw file(s) of path ${r.pathId}`,
      );
      out.push({ runId: r.runId, pathId: r.pathId, commandId: r.commandId, killed, files });
    }
    return out;
  }

  /** SIGKILL every process marked with this command id until none is left; true when one ran. */
  private async killMarked(commandId: string): Promise<boolean> {
    let killed = false;
    for (let i = 0; i < 50; i++) {
      const pids = markedProcesses(commandId);
      if (!pids.length) return killed;
      killed = true;
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`agent ${commandId}: its processes keep running after SIGKILL`);
  }

  /** Files stored (0 when the agent wrote nothing). */
  private async upload(outDir: string, prefix: string): Promise<number> {
    let files: string[];
    try {
      files = await filesUnder(outDir);
    } catch {
      return 0; // the agent wrote nothing
    }
    const kept: string[] = [];
    for (const f of files) {
      const rel = relative(outDir, f).split(sep).join('/');
      // Never over another agent's raw file of this run and path: the first one's data stays.
      if ((await this.opts.store.get(`${prefix}${rel}`)) !== undefined) kept.push(rel);
      else await this.opts.store.put(`${prefix}${rel}`, await readFile(f));
    }
    if (kept.length) {
      this.opts.log.warn('raw files already stored by another agent were kept, not overwritten', { prefix, kept });
    }
    return files.length - kept.length;
  }

  async status(commandId: string): Promise<CommandInvocation> {
    const r = this.commands.get(commandId);
    if (!r) return { status: 'Failed', detail: `unknown command ${commandId} (was this process restarted?)` };
    return { status: r.status, detail: r.detail };
  }

  async cancel(commandId: string): Promise<void> {
    const r = this.commands.get(commandId);
    if (r?.status !== 'InProgress' || !r.child.pid) return;
    r.ending ??= { status: 'Cancelled', detail: 'cancelled after its deadline' };
    try {
      process.kill(-r.child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await r.done;
  }

  /**
   * Samples written so far by the agent that is running now (one line per sample in its .jsonl
   * raw files; iperf3, sockperf and mtu write theirs at the end): for progress display only.
   * Reads each file from where it stopped last time, so a long probe costs little to watch.
   */
  async samplesSoFar(): Promise<{ pathId: string; samples: number } | undefined> {
    const r = [...this.commands.values()].at(-1);
    if (!r) return undefined;
    return { pathId: r.pathId, samples: r.finalSamples ?? (await this.countSamples(r)) };
  }

  /** The latest count without reading anything (final once the agent has exited). */
  samplesNow(): { pathId: string; samples: number } | undefined {
    const r = [...this.commands.values()].at(-1);
    if (!r) return undefined;
    let counted = 0;
    for (const [, [, seen]] of r.counted) counted += seen;
    return { pathId: r.pathId, samples: r.finalSamples ?? counted };
  }

  private async countSamples(r: Running): Promise<number> {
    let files: string[] = [];
    try {
      files = (await filesUnder(r.outDir)).filter((f) => f.endsWith('.jsonl'));
    } catch {
      // nothing written yet
    }
    let samples = 0;
    for (const f of files) {
      const [from, seen] = r.counted.get(f) ?? [0, 0];
      let count = seen;
      let read = from;
      try {
        const fh = await open(f, 'r');
        try {
          const { size } = await fh.stat();
          if (size > from) {
            const buf = Buffer.alloc(size - from);
            await fh.read(buf, 0, buf.length, from);
            for (const byte of buf) if (byte === 10) count++;
          }
          read = Math.max(size, from);
        } finally {
          await fh.close();
        }
      } catch {
        // rotated away: keep what was counted
      }
      r.counted.set(f, [read, count]);
    }
    for (const [, [, seen]] of r.counted) samples += seen;
    return samples;
  }

  /** After an interrupt: kill what runs and refuse new commands, so the run winds down fast. */
  abort(): void {
    this.aborted = true;
    this.kill();
  }

  /** Wait for every child (used on shutdown so no process outlives the run). */
  async drain(): Promise<void> {
    await Promise.all([...this.commands.values()].map((r) => r.done));
  }

  /** Kill every child still running. */
  kill(): void {
    for (const r of this.commands.values()) {
      if (r.status === 'InProgress' && r.child.pid) {
        try {
          process.kill(-r.child.pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
  }
}
