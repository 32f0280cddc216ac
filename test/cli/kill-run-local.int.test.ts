/**
 * `pathbench run --local` killed with SIGKILL while a path is probing (a real kill -9 of the real
 * CLI process): its agent must not probe on as an orphan, and the next run on the same data
 * directory salvages what that agent measured into the abandoned run's path.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readManifest } from '../../core/run-manifest.js';
import { DirStore } from '../../local/dir-store.js';
import { runCommand } from '../helpers/npm-start.js';
import { ROOT } from '../helpers/repo.js';

let dir: string;
let server: net.Server;
let port: number;
const started: ChildProcess[] = [];
const agents: number[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pathbench-kill-run-'));
  server = net.createServer((s) => s.destroy());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const pid of agents) if (alive(pid)) process.kill(-pid, 'SIGKILL');
  await new Promise<void>((r) => server.close(() => r()));
  await rm(dir, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    // A zombie is dead: only its exit status is left.
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Processes whose parent is `ppid` and whose command line has `needle`. */
function childrenOf(ppid: number, needle: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) !== ppid) continue;
      if (readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(needle)) out.push(Number(e));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

async function until<T>(what: string, f: () => T | undefined, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function plan(name: string, count: number) {
  return {
    name,
    defaults: {
      client: { instanceId: 'local', region: 'local' },
      reboot: false,
      creditWaitSeconds: 0,
      probes: [{ kind: 'tcp-connect', count, intervalMs: 5, timeoutMs: 400 }],
    },
    paths: [{ id: 'long', label: 'long probe', target: { host: '127.0.0.1', port } }],
  };
}

it('a kill -9 of run --local mid-probe leaves no agent running, and the next run salvages its samples', async () => {
  const long = join(dir, 'long.json');
  await writeFile(long, JSON.stringify(plan('kill-long', 6000)));
  const cli = spawn(
    process.execPath,
    [join(ROOT, 'cli', 'pathbench.mjs'), 'run', '--local', '--plan', long, '--data', dir, '--run-id', 'killed-run'],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  started.push(cli);
  let stderr = '';
  cli.stderr?.on('data', (b: Buffer) => {
    stderr += b.toString();
  });
  const pid = cli.pid as number;
  const agent = await until(
    'the agent to start',
    () => childrenOf(pid, join(ROOT, 'dist', 'agent.cjs')).at(0),
    120_000,
  );
  agents.push(agent);
  // Let it measure a few hundred samples (one line each in its output directory).
  const argv = readFileSync(`/proc/${agent}/cmdline`, 'utf8').split('\0');
  const out = argv[argv.indexOf('--out') + 1];
  const measured = () => {
    let lines = 0;
    const walk = (d: string): void => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(d, e.name));
        else if (e.name.endsWith('.jsonl')) lines += readFileSync(join(d, e.name), 'utf8').split('\n').length - 1;
      }
    };
    try {
      walk(out);
    } catch {
      // not written yet
    }
    return lines;
  };
  await until('samples', () => (measured() >= 300 ? true : undefined), 60_000);
  expect(alive(agent), stderr).toBe(true);
  const exited = new Promise((r) => cli.once('close', r));
  process.kill(pid, 'SIGKILL');
  await exited;
  // The agent dies with the run that started it; it does not probe on for the rest of its 30 s.
  await until('the orphaned agent to end', () => (alive(agent) ? undefined : true), 5000);

  const short = join(dir, 'short.json');
  await writeFile(short, JSON.stringify(plan('kill-short', 5)));
  const next = await runCommand([
    process.execPath,
    join(ROOT, 'cli', 'pathbench.mjs'),
    'run',
    '--local',
    '--plan',
    short,
    '--data',
    dir,
  ]);
  expect(next.code, next.stderr).toBe(0);
  const kept = /cleanup after abandoned run killed-run: .*path long: kept (\d+) sample\(s\)/.exec(next.stderr);
  expect(kept, next.stderr).not.toBeNull();
  expect(Number(kept?.[1])).toBeGreaterThanOrEqual(300);
  const m = await readManifest(new DirStore(dir), 'killed-run');
  expect(m?.status).toBe('failed');
  const p = m?.paths.find((x) => x.id === 'long');
  expect(p?.notes.join('\n')).toMatch(/kept \d+ samples of tcp-connect/);
  // The agent's temporary directory was collected and removed.
  expect(readdirSync(join(dir, '.agents')).filter((f) => !f.startsWith('.'))).toEqual([]);
}, 240_000);
