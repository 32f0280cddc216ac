/**
 * `pathbench plan mesh` (cli/commands/plan.command.ts): every directed pair, the probes aimed at the
 * right listeners (tcp-connect at the agent's TCP port, iperf3 at iperf3's), and clear errors.
 */
import { describe, expect, it } from 'vitest';
import { meshPlanFromFlags } from '../../../cli/commands/plan.command.js';
import { meshRoundLowerBound } from '../../../core/mesh-schedule.js';
import { parsePlan } from '../../../core/plan.js';
import { TARGET_PORTS } from '../../../core/target-ports.js';

describe('plan mesh', () => {
  it('plans every directed pair, tcp-connect to the TCP listener and iperf3 to its own port', () => {
    const { plan } = meshPlanFromFlags({ name: 'm', regions: 'eu-west-1,eu-central-1,us-east-1,ap-northeast-1' });
    const parsed = parsePlan(plan);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.plan.paths).toHaveLength(12);
    expect(new Set(parsed.plan.paths.map((p) => p.mesh?.round)).size).toBe(meshRoundLowerBound(4));
    for (const p of parsed.plan.paths) {
      expect(p.target.port, p.id).toBe(TARGET_PORTS.tcp);
      const byKind = Object.fromEntries(p.probes.map((x) => [x.kind, x]));
      expect(Object.keys(byKind).sort()).toEqual(['iperf3', 'tcp-connect']);
      expect((byKind.iperf3 as { port?: number }).port).toBe(TARGET_PORTS.iperf3);
    }
  });

  it('refuses an unknown region and a region listed twice, naming them', () => {
    expect(() => meshPlanFromFlags({ name: 'm', regions: 'eu-west-1,mars-north-1' })).toThrow(/mars-north-1/);
    expect(() => meshPlanFromFlags({ name: 'm', regions: 'eu-west-1,eu-west-1' })).toThrow(/listed twice/);
  });
});
