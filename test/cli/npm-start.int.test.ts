/**
 * `npm start` is the README's main job: this runs the exact command line of package.json's
 * `start` script, `run --local` (the loopback plan chosen explicitly, so no namespaces are needed here; the
 * lab suite runs it with the automatic choice) and checks what a user gets.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Summary } from '../../core/run-summary.js';
import { LOOPBACK_PORTS } from '../../local/targets.js';
import { expectHonestComparisons } from '../helpers/honest-comparisons.js';
import { npmStartArgv, runCommand } from '../helpers/npm-start.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pathbench-npm-start-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('npm start', () => {
  it('is a command the CLI knows', async () => {
    const argv = npmStartArgv();
    const r = await runCommand([...argv, '--help']);
    expect(r.code, r.stderr).toBe(0);
    // The subcommand's own help, not the program's (an unknown command would print that).
    expect(argv.slice(-2)).toEqual(['run', '--local']);
    expect(r.stdout).toMatch(/^Usage: pathbench run \[options\]/m);
  });

  it('runs the loopback plan end to end: its own listeners, a summary table, reports on disk', async () => {
    const data = join(dir, 'data');
    const r = await runCommand([...npmStartArgv(), '--plan', 'plans/local-loopback.json', '--data', data]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/loopback targets: /);
    expect(r.stdout).toMatch(/^run \S+: succeeded/m);
    for (const id of ['plain', 'slow-accept', 'closed']) expect(r.stdout).toContain(id);
    const runId = /^run (\S+): /m.exec(r.stdout)?.[1] as string;
    for (const ext of ['json', 'md', 'csv', 'html']) {
      expect(existsSync(join(data, 'reports', `run=${runId}`, `summary.${ext}`))).toBe(true);
    }
    const s = JSON.parse(readFileSync(join(data, 'reports', `run=${runId}`, 'summary.json'), 'utf8')) as Summary;
    expect(s.paths.map((p) => p.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expectHonestComparisons(s);
    // Nothing left listening: the run's own targets are gone with it.
    for (const port of [LOOPBACK_PORTS.tcp, LOOPBACK_PORTS.slowAccept, LOOPBACK_PORTS.http]) {
      const server = net.createServer();
      await new Promise<void>((ok, bad) => server.once('error', bad).listen(port, '127.0.0.1', () => ok()));
      await new Promise<void>((ok) => server.close(() => ok()));
    }
  });
});
