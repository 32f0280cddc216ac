/** Reading a plan file from disk (cli/plan-file.ts): a BOM, bad JSON, a missing file, an invalid plan. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPlanFile } from '../../cli/plan-file.js';
import { expectOk, expectProblems } from '../helpers/plans.js';

/** The smallest valid plan. */
function minimal(): Record<string, unknown> {
  return {
    name: 'minimal',
    paths: [
      {
        id: 'A',
        client: { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' },
        target: { host: '10.1.0.10', port: 5201 },
        probes: [{ kind: 'tcp-connect' }],
      },
    ],
  };
}

describe('loadPlanFile', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'pb-plan-test-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads and validates a plan file', async () => {
    // Prepare
    const file = path.join(dir, 'ok.json');
    await writeFile(file, `\uFEFF${JSON.stringify(minimal())}`);

    // Act
    const plan = expectOk(await loadPlanFile(file));

    // Assess
    expect(plan.paths.map((p) => p.id)).toEqual(['A']);
  });

  it('reports a file that is not JSON', async () => {
    // Prepare
    const file = path.join(dir, 'bad.json');
    await writeFile(file, '{ "name": "x", paths: [] }');

    // Act
    const problems = expectProblems(await loadPlanFile(file));

    // Assess
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^plan: not valid JSON \(.+\)$/);
  });

  it('reports a missing file', async () => {
    // Prepare
    const file = path.join(dir, 'missing.json');

    // Act
    const problems = expectProblems(await loadPlanFile(file));

    // Assess
    expect(problems).toEqual([`plan: cannot read ${file} (ENOENT: no such file or directory)`]);
  });

  it('reports validation problems of a readable file', async () => {
    const file = path.join(dir, 'invalid.json');
    await writeFile(file, JSON.stringify({ name: 'x', paths: [] }));
    expect(expectProblems(await loadPlanFile(file))).toEqual(['paths: at least one path is required']);
  });
});
