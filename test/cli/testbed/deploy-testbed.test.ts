/**
 * `deploy --testbed` and `destroy --testbed` as the cdk arguments they run (the runner records
 * them and, as `cdk deploy --outputs-file` does, saves the outputs), then the plan written from
 * the saved outputs.
 */
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployTestbed, destroyTestbed } from '../../../cli/testbed/deploy-testbed.js';

const FIXTURE = join(__dirname, '..', '..', 'fixtures', 'testbed-outputs.json');
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pb-deploy-testbed-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('deployTestbed', () => {
  it('prints the cost note, deploys every testbed stack saving the outputs, then writes the A–E plan', async () => {
    const outputsFile = join(dir, 'out', 'testbed-outputs.json');
    const planOut = join(dir, 'plan.json');
    const calls: string[][] = [];
    const lines: string[] = [];
    const code = await deployTestbed({
      outputsFile,
      planOut,
      yes: true,
      instanceType: 'c6in.large',
      context: { testbedClientRegion: 'ap-northeast-1' },
      log: (t) => lines.push(t),
      run: async (args) => {
        calls.push(args);
        await copyFile(FIXTURE, outputsFile);
        return 0;
      },
    });
    expect(code).toBe(0);
    expect(calls).toEqual([
      [
        ...['deploy', '-c', 'testbed=true', '-c', 'testbedClientRegion=ap-northeast-1'],
        ...['-c', 'testbedInstanceType=c6in.large', '--all', '--outputs-file', outputsFile],
        ...['--require-approval', 'never'],
      ],
    ]);
    expect(lines[0]).toMatch(/^Testbed fixed cost/);
    expect(lines[1]).toMatch(new RegExp(`^plan written to ${planOut}\\n`));
    const plan = JSON.parse(await readFile(planOut, 'utf8'));
    expect(plan.paths.map((p: { id: string }) => p.id)).toEqual(['A', 'B', 'C', 'C-NLB', 'D', 'D-NLB', 'E']);
  });

  it("returns cdk's exit code and writes no plan when the deploy fails", async () => {
    const planOut = join(dir, 'never.json');
    const code = await deployTestbed({ outputsFile: join(dir, 'o2.json'), planOut, log: () => {}, run: async () => 3 });
    expect(code).toBe(3);
    await expect(readFile(planOut, 'utf8')).rejects.toThrow(/ENOENT/);
  });
});

describe('destroyTestbed', () => {
  it('destroys the testbed stacks only, routes stack first', async () => {
    const calls: string[][] = [];
    const run = async (args: string[]) => {
      calls.push(args);
      return 0;
    };
    await destroyTestbed({ run });
    await destroyTestbed({ prefix: 'Tb', yes: true, run });
    expect(calls).toEqual([
      ['destroy', '-c', 'testbed=true', 'PathbenchTestbedPeerRoutes', 'PathbenchTestbedClient', 'PathbenchTestbedPeer'],
      ['destroy', '-c', 'testbed=true', 'TbPeerRoutes', 'TbClient', 'TbPeer', '--force'],
    ]);
  });
});
