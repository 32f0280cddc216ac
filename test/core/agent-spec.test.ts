/**
 * The agent spec's reader (`specs/run=<id>/path=<p>/spec.json`): a spec as ValidatePlan writes
 * it reads back whole, one written before skipped probes were listed still reads (as none
 * skipped), and a damaged one fails naming the key and the field. parseAgentSpec's messages are
 * pinned in test/core/plan.test.ts.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSpec } from '../../core/agent-spec.js';
import { keys } from '../../core/keys.js';
import { parsePlanText } from '../../core/plan.js';
import { specFor } from '../../functions/pipeline/validate.js';
import { DirStore } from '../../local/dir-store.js';
import { expectOk } from '../helpers/plans.js';
import { ROOT } from '../helpers/repo.js';

let dir: string;
let store: DirStore;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'pb-spec-'));
  store = new DirStore(dir);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const plan = expectOk(parsePlanText(readFileSync(path.join(ROOT, 'plans', 'local-all-probes.json'), 'utf8')));
const pathId = plan.paths[0].id;

describe('readSpec', () => {
  it('reads a spec as ValidatePlan writes it back whole', async () => {
    const spec = specFor('r1', plan, pathId);
    await store.put(keys.spec('r1', pathId, 'i-1'), `${JSON.stringify(spec, null, 2)}\n`);
    expect(await readSpec(store, 'r1', pathId, 'i-1')).toEqual(spec);
  });

  it('reads a spec written before skipped probes were listed, as none skipped', async () => {
    const { skipped: _skipped, ...earlier } = specFor('r2', plan, pathId);
    await store.put(keys.spec('r2', pathId, 'i-1'), JSON.stringify(earlier));
    expect(await readSpec(store, 'r2', pathId, 'i-1')).toEqual({ ...earlier, skipped: [] });
  });

  it('is undefined when there is none, and fails naming the key and field of a damaged one', async () => {
    expect(await readSpec(store, 'r3', pathId, 'i-1')).toBeUndefined();
    const spec = specFor('r3', plan, pathId);
    await store.put(keys.spec('r3', pathId, 'i-1'), JSON.stringify({ ...spec, target: { ...spec.target, port: 0 } }));
    await expect(readSpec(store, 'r3', pathId, 'i-1')).rejects.toThrow(
      `specs/run=r3/path=${pathId}/client=i-1/spec.json is not a valid agent spec: target.port: expected an integer ≥ 1, got 0`,
    );
  });
});
