/**
 * ObjectStore over a directory (default `.pathbench/`), same key layout as the S3 bucket.
 * Writes go to a temporary file and are renamed into place, so a reader never sees half an
 * object and a retried step overwrites atomically.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ObjectStore } from '../functions/ports.js';

/** Errors of the file system that say the disk (or its inodes, or the user's quota) is used up. */
const FULL = new Set(['ENOSPC', 'EDQUOT']);

/**
 * A write's error naming the object and its file, and saying plainly when the disk is full
 * (Node's own says only "ENOSPC: no space left on device, write"). The code is kept. An error
 * that is not the file system's (the body's stream failed) passes through unchanged.
 */
function writeError(key: string, file: string, e: unknown): unknown {
  const code = (e as NodeJS.ErrnoException).code;
  if (typeof code !== 'string' || !/^E[A-Z]+$/.test(code)) return e;
  const why = FULL.has(code)
    ? `no space left on the disk of the data directory (${code}): free some space and run again`
    : (e as Error).message;
  return Object.assign(new Error(`could not store ${key}: writing ${file}: ${why}`, { cause: e }), { code });
}

export class DirStore implements ObjectStore {
  constructor(readonly root: string) {}

  get location(): string {
    return this.root;
  }

  private file(key: string): string {
    if (key.startsWith('/') || key.split('/').some((p) => p === '..' || p === '')) {
      throw new Error(`invalid object key: ${JSON.stringify(key)}`);
    }
    return join(this.root, ...key.split('/'));
  }

  async put(key: string, body: string | Uint8Array): Promise<void> {
    const f = this.file(key);
    const tmp = `${f}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
    try {
      await mkdir(dirname(f), { recursive: true });
      await writeFile(tmp, body);
      await rename(tmp, f);
    } catch (e) {
      // A failed write leaves nothing behind: half a temporary file would hold on to the space.
      await rm(tmp, { force: true });
      throw writeError(key, f, e);
    }
  }

  /** The file streamed in chunks; a missing key is undefined (checked by opening it first). */
  async getStream(key: string): Promise<AsyncIterable<Uint8Array> | undefined> {
    const f = this.file(key);
    try {
      const fh = await open(f, 'r');
      return fh.createReadStream({ highWaterMark: 256 * 1024 }) as AsyncIterable<Uint8Array>;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  }

  /** Streamed to a temporary file and renamed into place: whole or not at all, like put(). */
  async putStream(key: string, body: AsyncIterable<string | Uint8Array>): Promise<void> {
    const f = this.file(key);
    const tmp = `${f}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
    try {
      await mkdir(dirname(f), { recursive: true });
      await pipeline(Readable.from(body, { objectMode: false }), createWriteStream(tmp));
      await rename(tmp, f);
    } catch (e) {
      await rm(tmp, { force: true });
      throw writeError(key, f, e);
    }
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      return await readFile(this.file(key));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  }

  async getText(key: string): Promise<string | undefined> {
    const b = await this.get(key);
    return b === undefined ? undefined : Buffer.from(b).toString('utf8');
  }

  async list(prefix: string): Promise<string[]> {
    // Walk from the deepest directory the prefix names, then filter by the full prefix.
    const dirPart = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
    const start = dirPart ? this.file(dirPart) : this.root;
    const out: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      let entries: import('node:fs').Dirent[];
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw e;
      }
      for (const ent of entries) {
        // Dot entries are not objects (the run lock lives in .lock/).
        if (ent.name.startsWith('.')) continue;
        const full = join(dir, ent.name);
        if (ent.isDirectory()) await walk(full);
        else if (!ent.name.includes('.tmp-')) {
          const key = relative(this.root, full).split(sep).join('/');
          if (key.startsWith(prefix)) out.push(key);
        }
      }
    };
    await walk(start);
    return out.sort();
  }

  async delete(key: string): Promise<void> {
    await rm(this.file(key), { force: true });
  }
}
