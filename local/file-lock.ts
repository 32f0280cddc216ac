/**
 * RunLock on one directory, for one data directory (`<data>/.lock/`) or host-wide (`hostLock`).
 *
 * The lock is a sequence of generation files `000000000001.json`, `000000000002.json`, …; the
 * highest one says who holds the lock (or that it is free). Every change — take, take over a
 * stale holder, release — writes the next generation with link(2), which fails when that
 * generation exists, so of two processes that saw the same stale holder exactly one wins; the
 * other sees the winner on its next look. Files are written whole before they are linked, so a
 * reader never sees a torn lock. Older generations are pruned (the newest two stay, which keeps
 * a late writer of a pruned generation from mistaking itself for the newest).
 *
 * A holder whose process is gone (crash, kill -9) on this host is stale and is taken over, with a
 * log line saying so. A lock belongs to one execution: run id, start time and process; release
 * by anyone else (a second start that reused the run id) leaves it alone.
 */

import { existsSync } from 'node:fs';
import { link, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { errorMessage, RunLockedError } from '../core/errors.js';
import { parseDocument } from '../core/stored-document.js';
import type { LockInfo, Logger, RunLock } from '../functions/ports.js';

const generationSchema = z.object({
  /** Absent when this generation frees the lock. */
  runId: z.string().optional(),
  startedAt: z.string().optional(),
  holder: z.string(),
  acquiredAt: z.string(),
  pid: z.number(),
  host: z.string(),
});
type Generation = z.output<typeof generationSchema>;

const GEN = /^(\d{12})\.json$/;
const name = (gen: number) => `${String(gen).padStart(12, '0')}.json`;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function code(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException).code;
}

export class FileLock implements RunLock {
  /** The directory holding the generations. */
  readonly lockDir: string;
  private readonly what: string;

  /** `dir`: the data directory (lock in `dir/.lock`); `opts.lockDir` puts the lock elsewhere. */
  constructor(
    dir: string,
    private readonly log?: Logger,
    opts: { lockDir?: string; what?: string } = {},
  ) {
    this.lockDir = opts.lockDir ?? join(dir, '.lock');
    this.what = opts.what ?? dir;
  }

  /** The newest generation, or undefined when the lock was never taken. */
  private async top(): Promise<{ gen: number; g: Generation } | undefined> {
    for (let i = 0; i < 20; i++) {
      const gens = await this.generations();
      const gen = gens.at(-1);
      if (gen === undefined) return undefined;
      try {
        const file = join(this.lockDir, name(gen));
        return { gen, g: parseDocument(file, await readFile(file, 'utf8'), generationSchema, 'lock generation') };
      } catch (e) {
        // Pruned between the listing and the read: a newer generation exists, look again.
        if (code(e) !== 'ENOENT') throw e;
      }
    }
    throw new RunLockedError(`could not read the lock in ${this.lockDir}: it changes too fast`);
  }

