/**
 * Reads the helper's C files next to this file. Used only when the agent runs from source
 * (vitest, tsx), where `.c` and `.h` cannot be imported; the esbuild bundle inlines the sources
 * and never loads this module (tcping.ts imports it through a non-literal specifier so esbuild
 * leaves it out).
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** The texts of `names` (files of this directory), in the same order. */
export function readTcpingSources(names: readonly string[]): Promise<string[]> {
  return Promise.all(names.map((name) => readFile(fileURLToPath(new URL(`./${name}`, import.meta.url)), 'utf8')));
}
