/**
 * No output is ever cut: a command that writes a lot and then ends must hand all of it to a
 * slow pipe, byte for byte what it writes to a file.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/repo.js';

const ARGV = ['cli/pathbench.mjs', 'plan', 'mesh', '--regions', 'all'];
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pathbench-exit-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Run with stdout redirected to a file; the file's size. */
function toFile(): Promise<number> {
  const file = join(dir, 'out.json');
  const fd = openSync(file, 'w');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ARGV, { cwd: ROOT, stdio: ['ignore', fd, 'ignore'] });
    child.on('error', reject);
    child.on('close', (code) => {
      closeSync(fd);
      if (code !== 0) reject(new Error(`exit ${code}`));
      else resolve(readFileSync(file).length);
    });
  });
}

/** Run into a pipe nobody reads for the first second (as `| (sleep 1; wc -c)`); bytes read. */
function toSlowPipe(): Promise<{ code: number | null; bytes: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ARGV, { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] });
    child.on('error', reject);
    child.stdout.pause();
    let bytes = 0;
    const exited = new Promise<number | null>((ok) => child.on('exit', (code) => ok(code)));
    setTimeout(() => {
      child.stdout.on('data', (b: Buffer) => {
        bytes += b.length;
      });
      child.stdout.on('end', async () => resolve({ code: await exited, bytes }));
      child.stdout.resume();
    }, 1000);
  });
}

describe('output through a slow pipe', () => {
  it('is whole: the same bytes as redirected to a file, exit 0', async () => {
    const file = await toFile();
    expect(file).toBeGreaterThan(256 * 1024);
    const piped = await toSlowPipe();
    expect(piped.code).toBe(0);
    expect(piped.bytes).toBe(file);
  });
});
