/**
 * splitLines on lines far longer than a chunk (the any-chunking equivalence with splitText is in
 * fuzz.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { type RawLine, splitLines } from '../../../probes/parsing/lines.js';

async function collect(chunks: Iterable<Uint8Array | string>): Promise<RawLine[]> {
  const out: RawLine[] = [];
  for await (const l of splitLines(
    (async function* () {
      yield* chunks;
    })(),
  )) {
    out.push(l);
  }
  return out;
}

function* pieces(text: string, size: number): Generator<string> {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

describe('splitLines on a line far longer than a chunk', () => {
  // 32 MB in 8,192 chunks of 4 KB. Re-joining and re-searching the pending part of the line on
  // every chunk made this quadratic (minutes); kept as pieces and joined once it takes well
  // under a second, far inside the unit suite's 30 s test timeout.
  it('yields the one long line whole, then the lines after it', async () => {
    const long = `a${'x'.repeat(32 << 20)}\r`;
    const lines = await collect(pieces(`first\n${long}\nafter\r\nlast`, 4096));
    expect(lines.map((l) => [l.n, l.text.length, l.complete])).toEqual([
      [1, 5, true],
      [2, long.length - 1, true],
      [3, 5, true],
      [4, 4, false],
    ]);
    expect(lines[1].text.startsWith('ax') && lines[1].text.endsWith('xx')).toBe(true);
    expect(lines[2].text).toBe('after');
  });

  it('keeps a multi-byte character split across chunks, and a "\\r" that ends one chunk before its "\\n"', async () => {
    const bytes = new TextEncoder().encode('é€😀 line\r\nnext');
    const chunks = Array.from(bytes, (b) => Uint8Array.of(b));
    const lines = await collect(chunks);
    expect(lines).toEqual([
      { text: 'é€😀 line', n: 1, complete: true },
      { text: 'next', n: 2, complete: false },
    ]);
  });

  it('a last line cut mid-character reads as truncated with a replacement character', async () => {
    const bytes = new TextEncoder().encode('ok\n€');
    expect(await collect([bytes.subarray(0, bytes.length - 1)])).toEqual([
      { text: 'ok', n: 1, complete: true },
      { text: '\uFFFD', n: 2, complete: false },
    ]);
  });
});
