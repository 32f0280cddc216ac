/**
 * The cost guard through the local driver: a plan over its budget is refused by the real ASL's
 * ValidatePlan before anything is written, and by `pathbench run` before the run starts (exit 2,
 * one line naming estimate and budget). Nothing is measured: the refused plan aims at AWS regions.
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../functions/log.js';
import { runLocal } from '../../local/local-driver.js';
import { runCommand } from '../helpers/npm-start.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

const plan = {
  name: 'over-budget',
  budgetUsd: 1,
  paths: [
    {
      id: 'ap-northeast-1_ap-northeast-3',
      client: { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' },
      target: { host: '127.0.0.1', port: 5201 },
      probes: [{ kind: 'iperf3', durationSeconds: 10 }],
      mesh: { from: 'ap-northeast-1', to: 'ap-northeast-3', distanceKm: 397.2, round: 0 },
    },
  ],
};

/** Every file under a directory, relative. */
function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}

describe('cost guard on the local driver', () => {
  it('the state machine refuses an over-budget plan before anything is written', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pathbench-cost-'));
    dirs.push(dir);
    const r = await runLocal({ plan, dataDir: dir, runId: 'over-budget', log: silentLogger });
    expect(r.execution.status).toBe('FAILED');
    expect(r.execution.error?.name).toBe('OverBudgetError');
    expect(r.execution.error?.message).toMatch(/estimated cost \$1\.4\d is over the budget of \$1\.00/);
    // No run keys, no samples, no report; only the lock machinery's own files (none held).
    expect(files(dir).filter((f) => /run=|samples|reports/.test(f))).toEqual([]);
  });

  it('`pathbench run` prints the estimate and refuses in one line with exit 2, writing nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pathbench-cost-cli-'));
    dirs.push(dir);
    const file = join(dir, 'plan.json');
    await writeFile(file, JSON.stringify(plan));
    const data = join(dir, 'data');
    const r = await runCommand([process.execPath, 'cli/pathbench.mjs', 'run', '--plan', file, '--data', data]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cost estimate \(upper bound; prices of \d{4}-\d{2}-\d{2}\)/);
    expect(r.stderr).toMatch(/ap-northeast-1→ap-northeast-3 inter-region\s+15\.6 GB\s+\$0\.0900\s+\$1\.41/);
    const last = r.stderr.trim().split('\n').at(-1)!;
    expect(last).toMatch(/^pathbench: estimated cost \$1\.4\d is over the budget of \$1\.00 \(the plan's budgetUsd\)/);
    expect(files(data)).toEqual([]);
  });
});
