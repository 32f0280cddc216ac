/**
 * A clean tree to run the docs' commands (and `npm start`) in, as a fresh clone has it: the repository's files
 * (tracked, and new ones not ignored, as they are in the working tree) without dist/, cdk.out/,
 * .pathbench/ or anything else ignored; node_modules linked from this checkout (`npm ci` is what
 * CI's .ci/run does before this suite).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ROOT } from './repo.js';

export function cleanTree(name: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `pathbench-clean-${name}-`));
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
  })
    .toString()
    .split('\0')
    .filter(Boolean);
  for (const f of files) {
    const from = join(ROOT, f);
    // A file deleted in the working tree but still in the index is not in a clone of this tree.
    if (!existsSync(from) || f === 'node_modules') continue;
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    copyFileSync(from, join(dir, f));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
