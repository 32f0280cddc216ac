/** DirStore's streaming read and write: whole or nothing, as put() is. */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DirStore } from '../../local/dir-store.js';
import { splitLines } from '../../probes/parsing/lines.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function store(): Promise<DirStore> {
  const d = await mkdtemp(join(tmpdir(), 'pathbench-dirstore-'));
  dirs.push(d);
  return new DirStore(d);
}

async function* body(n: number, failAt?: number): AsyncGenerator<string> {
  for (let i = 0; i < n; i++) {
    if (i === failAt) throw new Error('producer failed');
    yield `line ${i}\n`;
  }
}

describe('DirStore streaming', () => {
  it('writes a streamed body and reads it back in chunks, line by line', async () => {
    const s = await store();
    await s.putStream('samples/path=A/run=r/x.jsonl', body(100_000));
    const chunks = await s.getStream('samples/path=A/run=r/x.jsonl');
    let n = 0;
    for await (const l of splitLines(chunks as AsyncIterable<Uint8Array>)) expect(l.text).toBe(`line ${n++}`);
    expect(n).toBe(100_000);
    expect(await s.getStream('samples/path=A/run=r/missing.jsonl')).toBeUndefined();
  });

  it('a body that fails part-way leaves neither the object nor a temporary file', async () => {
    const s = await store();
    await s.put('k/old.jsonl', 'kept\n');
    await expect(s.putStream('k/old.jsonl', body(100_000, 50_000))).rejects.toThrow('producer failed');
    expect(await s.getText('k/old.jsonl')).toBe('kept\n');
    expect(await readdir(join(s.root, 'k'))).toEqual(['old.jsonl']);
  });
});
