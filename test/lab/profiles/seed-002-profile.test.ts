import { describe, expect, it } from 'vitest';
import { queuesByRole } from '../../../lab/profiles/lab-profile.js';
import { labProfile } from '../../../lab/profiles/profile-by-name.js';
import { buildDelayRuleCommands, buildTopologyCommands } from '../../../lab/topology-commands.js';

describe('the seed-002 lab profile', () => {
  const p = labProfile('seed-002');

  it("has the seed's path ids and a real proxy where the cloud has one", () => {
    expect(p.paths.map((x) => x.id).sort()).toEqual(['A', 'B', 'D', 'F', 'G', 'G-prime', 'H', 'L1', 'L2']);
    expect(p.proxies?.map((x) => `${x.name}:${x.mode}`)).toEqual([
      'sc-client:http',
      'sc-server:http',
      'nlb:tcp',
      'endpoint:tcp',
      'lattice:http',
    ]);
    // D's front is the client's own sidecar, which hands on to the server's sidecar.
    const sc = p.proxies!.find((x) => x.name === 'sc-client')!;
    expect(sc.listen.ip).toBe(p.paths.find((x) => x.id === 'D')!.targetIp);
    expect(p.proxies!.find((x) => x.name === 'sc-server')!.listen).toEqual(sc.server);
    // G goes through the endpoint to the same NLB G-prime reaches directly.
    const nlb = p.proxies!.find((x) => x.name === 'nlb')!;
    expect(p.proxies!.find((x) => x.name === 'endpoint')!.server).toEqual(nlb.listen);
    expect(nlb.listen.ip).toBe(p.paths.find((x) => x.id === 'G-prime')!.targetIp);
  });

  it('gives D and L1 no delay of their own, and B its rules before the proxies', () => {
    const rules = buildDelayRuleCommands('pb-', p).map((c) => c.join(' '));
    expect(rules.some((r) => r.includes('--queue-num 5 '))).toBe(false); // D
    expect(rules.some((r) => r.includes('--queue-num 3 '))).toBe(false); // L1
    expect([...queuesByRole(p).values()].flat()).not.toContain(5);
    const firstB = rules.findIndex((r) => r.includes('10.0.3.0/24'));
    const firstNlb = rules.findIndex((r) => r.includes('10.0.4.0/24'));
    expect(firstB).toBeLessThan(firstNlb);
  });

  it("sets the client namespace's small port range and the client's receive bucket", () => {
    const cmds = buildTopologyCommands('pb-', p).map((c) => c.join(' '));
    expect(cmds).toContain('ip netns exec pb-client sysctl -qw net.ipv4.ip_local_port_range=60000 60511');
    expect(cmds.some((c) => c.startsWith('tc -n pb-router qdisc replace dev c0 root tbf rate 1gbit'))).toBe(true);
  });

  it('leaves seed 000 without proxies', () => {
    expect(labProfile('seed-000').proxies).toBeUndefined();
  });
});