  private async generations(): Promise<number[]> {
    let names: string[];
    try {
      names = await readdir(this.lockDir);
    } catch (e) {
      if (code(e) === 'ENOENT') return [];
      throw e;
    }
    return names
      .map((n) => GEN.exec(n)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
  }

  /** Write generation `gen`; false when another process wrote it (or a newer one) first. */
  private async write(gen: number, g: Generation): Promise<boolean> {
    await mkdir(this.lockDir, { recursive: true });
    const tmp = join(this.lockDir, `.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`);
    try {
      await writeFile(tmp, `${JSON.stringify(g)}\n`);
      await link(tmp, join(this.lockDir, name(gen)));
    } catch (e) {
      if (code(e) === 'EEXIST') return false;
      throw e;
    } finally {
      await rm(tmp, { force: true });
    }
    // A late writer can recreate a generation that was pruned; a newer one then exists.
    const gens = await this.generations();
    if ((gens.at(-1) ?? gen) > gen) {
      await rm(join(this.lockDir, name(gen)), { force: true });
      return false;
    }
    for (const old of gens.filter((x) => x < gen - 1)) await rm(join(this.lockDir, name(old)), { force: true });
    return true;
  }

  private record(runId?: string, startedAt?: string): Generation {
    return {
      ...(runId !== undefined ? { runId } : {}),
      ...(startedAt !== undefined ? { startedAt } : {}),
      holder: `pid ${process.pid} on ${hostname()}`,
      acquiredAt: new Date().toISOString(),
      pid: process.pid,
      host: hostname(),
    };
  }

  private mine(g: Generation, runId: string, startedAt?: string): boolean {
    return (
      g.runId === runId &&
      g.pid === process.pid &&
      g.host === hostname() &&
      (startedAt === undefined || g.startedAt === startedAt)
    );
  }

  async acquire(runId: string, startedAt?: string): Promise<void> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const top = await this.top();
      if (top?.g.runId !== undefined) {
        const held = top.g;
        // A retried ValidatePlan of the same execution keeps its lock.
        if (this.mine(held, runId, startedAt) && held.startedAt === startedAt) return;
        if (held.host !== hostname() || alive(held.pid)) {
          const reused = held.runId === runId ? ' (a run with this id is still running: choose another run id)' : '';
          throw new RunLockedError(
            `another run holds the lock on ${this.what}: run ${held.runId} (${held.holder}, since ${held.acquiredAt})${reused}`,
          );
        }
        this.log?.warn('stale run lock taken over', { lock: this.what, runId: held.runId, pid: held.pid });
      }
      if (await this.write((top?.gen ?? 0) + 1, this.record(runId, startedAt))) return;
      // Another process wrote that generation first: look at what it wrote.
    }
    throw new RunLockedError(`could not take the lock on ${this.what}: too many processes competing for it`);
  }

  /** Releases only the lock this process took for this run (and start time, when given). */
  async release(runId: string, startedAt?: string): Promise<void> {
    const top = await this.top();
    if (!top || !this.mine(top.g, runId, startedAt)) return;
    // No one else writes the next generation while this live process holds the lock.
    try {
      await this.write(top.gen + 1, this.record());
    } catch (e) {
      // Writing failed (a full disk): release by removing this holder's generation instead, so
      // the lock is never left held by a run that has ended. The one before it is free or names
      // a holder that is gone (taken over), which the next run handles as it did then.
      await rm(join(this.lockDir, name(top.gen)), { force: true });
      this.log?.warn(`lock on ${this.what} released by removing its generation: writing failed (${errorMessage(e)})`);
    }
  }

  /**
   * The run holding this lock when its holder is gone: a process of this host that is dead, or
   * this very process when `ownActive` (the runs this process is running now) does not name it.
   */
  async abandonedHolder(ownActive: ReadonlySet<string>): Promise<string | undefined> {
    const g = (await this.top())?.g;
    if (g?.runId === undefined || g.host !== hostname()) return undefined;
    if (g.pid === process.pid) return ownActive.has(g.runId) ? undefined : g.runId;
    return alive(g.pid) ? undefined : g.runId;
  }

  async current(): Promise<LockInfo | undefined> {
    const top = await this.top();
    if (top?.g.runId === undefined) return undefined;
    const g = top.g;
    return {
      runId: g.runId as string,
      holder: g.holder,
      acquiredAt: g.acquiredAt,
      ...(g.startedAt !== undefined ? { startedAt: g.startedAt } : {}),
    };
  }
}

/**
 * A lock shared by every process on this host, e.g. `hostLock('lab-routes')` around changes to
 * the lab's routes, which live in network namespaces that every data directory shares.
 * `PATHBENCH_HOST_LOCK_DIR` moves it (tests); the default is `/run/lock/pathbench` (else under
 * the temporary directory).
 */
export function hostLock(lockName: string, log?: Logger): FileLock {
  if (!/^[a-z0-9-]+$/.test(lockName))
    throw new Error(`host lock name: expected [a-z0-9-]+, got ${JSON.stringify(lockName)}`);
  const base =
    process.env.PATHBENCH_HOST_LOCK_DIR ??
    (existsSync('/run/lock') ? '/run/lock/pathbench' : join(tmpdir(), 'pathbench-host-locks'));
  return new FileLock(base, log, { lockDir: join(base, lockName), what: `host lock ${lockName}` });
}

/** Holds several locks as one: taken in order, released in reverse; a refusal releases the ones taken. */
export class LockSet implements RunLock {
  constructor(private readonly locks: RunLock[]) {}

  async acquire(runId: string, startedAt?: string): Promise<void> {
    const taken: RunLock[] = [];
    try {
      for (const l of this.locks) {
        await l.acquire(runId, startedAt);
        taken.push(l);
      }
    } catch (e) {
      for (const l of taken.reverse()) await l.release(runId, startedAt);
      throw e;
    }
  }

  async release(runId: string, startedAt?: string): Promise<void> {
    for (const l of [...this.locks].reverse()) await l.release(runId, startedAt);
  }

  async current(): Promise<LockInfo | undefined> {
    for (const l of this.locks) {
      const c = await l.current();
      if (c) return c;
    }
    return undefined;
  }
}
