/**
 * `pathbench run --local` as the README shows it: a loopback plan gets its targets started (and
 * stopped) by the command itself, and a plan whose every sample failed says so and exits 1.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Summary } from '../../core/run-summary.js';
import { LOOPBACK_PORTS, listening } from '../../local/targets.js';
import { runCommand } from '../helpers/npm-start.js';
import { ROOT } from '../helpers/repo.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pathbench-run-local-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const cli = (...args: string[]) => runCommand([process.execPath, join(ROOT, 'cli', 'pathbench.mjs'), ...args]);

describe('run --local', () => {
  it('starts the loopback targets the plan aims at, measures, and stops them again', async () => {
    expect(await listening(LOOPBACK_PORTS.tcp)).toBe(false);
    // As the crontab line of `schedule create` runs it: the runs table says so.
    const r = await cli(
      'run',
      '--local',
      '--plan',
      'plans/local-loopback.json',
      '--data',
      dir,
      '--json',
      '--trigger',
      'schedule',
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('pathbench: loopback targets: agent serve: tcp 29101');
    const s = JSON.parse(r.stdout) as Summary;
    const plain = s.paths.find((p) => p.id === 'plain');
    expect(plain?.results[0].n).toBe(200);
    expect(plain?.results[0].loss).toBe(0);
    expect(s.paths.find((p) => p.id === 'closed')?.results[0].loss).toBe(1);
    expect(s.notes).toBeUndefined();
    const row = JSON.parse(await readFile(join(dir, 'tables', 'runs', `${s.runId}.json`), 'utf8'));
    expect(row).toMatchObject({ run_id: s.runId, driver: 'local', started_by: 'schedule' });
    // Plain progress lines off a terminal: one per step, none repeated for the poll loop.
    expect(r.stderr).toMatch(/✓ \[1\/3 plain\] {2}done {2}in \d+:\d\d {2}200\/200 samples/);
    expect(r.stderr.match(/\[1\/3 plain\] probing/g)).toHaveLength(1);
    expect(await listening(LOOPBACK_PORTS.tcp)).toBe(false);
  });

  it('refuses a trigger it does not know before anything starts', async () => {
    const r = await cli('run', '--local', '--plan', 'plans/local-loopback.json', '--data', dir, '--trigger', 'cron');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--trigger: expected cli or schedule, got "cron"');
  });

  it('says plainly when every sample of every path failed, with the likely cause, and exits 1', async () => {
    const plan = join(dir, 'closed.json');
    await writeFile(
      plan,
      JSON.stringify({
        name: 'closed-only',
        defaults: {
          client: { instanceId: 'local', region: 'local' },
          reboot: false,
          creditWaitSeconds: 0,
          probes: [{ kind: 'tcp-connect', count: 10, intervalMs: 5, timeoutMs: 300 }],
        },
        paths: [{ id: 'closed', label: 'closed port', target: { host: '127.0.0.1', port: 29103 } }],
      }),
    );
    const r = await cli('run', '--local', '--plan', plan, '--data', dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /pathbench: nothing was measured: every sample of every path failed \(refused ×10\); likely cause: nothing listens at the targets/,
    );
    expect(r.stdout).toContain('note: nothing was measured');
  });
});
