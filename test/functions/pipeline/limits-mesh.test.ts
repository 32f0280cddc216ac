/**
 * The limits of mesh plans: on the sequential machine a 2070-pair mesh is refused with the number
 * that breaks and told to use the mesh machine; on the mesh machine it is judged per child
 * execution and per round, and accepted. ValidatePlan runs with the real local store and lock.
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { PlanInvalidError } from '../../../core/errors.js';
import { keys } from '../../../core/keys.js';
import { type MeshSite, meshLayout, meshPlanInput } from '../../../core/mesh-schedule.js';
import { parsePlan } from '../../../core/plan.js';
import { REGIONS } from '../../../core/regions.js';
import {
  HISTORY_EVENT_LIMIT,
  meshChildEventBound,
  meshParentEventBound,
  pathEventBound,
} from '../../../functions/pipeline/limits.js';
import { validatePlanStep } from '../../../functions/pipeline/validate.js';
import { scenarioDeps } from '../../helpers/fakes.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function setup() {
  const s = await scenarioDeps();
  cleanups.push(async () => {
    s.query.close();
    await rm(s.dir, { recursive: true, force: true });
  });
  return s;
}

/** 46 sites: the table's regions, then second instances. */
function mesh46() {
  const sites: MeshSite[] = REGIONS.map((r) => ({ code: r.code, lat: r.lat, lon: r.lon }));
  for (let i = 0; sites.length < 46; i++) sites.push({ ...sites[i], code: `${REGIONS[i].code}-b` });
  const layout = meshLayout(sites);
  return meshPlanInput('mesh 46', layout, (code) => ({
    instanceId: `i-${code}`,
    region: code,
    host: `${code}.mesh.test`,
    port: 7000,
  }));
}

async function validate(deps: Parameters<typeof validatePlanStep>[0], plan: unknown, mode?: 'mesh') {
  return validatePlanStep(deps, { input: { plan }, runId: 'm46', startedAt: '2026-12-01T00:00:00.000Z', mode });
}

describe('mesh plan limits', () => {
  it('refuses the 2,070-pair mesh on the sequential machine with the numbers that break, pointing at the mesh machine', async () => {
    const { deps, store } = await setup();
    const e = await validate(deps, mesh46()).catch((x) => x);
    expect(e).toBeInstanceOf(PlanInvalidError);
    const text = (e as PlanInvalidError).problems.join('\n');
    expect(text).toMatch(
      /paths: the execution carries 2,070 path items .* payload limit .* the first [\d,]+ paths fit — run it on the mesh state machine/,
    );
    expect(await store.list('')).toEqual([]);
  });

  it('accepts it on the mesh machine: each child and the parent well under 25,000 events; one item list per round', async () => {
    const { deps, store } = await setup();
    const plan = parsePlan(mesh46());
    if (!plan.ok) throw new Error(plan.problems.join('\n'));
    const child = Math.max(...plan.plan.paths.map((p) => meshChildEventBound(p, deps.fleet.pollSeconds)));
    expect(child).toBeLessThan(HISTORY_EVENT_LIMIT);
    expect(child).toBe(pathEventBound(plan.plan.paths[0], deps.fleet.pollSeconds));
    expect(meshParentEventBound(90)).toBeLessThan(HISTORY_EVENT_LIMIT);

    const out = await validate(deps, mesh46(), 'mesh');
    expect(out.chunks).toEqual([]);
    expect(out.mesh).toEqual({ bucket: store.location, rounds: 90, round: 0 });
    expect(Buffer.byteLength(JSON.stringify(out))).toBeLessThan(1000);
    const round0 = JSON.parse((await store.getText(keys.meshRound('m46', 0)))!) as { id: string }[];
    expect(round0).toHaveLength(23);
    const regions = round0.flatMap((p) => p.id.split('--'));
    expect(new Set(regions).size).toBe(46);
  });

  it('refuses a round that puts one region in two tests', () => {
    const plan = mesh46() as { paths: { mesh: { round: number } }[] };
    plan.paths[1].mesh.round = plan.paths[0].mesh.round === 0 ? 0 : plan.paths[0].mesh.round;
    plan.paths[1] = { ...plan.paths[1], mesh: { ...plan.paths[1].mesh, round: 0 } };
    const same = { ...plan, paths: [plan.paths[0], { ...plan.paths[0], id: 'copy', mesh: { ...plan.paths[0].mesh } }] };
    const r = parsePlan(same);
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.problems.join('\n')).toMatch(
        /is already in a test of round 0 \(paths\[0\]\); a region takes part in one test a round/,
      );
  });
});
