/**
 * RunLock for one data directory: a lock file created with O_EXCL. A lock whose holder process
 * is gone (crash, kill -9) is stale and is taken over, with a log line saying so.
 */

import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { RunLockedError } from '../../core/errors.js';
import type { LockInfo, Logger, RunLock } from '../../ports.js';

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
      // A torn or foreign file: treat as no lock rather than blocking forever.
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
        if (held && held.host === hostname() && !alive(held.pid)) {
          this.log?.warn('stale run lock taken over', { runId: held.runId, pid: held.pid });
          await rm(this.file, { force: true });
          continue;
        }
        throw new RunLockedError(
          `another run holds the lock on ${this.dir}: run ${held?.runId ?? '?'} (${held?.holder ?? 'unknown holder'}, since ${held?.acquiredAt ?? '?'})`,
        );
      }
    }
    throw new RunLockedError(`could not take the lock on ${this.dir}`);
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
