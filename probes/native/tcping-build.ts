/**
 * Building the precise helper (probes/native/tcping.ts runs it): its C files (TCPING_SOURCES, this
 * directory; tcping.c says which file does what) compiled on the client (gcc; AL2023 via dnf)
 * into a per-user cache keyed by a hash of the sources, once per process and sources.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, chmod, mkdir, readdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export type EnsureResult = { ok: true; path: string } | { ok: false; reason: string };

const CFLAGS = ['-O2', '-std=gnu11', '-Wall', '-pthread'];

/** The helper's C files (this directory), compiled together in one gcc call; tcping.c has main(). */
export const TCPING_SOURCES = [
  'common.h',
  'common.c',
  'tcp-connect.c',
  'listener.c',
  'http-client.c',
  'pingpong.c',
  'tcping.c',
] as const;

/** One of the helper's files and its text. */
export interface TcpingSource {
  name: (typeof TCPING_SOURCES)[number];
  text: string;
}

/**
 * The helper's C files, in TCPING_SOURCES order. Bundled: inlined by esbuild's `.c` and `.h`
 * text loaders (scripts/build.mjs). From source (vitest, tsx cannot import `.c`): read from disk
 * through a module esbuild does not bundle.
 */
export async function loadTcpingSources(): Promise<TcpingSource[]> {
  try {
    // Literal specifiers, one per file of TCPING_SOURCES, so esbuild inlines each.
    const mods = (await Promise.all([
      import('./common.h'),
      import('./common.c'),
      import('./tcp-connect.c'),
      import('./listener.c'),
      import('./http-client.c'),
      import('./pingpong.c'),
      import('./tcping.c'),
    ])) as { default: unknown }[];
    const texts = mods.map((m) => m.default);
    if (texts.every((t): t is string => typeof t === 'string') && texts[texts.length - 1].includes('int main(')) {
      return TCPING_SOURCES.map((name, i) => ({ name, text: texts[i] }));
    }
  } catch {
    // Not bundled: fall through to the disk copies.
  }
  const fromDisk = './source-from-disk.js';
  const m = (await import(fromDisk)) as { readTcpingSources: (names: readonly string[]) => Promise<string[]> };
  const texts = await m.readTcpingSources(TCPING_SOURCES);
  return TCPING_SOURCES.map((name, i) => ({ name, text: texts[i] }));
}

/** Cache key: every file (name and text), flags and machine, so a changed helper is never served stale. */
export function tcpingHash(sources: readonly TcpingSource[]): string {
  const h = createHash('sha256');
  for (const s of sources) h.update(s.name).update('\0').update(s.text).update('\0');
  return h.update(CFLAGS.join(' ')).update(`${process.platform}-${process.arch}`).digest('hex').slice(0, 16);
}

/** Where compiled helpers live: $XDG_CACHE_HOME/pathbench, ~/.cache/pathbench, or a per-user tmp dir. */
export function tcpingCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.XDG_CACHE_HOME) return path.join(env.XDG_CACHE_HOME, 'pathbench');
  if (env.HOME) return path.join(env.HOME, '.cache', 'pathbench');
  // SSM runs the agent as root without HOME: a per-uid directory, checked for ownership below.
  return path.join(os.tmpdir(), `pathbench-native-${process.getuid?.() ?? 'u'}`);
}

function run(
  file: string,
  args: string[],
  timeoutMs: number,
): Promise<{ code: number | null; stderr: string; error?: NodeJS.ErrnoException }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: timeoutMs, maxBuffer: 1 << 20 }, (error, _stdout, stderr) => {
      const e = error as (NodeJS.ErrnoException & { code?: string | number }) | null;
      if (e && typeof e.code === 'string') resolve({ code: null, stderr: String(stderr), error: e });
      else resolve({ code: e ? Number(e.code ?? 1) : 0, stderr: String(stderr) });
    });
  });
}

/** How long a build of other sources is kept after its last use (see compile). */
export const OTHER_BUILD_KEEP_MS = 24 * 3600 * 1000;

async function privateDir(dir: string): Promise<string | undefined> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const st = await stat(dir);
  const uid = process.getuid?.();
  // A shared tmp dir could be pre-created by someone else to plant a binary: refuse it.
  if (uid !== undefined && st.uid !== uid) return `cache dir ${dir} belongs to uid ${st.uid}, not ${uid}`;
  if ((st.mode & 0o022) !== 0) return `cache dir ${dir} is writable by group or others`;
  return undefined;
}

