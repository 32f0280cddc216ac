/**
 * `npm start` as CI's machine runs it (root, iproute2): package.json's start script with no
 * options chooses the namespace lab, brings it up when it is not running, measures the seed's
 * five paths and takes the lab down again — leaving the machine as it found it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Summary } from '../../core/run-summary.js';
import { labStatus } from '../../lab/lab.js';
import { DEFAULT_PREFIX } from '../../lab/namespace-names.js';
import { LAB_ROLES } from '../../lab/profiles/seed-000-profile.js';
import { listNamespaces } from '../../lab/sys.js';
import { npmStartArgv, runCommand } from '../helpers/npm-start.js';

let dir: string;

const defaultLabNamespaces = async (): Promise<string[]> => {
  const mine = new Set(LAB_ROLES.map((r) => `${DEFAULT_PREFIX}${r}`));
  return (await listNamespaces()).filter((n) => mine.has(n));
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pathbench-npm-start-lab-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('npm start on a machine that can run the lab', () => {
  it('measures the five seed paths in the lab and leaves the machine as it found it', async () => {
    const wasUp = (await labStatus()).healthy;
    const r = await runCommand([...npmStartArgv(), '--data', dir, '--json']);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(r.stderr).toMatch(/runs the namespace lab \(plans\/lab-seed-000\.json\)/);
    const s = JSON.parse(r.stdout) as Summary;
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
