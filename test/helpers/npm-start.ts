/** package.json's `start` script as a test runs it: the README's main job, exactly. */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './repo.js';

/** The start script as argv, its leading `node` resolved to this Node. */
export function npmStartArgv(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const [node, ...rest] = pkg.scripts.start.trim().split(/\s+/);
  if (node !== 'node') throw new Error(`the start script no longer begins with node: ${pkg.scripts.start}`);
  return [process.execPath, ...rest];
}

/** Run a command (from the repository root unless `cwd`); resolves with its exit code and both streams. */
export function runCommand(
  argv: string[],
  cwd = ROOT,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const [cmd, ...args] = argv;
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => {
      stdout += b.toString();
    });
    child.stderr.on('data', (b: Buffer) => {
      stderr += b.toString();
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
