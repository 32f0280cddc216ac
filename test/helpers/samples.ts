/** Test helpers: a seeded PRNG and writing sample records in the contract's file layout. */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { keys } from '../../functions/core/keys.js';

/** mulberry32: small, seeded, good enough to vary test data reproducibly. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function tempDataDir(prefix: string): Promise<string> {
  return mkdtemp(path.join(tmpdir(), `pb-${prefix}-`));
}

/** Write records to `<dir>/samples/path=<id>/run=<runId>/<probe>-<trial>.jsonl`, one file per key. */
export async function writeSamples(dir: string, records: Record<string, unknown>[]): Promise<string[]> {
  const files = new Map<string, string[]>();
  for (const r of records) {
    const key = keys.samples(String(r.path_id), String(r.run_id), String(r.probe), Number(r.trial));
    const lines = files.get(key) ?? [];
    lines.push(JSON.stringify(r));
    files.set(key, lines);
  }
  for (const [key, lines] of files) {
    const file = path.join(dir, key);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, `${lines.join('\n')}\n`);
  }
  return [...files.keys()];
}
