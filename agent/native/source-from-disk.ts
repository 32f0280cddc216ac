/**
 * Reads tcping.c next to this file. Used only when the agent runs from source (vitest, tsx),
 * where `.c` cannot be imported; the esbuild bundle inlines the source and never loads this
 * module (tcping.ts imports it through a non-literal specifier so esbuild leaves it out).
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export function readTcpingSource(): Promise<string> {
  return readFile(fileURLToPath(new URL('./tcping.c', import.meta.url)), 'utf8');
}
