/** The bounded child-process helper the tool-running probes (iperf3, sockperf, mtu) and the lab share. */
import { spawn } from 'node:child_process';

export interface ToolResult {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** The executable does not exist (spawn ENOENT). */
  notFound: boolean;
  spawnError?: string;
  startedAtMs: number;
  endedAtMs: number;
}

/**
 * Run `cmd args` without a shell in its own process group, collecting stdout/stderr. At
 * `timeoutMs` the whole group gets SIGTERM (iperf3 then prints what it has), and SIGKILL
 * `killGraceMs` later. Never rejects.
 */
export function runTool(
  cmd: string,
  args: string[],
  opts: { timeoutMs: number; killGraceMs?: number },
): Promise<ToolResult> {
  return new Promise((resolve) => {
    const startedAtMs = Date.now();
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    const child = spawn(cmd, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const signalGroup = (sig: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, sig);
      } catch {
        // The group is already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      signalGroup('SIGTERM');
      killTimer = setTimeout(() => signalGroup('SIGKILL'), opts.killGraceMs ?? 2000);
    }, opts.timeoutMs);
    const finish = (r: Partial<ToolResult>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      resolve({
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        exitCode: null,
        signal: null,
        timedOut,
        notFound: false,
        startedAtMs,
        endedAtMs: Date.now(),
        ...r,
      });
    };
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e: NodeJS.ErrnoException) => finish({ notFound: e.code === 'ENOENT', spawnError: e.message }));
    child.on('close', (code, signal) => {
      // A timed-out tool's children may still hold the group: make sure nothing outlives it.
      if (timedOut) signalGroup('SIGKILL');
      finish({ exitCode: code, signal });
    });
  });
}
