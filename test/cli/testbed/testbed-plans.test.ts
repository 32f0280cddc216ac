/**
 * `plan from-testbed` on saved outputs files (test/fixtures/testbed-outputs.json and
 * seed-002-outputs.json, the shape `cdk deploy --outputs-file` writes): each testbed's plan is
 * told apart by its outputs; seed 002's nine paths with the seed's ids, probed from the client
 * service's task, and the testbed's cost note; a file missing an output is refused by name.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOutputsFile } from '../../../cli/outputs-file.js';
import { loadPlanFile } from '../../../cli/plan-file.js';
import { writePlanFromOutputs, writeSeed002Plan } from '../../../cli/testbed/testbed-plans.js';
import { MESH_HOST_OUTPUT } from '../../../infra/testbed/mesh-plan.js';

const FIXTURE = join(__dirname, '..', '..', 'fixtures', 'seed-002-outputs.json');
const SEED000_FIXTURE = join(__dirname, '..', '..', 'fixtures', 'testbed-outputs.json');
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

describe('writePlanFromOutputs', () => {
  it("writes each testbed's plan, told apart by its outputs", async () => {
    const seed000 = join(dir, 'seed000.json');
    const a = await writePlanFromOutputs(await readOutputsFile(SEED000_FIXTURE), seed000);
    expect(a.summary).toBeUndefined();
    expect(a.note).toMatch(/^Testbed fixed cost/);
    const planA = JSON.parse(await readFile(seed000, 'utf8'));
    expect(planA.paths.map((p: { id: string }) => p.id)).toEqual(['A', 'B', 'C', 'C-NLB', 'D', 'D-NLB', 'E']);

    const seed002 = join(dir, 'seed002.json');
    const b = await writePlanFromOutputs(await readOutputsFile(FIXTURE), seed002);
    expect(b.note).toMatch(/seed-002 testbed/);
    expect(JSON.parse(await readFile(seed002, 'utf8')).paths).toHaveLength(9);

    const mesh = join(dir, 'nested', 'mesh.json');
    const outputs = Object.fromEntries(
      ['eu-west-1', 'eu-central-1', 'eu-north-1'].map((region, i) => [
        `PathbenchMesh-${region}`,
        {
          [MESH_HOST_OUTPUT]: JSON.stringify({
            region,
            instanceId: `i-0${i}aaaaaaaaaaaaaaa`,
            ip: `10.${100 + i}.0.10`,
            cidr: `10.${100 + i}.0.0/16`,
          }),
        },
      ]),
    );
    const c = await writePlanFromOutputs(outputs, mesh);
    expect(c.summary).toMatch(/^6 pairs in \d+ rounds \(lower bound \d+\)$/);
    const planC = await loadPlanFile(mesh);
    expect(planC.ok ? [] : planC.problems).toEqual([]);
  });
});
