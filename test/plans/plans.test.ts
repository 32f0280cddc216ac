import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPlanFile } from '../../cli/plan-file.js';
import { LOOPBACK_CLOSED_PORT, LOOPBACK_PORTS } from '../../local/targets.js';
import { ROOT } from '../helpers/repo.js';

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

  it.each(files.filter((f) => f.startsWith('local-')))(
    '%s uses only the loopback targets, all below the ephemeral port range',
    async (f) => {
      const r = await loadPlanFile(join(ROOT, 'plans', f));
      if (!r.ok) throw new Error(r.problems.join('; '));
      const ports = r.plan.paths.flatMap((p) => [
        p.target.port,
        ...(p.probes ?? []).flatMap((x) => ('port' in x && x.port !== undefined ? [x.port] : [])),
      ]);
      expect(ports.length).toBeGreaterThan(0);
      for (const port of ports) expect(port).toBeLessThan(32768);
      const known = new Set<number>([...Object.values(LOOPBACK_PORTS), LOOPBACK_CLOSED_PORT]);
      for (const port of ports) expect(known.has(port), `port ${port}`).toBe(true);
    },
  );
});
