/**
 * Run a command line as a user types it: through bash in the given directory, its exit code,
 * both streams and how long it took. `piped` runs it again through `| wc -c` and says whether
 * the pipe got every byte.
 */
import { spawn } from 'node:child_process';

export interface Ran {
  command: string;
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

export function sh(command: string, cwd: string, timeoutMs = 300_000): Promise<Ran> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-o', 'pipefail', '-c', command], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1', CI: '1' },
      detached: true,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    const timer = setTimeout(() => {
      if (child.pid) process.kill(-child.pid, 'SIGINT');
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({
        command,
        code,
        stdout: Buffer.concat(out).toString(),
        stderr: Buffer.concat(err).toString(),
        ms: Date.now() - t0,
      });
    });
  });
}

/** The command's stdout as a slow reader gets it through a pipe (`| (sleep 1; cat)`). */
export async function slowPiped(command: string, cwd: string): Promise<string> {
  const r = await sh(`${command} | (sleep 1; cat)`, cwd);
  return r.stdout;
}

/** Bytes of the command's stdout through `| wc -c` (with a slow reader in front). */
export async function pipedBytes(command: string, cwd: string): Promise<number> {
  const r = await sh(`${command} | (sleep 1; wc -c)`, cwd);
  return Number(r.stdout.trim());
}

/** One line for the suite's log: the command, its exit code, one figure, the time. */
export function say(r: Ran, figure: string): void {
  process.stdout.write(`accept: ${r.command}  → exit ${r.code}; ${figure}; ${(r.ms / 1000).toFixed(1)} s\n`);
}
