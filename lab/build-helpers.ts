/**
 * The lab's own C helpers in lab/native/, compiled with gcc on demand into lab/native/build/:
 * nfq-delay (the NFQUEUE delay line) and tcp-rtt (the fallback TCP-connect timer).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mtimeMs, run } from './sys.js';

const NATIVE_DIR = fileURLToPath(new URL('./native', import.meta.url));
const BUILD_DIR = join(NATIVE_DIR, 'build');

export type LabHelper = 'nfq-delay' | 'tcp-rtt';

/** Compile a lab C tool when the binary is missing or older than its source; returns its path. */
export async function buildHelper(name: LabHelper): Promise<string> {
  const src = join(NATIVE_DIR, `${name}.c`);
  const bin = join(BUILD_DIR, name);
  if (mtimeMs(bin) > mtimeMs(src)) return bin;
  mkdirSync(BUILD_DIR, { recursive: true });
  const libs = name === 'nfq-delay' ? ['-lnetfilter_queue', '-lmnl', '-lnfnetlink'] : [];
  await run(['gcc', '-O2', '-Wall', '-o', bin, src, ...libs], { timeoutMs: 60_000 });
  return bin;
}

/**
 * Path to the fallback TCP-connect timer lab/native/tcp-rtt.c (built on demand). Only used when
 * the precise helper (probes/native/tcping.ts) cannot be built here.
 */
export async function tcpRttTool(): Promise<string> {
  return buildHelper('tcp-rtt');
}
