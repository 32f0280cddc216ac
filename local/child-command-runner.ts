/**
 * CommandRunner as a child process running the same agent bundle the SSM document runs on AWS
 * (dist/agent.cjs). In the lab the argv is wrapped to run inside the client namespace. When the
 * child ends, every file it wrote is copied into the store under the raw prefix — the local
 * equivalent of the document's `aws s3 cp --recursive` — even after a failure or timeout. A
 * command reads as ended (Success, Failed, TimedOut, Cancelled) only once that copy is done.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { RunAbortedError } from '../core/errors.js';
import { setLongTimeout } from '../core/long-timer.js';
import type { ClientRef } from '../core/resolved-plan.js';
import type { CommandInvocation, CommandRunner, Logger, ObjectStore, ProbeCommand } from '../functions/ports.js';

export interface LocalCommandRunnerOptions {
  agentPath: string;
  store: ObjectStore;
  log: Logger;
  /** Rewrites the argv (e.g. `ip netns exec pb-client …`); identity when absent. */
  wrap?: (argv: string[], client: ClientRef) => string[];
  /** Receives the agent's progress lines (stderr). */
  onAgentLine?: (line: string, cmd: ProbeCommand) => void;
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
    const base = [process.execPath, this.opts.agentPath, 'run', '--spec', specFile, '--out', outDir];
    const argv = this.opts.wrap ? this.opts.wrap(base, cmd.client) : base;
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
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
      child.on('error', (e) => {
        running.status = 'Failed';
        running.detail = `could not start the agent: ${e.message}`;
      });
      child.on('close', async (code, signal) => {
        timer.clear();
        running.finalSamples = await this.countSamples(running);
        try {
          await this.upload(outDir, cmd.rawPrefix);
          await rm(work, { recursive: true, force: true });
        } catch (e) {
          // Keep the agent's only copy: nothing measured is lost.
          running.status = 'Failed';
          running.detail = `could not store raw output (${(e as Error).message}); it is kept in ${outDir}`;
        }
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

  private async upload(outDir: string, prefix: string): Promise<void> {
    let files: string[];
    try {
      files = await filesUnder(outDir);
    } catch {
      return; // the agent wrote nothing
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
