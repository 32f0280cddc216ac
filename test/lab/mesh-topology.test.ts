/**
 * The lab mesh profile and plan as data (no root): six regions, 15 pairs each on its own queue
 * with its fibre round trip, rules in both directions, and plans/lab-mesh.json as generated.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { meshRoundLowerBound } from '../../core/mesh-schedule.js';
import { fibreRttMs, greatCircleKm, regionByCode } from '../../core/regions.js';
import { LAB_MESH_REGIONS, labMeshPairs, labMeshPlan, labMeshRttMs } from '../../lab/lab-mesh.js';
import { labProfile } from '../../lab/profiles/profile-by-name.js';
import { buildDelayRuleCommands, buildTopologyCommands } from '../../lab/topology-commands.js';
import { ROOT } from '../helpers/repo.js';

describe('lab profile mesh', () => {
  const profile = labProfile('mesh');

  it('has six region hosts, every one a client and a target, and one queue per pair', () => {
    expect(LAB_MESH_REGIONS.length).toBe(6);
    expect(profile.roles).toEqual(['router', ...LAB_MESH_REGIONS]);
    expect([profile.clientRole, ...(profile.extraClientRoles ?? [])]).toEqual(LAB_MESH_REGIONS);
    expect(profile.serverRoles).toEqual(LAB_MESH_REGIONS);
    expect(profile.paths.length).toBe(15);
    expect(new Set(profile.paths.map((p) => p.queue)).size).toBe(15);
    expect(Math.max(...profile.paths.map((p) => p.queue)) - Math.min(...profile.paths.map((p) => p.queue))).toBe(14);
  });

  it('gives each pair the fibre round trip of its real distance (route factor 1.5), several ms each', () => {
    const fra = regionByCode('eu-central-1')!;
    const dub = regionByCode('eu-west-1')!;
    expect(labMeshRttMs('eu-west-1', 'eu-central-1')).toBeCloseTo(fibreRttMs(greatCircleKm(fra, dub), 1.5), 2);
    for (const p of labMeshPairs()) expect(p.rttMs).toBeGreaterThan(4);
    expect(() => labMeshRttMs('eu-west-1', 'us-east-1')).toThrow(/not a pair of the lab mesh/);
  });

  it('sends both directions of a pair, and only that pair, to its queue', () => {
    const rules = buildDelayRuleCommands('pb-', profile).map((c) => c.join(' '));
    expect(rules.length).toBe(30);
    expect(rules).toContain(
      'ip netns exec pb-router iptables -A FORWARD -s 10.6.1.10/32 -d 10.6.3.10/32 -j NFQUEUE --queue-num 32 --queue-bypass',
    );
    expect(rules).toContain(
      'ip netns exec pb-router iptables -A FORWARD -s 10.6.3.10/32 -d 10.6.1.10/32 -j NFQUEUE --queue-num 32 --queue-bypass',
    );
    const cmds = buildTopologyCommands('pb-', profile).map((c) => c.join(' '));
    expect(cmds).toContain('ip -n pb-eu-north-1 route add default via 10.6.6.1');
  });

  it('plans/lab-mesh.json is the generated plan (npx tsx scripts/lab-mesh-plan.ts)', () => {
    const file = JSON.parse(readFileSync(join(ROOT, 'plans', 'lab-mesh.json'), 'utf8'));
    expect(file).toEqual(JSON.parse(JSON.stringify(labMeshPlan())));
    const rounds = new Set(file.paths.map((p: { mesh: { round: number } }) => p.mesh.round));
    expect(file.paths.length).toBe(30);
    expect(rounds.size).toBe(meshRoundLowerBound(6));
  });
});
