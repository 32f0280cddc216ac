/**
 * Streaming reads and writes through the ObjectStore port, with a whole-object fallback for
 * stores that do not stream (test fakes): CollectOutput reads a raw file line by line and writes
 * its samples as they are made, so a 1 M-line log never sits in memory whole.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { errorMessage } from '../../core/errors.js';
import type { ObjectStore } from '../ports.js';

/** The object's bytes in chunks, or undefined when it does not exist. */
export async function readChunks(store: ObjectStore, key: string): Promise<AsyncIterable<Uint8Array> | undefined> {
  if (store.getStream) return store.getStream(key);
  const whole = await store.get(key);
  return whole === undefined
    ? undefined
    : (async function* () {
        yield whole;
      })();
}

/**
 * A raw file's TEXT bytes in chunks: a `.gz` key (the agent compresses its large logs) is
 * decompressed as it streams, with node:zlib, never whole in memory; any other key is read as
 * stored (raw files of older runs are plain and still parse). A compressed file that ends early
 * or is damaged yields what decompressed before the damage and reports it to `onDamage`, so the
 * caller keeps those lines and marks the file truncated instead of losing it all.
 */
export async function readRawChunks(
  store: ObjectStore,
  key: string,
  onDamage: (reason: string) => void,
): Promise<AsyncIterable<Uint8Array> | undefined> {
  const chunks = await readChunks(store, key);
  if (!chunks || !key.endsWith('.gz')) return chunks;
  return gunzipChunks(chunks, onDamage);
}

async function* gunzipChunks(chunks: AsyncIterable<Uint8Array>, onDamage: (reason: string) => void) {
  const gunzip = createGunzip();
  const done = pipeline(Readable.from(chunks), gunzip);
  // Its failure is the same error the iteration below sees; handled there.
  done.catch(() => undefined);
  try {
    for await (const c of gunzip) yield c as Uint8Array;
    await done;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    onDamage(
      code === 'Z_BUF_ERROR'
        ? 'gzip stream ends early (file cut off)'
        : `gzip stream damaged (${code ?? errorMessage(e).slice(0, 80)})`,
    );
  }
}

/**
 * Write `body` under `key` only if it yields anything (an empty body writes nothing and returns
 * false), streaming when the store can.
 */
export async function writeIfAny(
  store: ObjectStore,
  key: string,
  body: AsyncIterable<string>,
  contentType: string,
): Promise<boolean> {
  const it = body[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done) return false;
  async function* all(): AsyncGenerator<string> {
    yield first.value;
    for (let n = await it.next(); !n.done; n = await it.next()) yield n.value;
  }
  if (store.putStream) await store.putStream(key, all(), contentType);
  else {
    const parts: string[] = [];
    for await (const s of all()) parts.push(s);
    await store.put(key, parts.join(''), contentType);
  }
  return true;
}
