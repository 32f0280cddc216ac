/**
 * `npm start` as a user's first command on a fresh clone (root, iproute2): in a copy of the
 * repository with nothing built (test/helpers/clean-tree.ts), package.json's start
 * script with no options builds what it needs, chooses the namespace lab, brings it up when it
 * is not running, measures the seed's five paths and takes the lab down again — leaving the
 * machine as it found it. (CI runs this, not a separate `npm start`: one run of the seed plan.)
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Summary } from '../../core/run-summary.js';
import { labStatus } from '../../lab/lab.js';
import { DEFAULT_PREFIX } from '../../lab/namespace-names.js';
import { LAB_ROLES } from '../../lab/profiles/seed-000-profile.js';
import { listNamespaces } from '../../lab/sys.js';
import { DEFAULT_DATA_DIR } from '../../local/local-driver.js';
import { cleanTree } from '../helpers/clean-tree.js';
import { npmStartArgv, runCommand } from '../helpers/npm-start.js';

let clone: ReturnType<typeof cleanTree>;

const defaultLabNamespaces = async (): Promise<string[]> => {
  const mine = new Set(LAB_ROLES.map((r) => `${DEFAULT_PREFIX}${r}`));
  return (await listNamespaces()).filter((n) => mine.has(n));
};

beforeAll(async () => {
  clone = cleanTree('npm-start');
});
afterAll(async () => {
  clone.remove();
});

describe('npm start on a machine that can run the lab', () => {
  it('measures the five seed paths in the lab and leaves the machine as it found it', async () => {
    const wasUp = (await labStatus()).healthy;
    expect(existsSync(join(clone.dir, 'dist'))).toBe(false);
    // Exactly the start script, no options: the table on stdout, the data in the copy's .pathbench/.
    const r = await runCommand(npmStartArgv(), clone.dir);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    const runId = /^run (\S+): succeeded$/m.exec(r.stdout)?.[1];
    expect(runId, r.stdout.slice(-3000)).toBeDefined();
    for (const id of ['A', 'B', 'C', 'D', 'E']) expect(r.stdout).toMatch(new RegExp(`^${id}\\s`, 'm'));
    // It built the agent bundle it runs, in the copy (nothing was built there before).
    expect(existsSync(join(clone.dir, 'dist', 'agent.cjs'))).toBe(true);
    expect(r.stderr).toMatch(/runs the namespace lab \(plans\/lab-seed-000\.json\)/);
    const reports = join(clone.dir, DEFAULT_DATA_DIR, 'reports', `run=${runId}`);
    const s = JSON.parse(await readFile(join(reports, 'summary.json'), 'utf8')) as Summary;
    for (const ext of ['md', 'csv', 'html']) expect(existsSync(join(reports, `summary.${ext}`)), ext).toBe(true);
    expect(s.status).toBe('succeeded');
    expect(s.paths.map((p) => [p.id, p.status])).toEqual(['A', 'B', 'C', 'D', 'E'].map((id) => [id, 'succeeded']));
    // tcp-connect p50 in the seed's order: A < B < C < D < E.
    const p50 = s.paths.map((p) => p.results.find((x) => x.metric === 'connect_rtt_ms')?.p50 as number);
    expect([...p50].sort((a, b) => a - b)).toEqual(p50);
    if (!wasUp) {
      expect(r.stderr).toMatch(/lab removed again/);
      expect(await defaultLabNamespaces()).toEqual([]);
    }
  });
});
