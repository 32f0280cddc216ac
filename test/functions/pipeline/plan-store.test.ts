/**
 * Named plans over a directory store: validated before storing (problems name the field), stored
 * under the plan's own name as written, listed, removed, and every replaced or removed version
 * kept under plans/history/ (a directory has no object versions).
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PlanInvalidError } from '../../../core/errors.js';
import { PlanStore } from '../../../functions/pipeline/plan-store.js';
import { DirStore } from '../../../local/dir-store.js';
import { ROOT } from '../../helpers/repo.js';
import { tempDataDir } from '../../helpers/samples.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function store() {
  const dir = await tempDataDir('plans');
  dirs.push(dir);
  let t = Date.UTC(2026, 11, 1);
  return {
    dir,
    plans: new PlanStore(new DirStore(dir), {
      copyHistory: true,
      now: () => {
        t += 1000;
        return new Date(t);
      },
    }),
  };
}

const plan = (name: string, count = 10) =>
  JSON.stringify({
    name,
    defaults: {
      client: { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' },
      probes: [{ kind: 'tcp-connect', count }],
    },
    paths: [{ id: 'A', target: { host: '10.0.0.1', port: 7000 } }],
  });

describe('PlanStore', () => {
  it('stores, lists, gets, replaces with history and removes', async () => {
    const { dir, plans } = await store();
    expect(await plans.put('weekly tokyo', plan('weekly tokyo'))).toEqual({
      replaced: false,
      bytes: expect.any(Number),
    });
    await plans.put('b', plan('b'));
    expect(await plans.list()).toEqual(['b', 'weekly tokyo']);
    expect(await plans.text('weekly tokyo')).toBe(plan('weekly tokyo'));
    expect(await readFile(join(dir, 'plans', 'weekly%20tokyo.json'), 'utf8')).toBe(plan('weekly tokyo'));
    expect((await plans.put('weekly tokyo', plan('weekly tokyo', 20))).replaced).toBe(true);
    expect(await plans.get('weekly tokyo')).toMatchObject({ defaults: { probes: [{ count: 20 }] } });
    expect(await plans.rm('weekly tokyo')).toBe(true);
    expect(await plans.rm('weekly tokyo')).toBe(false);
    expect(await plans.get('weekly tokyo')).toBeUndefined();
    expect(await plans.list()).toEqual(['b']);
    // both earlier versions are kept, oldest first
    const history = await plans.history('weekly tokyo');
    expect(history).toHaveLength(2);
    expect(JSON.parse((await new DirStore(dir).getText(history[0])) ?? '')).toMatchObject({
      defaults: { probes: [{ count: 10 }] },
    });
    expect(JSON.parse((await new DirStore(dir).getText(history[1])) ?? '')).toMatchObject({
      defaults: { probes: [{ count: 20 }] },
    });
  });

  it('refuses an invalid plan before storing anything, naming the field', async () => {
    const { plans } = await store();
    const bad = JSON.stringify({ name: 'x', paths: [{ id: 'A', target: { host: '10.0.0.1', port: 70000 } }] });
    await expect(plans.put('x', bad)).rejects.toThrow(PlanInvalidError);
    await expect(plans.put('x', bad)).rejects.toThrow(/paths\[0\]\.target\.port/);
    await expect(plans.put('x', '{')).rejects.toThrow(PlanInvalidError);
    await expect(plans.put('other', plan('x'))).rejects.toThrow(/name: the plan calls itself "x", not "other"/);
    await expect(plans.put('../x', plan('../x'))).rejects.toThrow(/name: not a valid plan name/);
    expect(await plans.list()).toEqual([]);
  });

  it("stores the repository's largest plan, and one over 4 KB", async () => {
    const { plans } = await store();
    const text = await readFile(join(ROOT, 'plans', 'seed-002-ecs-http.example.json'), 'utf8');
    const name = JSON.parse(text).name;
    await plans.put(name, text);
    expect(await plans.text(name)).toBe(text);
    const big = JSON.parse(plan('big'));
    // 10 paths: within one execution's history (plan put holds plans to the limits runs are held to).
    big.paths = Array.from({ length: 10 }, (_, i) => ({
      id: `P${i}`,
      label: `path ${i} `.repeat(24).trim(),
      skipProbes: [{ probe: 'tcp-connect', reason: 'kept short here '.repeat(10).trim() }],
      target: { host: '10.0.0.1', port: 7000 },
    }));
    const bigText = JSON.stringify(big, null, 2);
    expect(Buffer.byteLength(bigText)).toBeGreaterThan(4096);
    expect((await plans.put('big', bigText)).bytes).toBe(Buffer.byteLength(bigText));
    expect(await plans.get('big')).toEqual(big);
  });

  it('refuses a plan no run would accept (over the service limits), storing nothing', async () => {
    // Prepare: valid path by path, but 2,000 paths' items are over one execution's payload.
    const { plans } = await store();
    const big = JSON.parse(plan('huge'));
    big.paths = Array.from({ length: 2_000 }, (_, i) => ({ id: `p${i}`, target: { host: '10.0.0.1', port: 7000 } }));

    // Act + Assess
    await expect(plans.put('huge', JSON.stringify(big))).rejects.toThrow(
      /paths: the execution carries 2,000 path items .* over the [\d,]+ bytes left under Step Functions' payload limit of 262,144 bytes \(256 KiB\); the first [\d,]+ paths fit — split the plan/,
    );
    expect(await plans.list()).toEqual([]);
    await expect(plans.put('huge', plan('huge'))).resolves.toMatchObject({ replaced: false });
  });
});
