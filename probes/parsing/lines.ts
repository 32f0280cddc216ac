/**
 * Raw bytes in chunks → lines, for parsing a raw file as it streams from the store (never the
 * whole file in memory). Hand-written rather than node:readline because the parsers must know
 * whether the LAST line ended with a newline: a file uploaded as produced, or cut by a kill, ends
 * mid-line, and that line is truncated, not corrupt.
 */

export interface RawLine {
  /** The line without its "\n" (a trailing "\r" is removed too). */
  text: string;
  /** 1-based line number in the file. */
  n: number;
  /** False only for a last line that had no newline after it. */
  complete: boolean;
}

/**
 * Split a stream of UTF-8 chunks into lines; a multi-byte character split across chunks is kept
 * whole. A line longer than a chunk is kept as its pieces and joined once when its newline (or
 * the end) comes, and each chunk is searched only for its own newlines: linear in the input
 * however long a line is (re-joining the pending piece on every chunk made a 32 MB line
 * quadratic).
 */
export async function* splitLines(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<RawLine> {
  const decoder = new TextDecoder('utf-8');
  let pending: string[] = [];
  let n = 0;
  for await (const chunk of chunks) {
    const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', start)) {
      let line = text.slice(start, i);
      if (pending.length) {
        pending.push(line);
        line = pending.join('');
        pending = [];
      }
      yield { text: line.endsWith('\r') ? line.slice(0, -1) : line, n: ++n, complete: true };
      start = i + 1;
    }
    if (start < text.length) pending.push(text.slice(start));
  }
  pending.push(decoder.decode());
  const rest = pending.join('');
  if (rest !== '') yield { text: rest, n: ++n, complete: false };
}

/** The same for text already in memory (tests, the CLI, the agent's self-calibration). */
export function* splitText(raw: string): Generator<RawLine> {
  let start = 0;
  let n = 0;
  for (let i = raw.indexOf('\n'); i >= 0; i = raw.indexOf('\n', start)) {
    const end = i > start && raw.charCodeAt(i - 1) === 13 ? i - 1 : i;
    yield { text: raw.slice(start, end), n: ++n, complete: true };
    start = i + 1;
  }
  if (start < raw.length) yield { text: raw.slice(start), n: ++n, complete: false };
}
