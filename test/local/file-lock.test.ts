/**
 * FileLock with real processes: stale locks raced by several takers, a second start that
 * reuses a run id, and the host-wide lock.
 */
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { FileLock, hostLock, LockSet } from '../../local/file-lock.js';

const CHILD = join(import.meta.dirname, '..', 'helpers', 'lock-race-child.ts');
const node = (args: string[]) => spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], { stdio: 'pipe' });

const dirs: string[] = [];
const tmp = async () => {
  const d = await mkdtemp(join(tmpdir(), 'pathbench-lock-'));
  dirs.push(d);
  return d;
};
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

/** The next line a child prints. */
function nextLine(c: ChildProcessWithoutNullStreams): () => Promise<string> {
  const it = createInterface({ input: c.stdout })[Symbol.asyncIterator]();
  return async () => {
    const r = await it.next();
    if (r.done) throw new Error('child ended early');
    return r.value;
  };
}

describe('FileLock', () => {
  it('names an abandoned holder: a dead process of this host, or this process when it no longer runs that run', async () => {
    const dir = await tmp();
    const lock = new FileLock(dir);
    expect(await lock.abandonedHolder(new Set())).toBeUndefined();
    await lock.acquire('r-mine');
    expect(await lock.abandonedHolder(new Set(['r-mine']))).toBeUndefined();
    expect(await lock.abandonedHolder(new Set())).toBe('r-mine');
    await lock.release('r-mine');
    // A process of this host that held the lock and is gone (kill -9): its generation stays on top.
    const pid = Number(execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']));
    const gens = (await readdir(lock.lockDir)).sort();
    const next = String(Number(gens.at(-1)?.slice(0, 12)) + 1).padStart(12, '0');
    const g = { runId: 'r-killed', holder: `pid ${pid}`, acquiredAt: new Date().toISOString(), pid, host: hostname() };
    await writeFile(join(lock.lockDir, `${next}.json`), JSON.stringify(g));
    expect(await lock.abandonedHolder(new Set())).toBe('r-killed');
    // A live process of this host (the parent of this test) is not abandoned.
    await writeFile(
      join(lock.lockDir, `${String(Number(next) + 1).padStart(12, '0')}.json`),
      JSON.stringify({ ...g, runId: 'r-live', pid: process.ppid }),
    );
    expect(await lock.abandonedHolder(new Set())).toBeUndefined();
  });

  it('of several processes taking over the same stale lock, exactly one wins, every time', async () => {
    const base = await tmp();
    const TRIALS = 400;
    const RACERS = 4;
    // One process takes every lock and exits: TRIALS stale locks.
    execFileSync(process.execPath, ['--import', 'tsx', CHILD, 'seed', base, String(TRIALS)]);
    const racers = Array.from({ length: RACERS }, (_, i) => node(['race', base, String(TRIALS), String(i)]));
    try {
      const reads = racers.map(nextLine);
      for (const r of reads) expect(await r()).toBe('ready');
      for (const c of racers) c.stdin.write('go\n');
      const results = await Promise.all(
        reads.map(async (r) => JSON.parse(await r()) as { won: number[]; errors: string[] }),
      );
      expect(results.flatMap((r) => r.errors)).toEqual([]);
      const winners = new Array<number>(TRIALS).fill(0);
      for (const r of results) for (const t of r.won) winners[t]++;
      const wrong = winners.map((w, t) => ({ t, w })).filter((x) => x.w !== 1);
      expect(wrong, 'trials without exactly one winner').toEqual([]);
    } finally {
      for (const c of racers) c.stdin.end();
      await Promise.all(racers.map((c) => new Promise((res) => (c.exitCode !== null ? res(null) : c.on('exit', res)))));
    }
  }, 60_000);

  it('a second start that reuses the run id is refused and cannot release the first one’s lock', async () => {
    const dir = await tmp();
    const lock = new FileLock(dir);
    await lock.acquire('same', '2026-01-01T00:00:00.000Z');
    // A retry of the same execution keeps the lock.
    await lock.acquire('same', '2026-01-01T00:00:00.000Z');
    await expect(lock.acquire('same', '2026-01-01T00:05:00.000Z')).rejects.toThrow(/choose another run id/);
    await lock.release('same', '2026-01-01T00:05:00.000Z');
    expect(await lock.current()).toMatchObject({ runId: 'same', startedAt: '2026-01-01T00:00:00.000Z' });
    await expect(new FileLock(dir).acquire('third', '2026-01-01T00:06:00.000Z')).rejects.toThrow(/run same/);
    await lock.release('same', '2026-01-01T00:00:00.000Z');
    expect(await lock.current()).toBeUndefined();
    await lock.acquire('third', '2026-01-01T00:06:00.000Z');
  });

  it('another process cannot release a live holder’s lock, even under the same run id', async () => {
    const dir = await tmp();
    const child = node(['race', dir, '1', 'x']);
    try {
      const read = nextLine(child);
      expect(await read()).toBe('ready');
      child.stdin.write('go\n');
      expect(JSON.parse(await read()).won).toEqual([0]);
      const lock = new FileLock(join(dir, '0'));
      await lock.release('racer-x', 'race-start');
      expect((await lock.current())?.runId).toBe('racer-x');
    } finally {
      child.stdin.end();
    }
  }, 30_000);

  it('keeps no lock files among the objects and prunes old generations', async () => {
    const dir = await tmp();
    const lock = new FileLock(dir);
    for (let i = 0; i < 20; i++) {
      await lock.acquire(`r${i}`, 's');
      await lock.release(`r${i}`, 's');
    }
    const { readdir } = await import('node:fs/promises');
    expect(await readdir(dir)).toEqual(['.lock']);
    expect((await readdir(lock.lockDir)).length).toBeLessThanOrEqual(2);
  });
});

describe('hostLock', () => {
  it('is one lock for every data directory on the host; LockSet takes both or neither', async () => {
    process.env.PATHBENCH_HOST_LOCK_DIR = await tmp();
    try {
      const a = new LockSet([new FileLock(await tmp()), hostLock('lab-routes')]);
      const b = new LockSet([new FileLock(await tmp()), hostLock('lab-routes')]);
      await a.acquire('run-a', 's');
      await expect(b.acquire('run-b', 's')).rejects.toThrow(/host lock lab-routes: run run-a/);
      // b's own data-directory lock was given back.
      expect(await b.current()).toMatchObject({ runId: 'run-a' });
      await a.release('run-a', 's');
      await b.acquire('run-b', 's');
      expect(await b.current()).toMatchObject({ runId: 'run-b' });
      expect(() => hostLock('../etc')).toThrow(/host lock name/);
    } finally {
      delete process.env.PATHBENCH_HOST_LOCK_DIR;
    }
  });
});
