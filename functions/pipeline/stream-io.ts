/**
 * Streaming reads and writes through the ObjectStore port, with a whole-object fallback for
 * stores that do not stream (test fakes): CollectOutput reads a raw file line by line and writes
 * its samples as they are made, so a 1 M-line log never sits in memory whole.
 */
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
