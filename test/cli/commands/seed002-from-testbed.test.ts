/**
 * `plan from-testbed` on a saved seed-002 outputs file (test/fixtures/seed-002-outputs.json, the
 * shape `cdk deploy --outputs-file` writes): the nine paths with the seed's ids, probed from the
 * client service's task, and the testbed's cost note; a file missing an output is refused by name.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSeed002Plan } from '../../../cli/commands/testbed.command.js';
import { readOutputsFile } from '../../../cli/outputs-file.js';
import { loadPlanFile } from '../../../cli/plan-file.js';

const FIXTURE = join(__dirname, '..', '..', 'fixtures', 'seed-002-outputs.json');
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pb-seed002-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('plan from-testbed, seed-002 outputs', () => {
  it('writes the nine-path plan from the saved outputs and returns the cost note', async () => {
    const out = join(dir, 'plan.json');
    const { note } = await writeSeed002Plan(await readOutputsFile(FIXTURE), out);
    const loaded = await loadPlanFile(out);
    expect(loaded.ok ? [] : loaded.problems).toEqual([]);
    const plan = JSON.parse(await readFile(out, 'utf8'));
    expect(plan.paths.map((p: { id: string }) => p.id)).toEqual(['A', 'B', 'D', 'F', 'G', 'G-prime', 'H', 'L1', 'L2']);
    expect(plan.defaults.client).toEqual({
      kind: 'ecs-task',
      cluster: 'seed002',
      service: 'client',
      queueUrl: 'https://sqs.ap-northeast-1.amazonaws.com/123456789012/pathbench-client-seed002-client',
      region: 'ap-northeast-1',
    });
    expect(note).toMatch(/seed-002 testbed, fixed cost per month/);
  });

  it('names the missing output', async () => {
    const saved = JSON.parse(await readFile(FIXTURE, 'utf8'));
    delete saved.PathbenchTestbed002.Seed002NlbDnsName;
    const f = join(dir, 'partial.json');
    await writeFile(f, JSON.stringify(saved));
    await expect(writeSeed002Plan(await readOutputsFile(f), join(dir, 'x.json'))).rejects.toThrow(
      /Seed002NlbDnsName: missing/,
    );
  });
});
