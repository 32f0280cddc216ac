import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPlanFile } from '../../functions/core/plan.js';
import { ROOT } from '../../functions/local/run-machine.js';

const files = readdirSync(join(ROOT, 'plans')).filter((f) => f.endsWith('.json'));

describe('example plans', () => {
  it('includes the loopback, lab, seed 000 and seed 002 plans', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'local-loopback.json',
        'lab-seed-000.json',
        'seed-000-tokyo-osaka.example.json',
        'seed-002-ecs-http.example.json',
      ]),
    );
  });

  it.each(files)('%s passes the plan validator', async (f) => {
    const r = await loadPlanFile(join(ROOT, 'plans', f));
    expect(r.ok ? [] : r.problems).toEqual([]);
  });
});
