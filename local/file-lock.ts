/**
 * RunLock for one data directory: a lock file created with O_EXCL. A lock whose holder process
 * is gone (crash, kill -9) is stale and is taken over, with a log line saying so.
 */

import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { RunLockedError } from '../functions/core/errors.js';
import type { LockInfo, Logger, RunLock } from '../functions/ports.js';

interface LockFile extends LockInfo {
  pid: number;
  host: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class FileLock implements RunLock {
  private readonly file: string;
  constructor(
    private readonly dir: string,
    private readonly log?: Logger,
  ) {
    this.file = join(dir, 'lock.json');
  }

  private async read(): Promise<LockFile | undefined> {
    try {
      return JSON.parse(await readFile(this.file, 'utf8')) as LockFile;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      // A torn file (crash between create and write): acquire() takes it over once it is old.
      return undefined;
    }
  }

  async acquire(runId: string): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fh = await open(this.file, 'wx');
        const info: LockFile = {
          runId,
          holder: `pid ${process.pid} on ${hostname()}`,
          acquiredAt: new Date().toISOString(),
          pid: process.pid,
          host: hostname(),
        };
        await fh.writeFile(`${JSON.stringify(info)}\n`);
        await fh.close();
        return;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        const held = await this.read();
        if (held && held.runId === runId && held.pid === process.pid) return;
        const stale = held ? held.host === hostname() && !alive(held.pid) : await this.tornAndOld();
        if (stale) {
          this.log?.warn('stale run lock taken over', { runId: held?.runId, pid: held?.pid });
          // rename, not rm: of two processes taking over the same stale lock, only one wins.
          try {
            await rename(this.file, `${this.file}.stale-${process.pid}`);
            await rm(`${this.file}.stale-${process.pid}`, { force: true });
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
          }
          continue;
        }
        throw new RunLockedError(
          `another run holds the lock on ${this.dir}: run ${held?.runId ?? '?'} (${held?.holder ?? 'unknown holder'}, since ${held?.acquiredAt ?? '?'})`,
        );
      }
    }
    throw new RunLockedError(`could not take the lock on ${this.dir}`);
  }

  /** An unreadable lock file (a crash between create and write) older than a few seconds. */
  private async tornAndOld(): Promise<boolean> {
    try {
      return Date.now() - (await stat(this.file)).mtimeMs > 5000;
    } catch {
      return false;
    }
  }

  async release(runId: string): Promise<void> {
    const held = await this.read();
    if (held && held.runId === runId) await rm(this.file, { force: true });
  }

  async current(): Promise<LockInfo | undefined> {
    const held = await this.read();
    return held ? { runId: held.runId, holder: held.holder, acquiredAt: held.acquiredAt } : undefined;
  }
}
