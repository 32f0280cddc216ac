/**
 * A local run whose data directory fills up (a small tmpfs, filled but for a little room) while a
 * path's raw output is stored: the error names the file and says the disk is full, no temporary
 * file is left behind, the lock is released and the manifest does not stay `running`; once there
 * is room again, the next run stores what the agent measured and keeps it on that path.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdtemp, rm, statfs, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readManifest } from '../../core/run-manifest.js';
import type { Logger } from '../../functions/ports.js';
import { DirStore } from '../../local/dir-store.js';
import { FileLock } from '../../local/file-lock.js';
import { runLocal } from '../../local/local-driver.js';

let dir: string;
let server: net.Server;
let port: number;
let mounted = false;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pathbench-full-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir]);
  mounted = true;
  server = net.createServer((s) => s.destroy());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  // Lazily: a handle the engine keeps until garbage collection would make a plain umount fail.
  if (mounted) execFileSync('umount', ['--lazy', dir]);
  await rm(dir, { recursive: true, force: true });
});

function plan(name: string, count: number) {
  return {
    name,
    defaults: {
      client: { instanceId: 'local', region: 'local' },
      reboot: false,
      creditWaitSeconds: 0,
      probes: [{ kind: 'tcp-connect', count, intervalMs: 1, timeoutMs: 400 }],
    },
    paths: [{ id: 'big', label: 'big output', target: { host: '127.0.0.1', port } }],
  };
}

function filesNamed(root: string, re: RegExp): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (re.test(e.name)) out.push(join(d, e.name));
    }
  };
  walk(root);
  return out;
}

const lines: string[] = [];
const log: Logger = {
  info() {},
  warn: (m: string, d?: unknown) => void lines.push(`${m}${d ? ` ${JSON.stringify(d)}` : ''}`),
  error: (m: string, d?: unknown) => void lines.push(`${m}${d ? ` ${JSON.stringify(d)}` : ''}`),
};

it('a full data directory: named, no temporary file left, lock released, samples kept by the next run', async () => {
  // Room for the run's small documents, not for 3,000 samples of raw output (~300 KB).
  const { bavail, bsize } = await statfs(dir);
  await writeFile(join(dir, 'filler'), Buffer.alloc(bavail * bsize - 160 * 1024));
  const first = await runLocal({ plan: plan('full-disk', 3000), dataDir: dir, runId: 'full-disk-1', log });
  const store = new DirStore(dir);
  const m = await readManifest(store, 'full-disk-1');
  const said = [JSON.stringify(first.execution.error ?? {}), JSON.stringify(m ?? {}), ...lines].join('\n');
  expect(said).toMatch(/writing \S+\/raw\/path=big\/\S+: no space left on the disk of the data directory \(ENOSPC\)/);
  expect(filesNamed(dir, /\.tmp-/)).toEqual([]);
  expect(await new FileLock(dir).current()).toBeUndefined();
  expect(m?.status).not.toBe('running');

  // Room again: the next run stores what the first one's agent measured, on its path.
  await rm(join(dir, 'filler'));
  const second = await runLocal({ plan: plan('full-disk', 5), dataDir: dir, runId: 'full-disk-2', log });
  expect(second.execution.status).toBe('SUCCEEDED');
  const after = await readManifest(store, 'full-disk-1');
  const big = after?.paths.find((p) => p.id === 'big');
  expect(big?.notes.join('\n'), lines.join('\n')).toMatch(/kept 3000 samples of tcp-connect/);
  expect(readdirSync(join(dir, '.agents'))).toEqual([]);
}, 240_000);