async function compile(cacheDir: string, compiler: string): Promise<EnsureResult> {
  if (process.platform !== 'linux') {
    return { ok: false, reason: `precise tcp-connect helper needs Linux (TCP_INFO), this is ${process.platform}` };
  }
  const sources = await loadTcpingSources();
  const hash = tcpingHash(sources);
  const bin = path.join(cacheDir, `tcping-${hash}`);
  try {
    const problem = await privateDir(cacheDir);
    if (problem) return { ok: false, reason: problem };
  } catch (e) {
    return { ok: false, reason: `cannot create cache dir ${cacheDir}: ${(e as Error).message}` };
  }
  const cached = await access(bin, constants.X_OK).then(
    () => true,
    () => false,
  );
  if (!cached) {
    // The sources are kept next to the binary (tcping-<hash>.src/) to show what was compiled.
    // They are written into a directory of this process's own, so a concurrent build of the
    // same hash never reads a file another one is still writing.
    const srcDir = `${bin}.src`;
    const buildDir = `${srcDir}.${process.pid}.tmp`;
    const tmp = `${bin}.${process.pid}.tmp`;
    await rm(buildDir, { recursive: true, force: true });
    await mkdir(buildDir, { mode: 0o700 });
    for (const s of sources) await writeFile(path.join(buildDir, s.name), s.text, { mode: 0o600 });
    const units = sources.filter((s) => s.name.endsWith('.c')).map((s) => path.join(buildDir, s.name));
    const r = await run(compiler, [...CFLAGS, '-o', tmp, ...units], 120_000);
    if (r.error?.code === 'ENOENT') {
      await rm(buildDir, { recursive: true, force: true });
      return {
        ok: false,
        reason: `${compiler} not found on PATH (AL2023: dnf install -y gcc); precise helper unavailable`,
      };
    }
    if (r.error || r.code !== 0) {
      await rm(tmp, { force: true });
      await rm(buildDir, { recursive: true, force: true });
      const first = r.stderr.split('\n').find((l) => /error/i.test(l)) ?? r.stderr.split('\n')[0] ?? '';
      return {
        ok: false,
        reason: `${compiler} failed to build the precise helper: ${first.trim() || r.error?.message}`,
      };
    }
    await chmod(tmp, 0o700);
    // Atomic: a concurrent or interrupted build never leaves a half-written binary at `bin`.
    await rename(tmp, bin);
    // The same for the sources; a concurrent build of the same hash may have put them there first.
    await rm(srcDir, { recursive: true, force: true }).catch(() => undefined);
    await rename(buildDir, srcDir).catch(() => rm(buildDir, { recursive: true, force: true }));
    // Builds of other sources are dead weight once nobody uses them; a build used in the last
    // day stays (another checkout on this machine, with other sources, may be mid-run with it:
    // every ensureTcping call refreshes its time). tcping-<hash>.c is the layout of earlier agents.
    const now = Date.now();
    for (const f of await readdir(cacheDir).catch(() => [] as string[])) {
      if (/^tcping-[0-9a-f]{16}(\.c|\.src)?$/.test(f) && !f.startsWith(`tcping-${hash}`)) {
        const p = path.join(cacheDir, f);
        const used = await stat(p).then(
          (st) => st.mtimeMs,
          () => now,
        );
        if (now - used > OTHER_BUILD_KEEP_MS) await rm(p, { recursive: true, force: true }).catch(() => undefined);
      }
    }
  }
  // Smoke test: a noexec mount or a foreign libc shows up here, not in the middle of a probe.
  const smoke = await run(bin, [], 10_000);
  if (smoke.error) return { ok: false, reason: `cannot execute ${bin}: ${smoke.error.code ?? smoke.error.message}` };
  if (smoke.code !== 2 || !smoke.stderr.includes('usage: tcping')) {
    return { ok: false, reason: `${bin} does not behave like the helper (exit ${smoke.code})` };
  }
  return { ok: true, path: bin };
}

const builds = new Map<string, Promise<EnsureResult>>();

/**
 * Compile (or reuse) the precise helper. Never throws and never fails silently: a missing
 * gcc, a failed build or an unusable cache dir comes back as `{ ok: false, reason }`.
 * Memoized per process.
 */
export function ensureTcping(opts: { cacheDir?: string; compiler?: string } = {}): Promise<EnsureResult> {
  const cacheDir = opts.cacheDir ?? tcpingCacheDir();
  const compiler = opts.compiler ?? process.env.CC ?? 'gcc';
  const key = `${cacheDir}\0${compiler}`;
  let p = builds.get(key);
  if (!p) {
    p = compile(cacheDir, compiler).catch(
      (e: unknown): EnsureResult => ({ ok: false, reason: `precise helper build crashed: ${(e as Error).message}` }),
    );
    builds.set(key, p);
  }
  // Marks the build as in use on every call, so another checkout's clean-up (compile) leaves it
  // alone while this process still runs it; best effort.
  return p.then(async (r) => {
    if (r.ok) await utimes(r.path, new Date(), new Date()).catch(() => undefined);
    return r;
  });
}
