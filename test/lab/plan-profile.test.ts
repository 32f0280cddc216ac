/** Which lab profile each plan in plans/ was written for; plans that are not lab plans have none. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePlan } from '../../core/plan.js';
import type { ResolvedPlan } from '../../core/resolved-plan.js';
import { labProfileForPlan } from '../../lab/plan-profile.js';
import { usesLab } from '../../local/local-driver.js';
import { ROOT } from '../helpers/repo.js';

function plan(file: string): ResolvedPlan {
  const r = parsePlan(JSON.parse(readFileSync(join(ROOT, 'plans', file), 'utf8')));
  if (!r.ok) throw new Error(r.problems.join('; '));
  return r.plan;
}

describe('labProfileForPlan', () => {
  it.each([
    ['lab-seed-000.json', 'seed-000'],
    ['lab-seed-000-no-reboot.json', 'seed-000'],
    ['lab-seed-000-nlb.json', 'seed-000-nlb'],
    ['lab-ping.json', 'seed-000-nlb'],
    ['lab-bimodal.json', 'seed-000'],
    ['lab-seed-002.json', 'seed-002'],
    ['lab-seed-004.json', 'seed-004'],
    ['lab-mesh.json', 'mesh'],
  ])('%s runs on the %s profile, in the lab', (file, profile) => {
    expect(labProfileForPlan(plan(file))).toBe(profile);
    expect(usesLab(plan(file))).toBe(true);
  });

  it.each(['local-loopback.json', 'local-all-probes.json', 'seed-000-tokyo-osaka.example.json'])(
    '%s is not a lab plan',
    (file) => {
      expect(labProfileForPlan(plan(file))).toBeUndefined();
      expect(usesLab(plan(file))).toBe(false);
    },
  );

  it('knows a renamed seed-004 plan by its clients and targets', () => {
    const p = plan('lab-seed-004.json');
    expect(labProfileForPlan({ ...p, name: 'my-az-pairs' })).toBe('seed-004');
  });
});
