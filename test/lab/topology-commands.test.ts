import { describe, expect, it } from 'vitest';
import { queueArg, reverseQueueArg } from '../../lab/delay.js';
import { allNamespaces } from '../../lab/namespace-names.js';
import { queuesByRole } from '../../lab/profiles/lab-profile.js';
import { oneWayProfile } from '../../lab/profiles/one-way-profile.js';
import { labProfile } from '../../lab/profiles/profile-by-name.js';
import { seed000NlbProfile, seed000Profile } from '../../lab/profiles/seed-000-profile.js';
import { buildCreditCommand, buildDelayRuleCommands, buildTopologyCommands } from '../../lab/topology-commands.js';

describe('lab topology (seed-000)', () => {
  const profile = seed000Profile();
  const prefix = 'pb-tu-';
  const ours = new Set(allNamespaces(prefix));

  it('reproduces the seed 000 latency ladder', () => {
    expect(profile.paths.filter((p) => p.id !== 'F').map((p) => [p.id, p.rttMs])).toEqual([
      ['A', 0.21],
      ['B', 1.65],
      ['C', 8.89],
      ['D', 11.01],
      ['E', 13.32],
    ]);
    expect(new Set(profile.paths.map((p) => p.queue)).size).toBe(profile.paths.length);
  });

  it('runs every command inside a lab namespace, never in the root namespace', () => {
    const cmds = [
      ...buildTopologyCommands(prefix, profile),
      ...buildDelayRuleCommands(prefix, profile),
      buildCreditCommand(prefix, profile.credits),
    ];
    for (const c of cmds) {
      const target = c[1] === '-n' ? c[2] : c[1] === 'netns' && (c[2] === 'add' || c[2] === 'exec') ? c[3] : undefined;
      expect(target, c.join(' ')).toBeDefined();
      expect(ours.has(target!), c.join(' ')).toBe(true);
      // A veth's peer must land in a lab namespace too.
      const peer = c.indexOf('netns', 2);
      if (c.includes('veth')) expect(ours.has(c[peer + 1]), c.join(' ')).toBe(true);
    }
  });

  it('gives both next hops a route to the same Osaka CIDR and activates the default one', () => {
    const cmds = buildTopologyCommands(prefix, profile).map((c) => c.join(' '));
    expect(cmds).toContain('ip -n pb-tu-router route replace 10.1.0.0/16 via 10.255.1.2');
    expect(cmds).toContain('ip -n pb-tu-osaka route replace 10.0.0.0/16 via 10.255.3.1');
    expect(profile.nextHops.map((h) => h.name)).toEqual(['peering', 'tgw']);
  });

  it('queues both directions of router paths with --queue-bypass (no loss without a helper)', () => {
    const rules = buildDelayRuleCommands(prefix, profile).map((c) => c.join(' '));
    expect(rules).toContain(
      'ip netns exec pb-tu-router iptables -A FORWARD -d 10.0.3.0/24 -j NFQUEUE --queue-num 2 --queue-bypass',
    );
    expect(rules).toContain(
      'ip netns exec pb-tu-router iptables -A FORWARD -s 10.0.3.0/24 -j NFQUEUE --queue-num 2 --queue-bypass',
    );
    expect(rules).toContain('ip netns exec pb-tu-tgw iptables -A FORWARD -j NFQUEUE --queue-num 4 --queue-bypass');
    expect(rules.every((r) => r.endsWith('--queue-bypass'))).toBe(true);
  });

  it('puts the NLB (profile seed-000-nlb) on an Osaka address with no ICMP echo, its rules ahead of each hop’s catch-all', () => {
    const nlbProfile = seed000NlbProfile();
    // seed 000's paths, and §6.2's C and D to the NLB instead of the instance (+1.21 and +0.71 ms)
    expect(nlbProfile.paths.map((p) => [p.id, p.rttMs])).toEqual([
      ...profile.paths.map((p) => [p.id, p.rttMs]),
      ['C-NLB', 10.1],
      ['D-NLB', 11.72],
    ]);
    expect(new Set(nlbProfile.paths.map((p) => p.queue)).size).toBe(nlbProfile.paths.length);
    expect(
      buildTopologyCommands(prefix, profile)
        .map((c) => c.join(' '))
        .join('\n'),
    ).not.toContain('10.1.2.10');
    const cmds = buildTopologyCommands(prefix, nlbProfile).map((c) => c.join(' '));
    expect(cmds).toContain('ip -n pb-tu-osaka addr add 10.1.1.10/32 dev lo');
    expect(cmds).toContain('ip -n pb-tu-osaka addr add 10.1.2.10/32 dev lo');
    expect(cmds).toContain(
      'ip netns exec pb-tu-osaka iptables -A INPUT -d 10.1.2.10/32 -p icmp --icmp-type echo-request -j DROP',
    );
    const rules = buildDelayRuleCommands(prefix, nlbProfile).map((c) => c.join(' '));
    for (const [hop, nlbQueue, hopQueue] of [
      ['peering', 7, 3],
      ['tgw', 8, 4],
    ] as const) {
      const inHop = rules.filter((r) => r.startsWith(`ip netns exec pb-tu-${hop} `));
      // a packet takes the first rule it matches: the NLB's two, then the hop's own
      expect(inHop).toEqual([
        `ip netns exec pb-tu-${hop} iptables -A FORWARD -d 10.1.2.10/32 -j NFQUEUE --queue-num ${nlbQueue} --queue-bypass`,
        `ip netns exec pb-tu-${hop} iptables -A FORWARD -s 10.1.2.10/32 -j NFQUEUE --queue-num ${nlbQueue} --queue-bypass`,
        `ip netns exec pb-tu-${hop} iptables -A FORWARD -j NFQUEUE --queue-num ${hopQueue} --queue-bypass`,
      ]);
    }
    const nlb = nlbProfile.paths.filter((p) => p.id.endsWith('-NLB'));
    expect(nlb.map((p) => [p.id, p.nextHop, p.delayRole])).toEqual([
      ['C-NLB', 'peering', 'peering'],
      ['D-NLB', 'tgw', 'tgw'],
    ]);
  });

  it('adds a bimodal path F beside the ladder: two delays mixed on the way to a loopback address of pb-a', () => {
    const f = profile.paths.find((p) => p.id === 'F')!;
    expect(f).toMatchObject({ rttMs: 2, mix: { rttMs: 6, share: 0.3 }, targetRole: 'a', delayRole: 'router' });
    const cmds = buildTopologyCommands(prefix, profile).map((c) => c.join(' '));
    expect(cmds).toContain('ip -n pb-tu-a addr add 10.0.5.10/32 dev lo');
    expect(cmds).toContain('ip -n pb-tu-router route add 10.0.5.10/32 via 10.0.2.10');
    // one direction only, and not caught by path A's rules (10.0.2.0/24)
    const rules = buildDelayRuleCommands(prefix, profile).map((c) => c.join(' '));
    expect(rules.filter((r) => r.includes('--queue-num 6'))).toEqual([
      'ip netns exec pb-tu-router iptables -A FORWARD -d 10.0.5.10/32 -j NFQUEUE --queue-num 6 --queue-bypass',
    ]);
  });

  it('gives the helper half the added round trip per direction, or both delays of a mix', () => {
    const a = profile.paths.find((p) => p.id === 'A')!;
    const f = profile.paths.find((p) => p.id === 'F')!;
    expect(queueArg(a, 150)).toBe('1:75.0');
    expect(queueArg(a, -5)).toBe('1:0.0');
    // 1.9 ms added for the 2 ms round trip; the 30 % take 4 ms more (6 ms)
    expect(queueArg(f, 1900)).toBe('6:1900.0,5900.0@0.3');
  });

  it('rejects an unknown profile with a one-line error', () => {
    expect(() => labProfile('seed-999')).toThrow(/unknown lab profile "seed-999"/);
  });
});

describe('lab topology (one-way)', () => {
  const profile = oneWayProfile();
  it('holds each direction of an asymmetric path on a queue of its own, with its share of the delay', () => {
    const fwd = profile.paths.find((p) => p.id === 'FWD')!;
    // 1,920 µs added: 80 % out on queue 2, 20 % back on queue 3; a symmetric path half each way
    expect(queueArg(fwd, 1920)).toBe('2:1536.0');
    expect(reverseQueueArg(fwd.reverse!, 1920)).toBe('3:384.0');
    expect(queueArg(profile.paths.find((p) => p.id === 'A')!, 420)).toBe('1:210.0');
    expect(queuesByRole(profile).get('router')).toEqual([1, 2, 3, 4, 5]);
    const rules = buildDelayRuleCommands('pb-', profile).map((c) => c.slice(5).join(' '));
    expect(rules).toEqual([
      '-A FORWARD -d 10.0.2.0/24 -j NFQUEUE --queue-num 1 --queue-bypass',
      '-A FORWARD -s 10.0.2.0/24 -j NFQUEUE --queue-num 1 --queue-bypass',
      '-A FORWARD -d 10.0.3.0/24 -j NFQUEUE --queue-num 2 --queue-bypass',
      '-A FORWARD -s 10.0.3.0/24 -j NFQUEUE --queue-num 3 --queue-bypass',
      '-A FORWARD -d 10.0.4.0/24 -j NFQUEUE --queue-num 4 --queue-bypass',
      '-A FORWARD -s 10.0.4.0/24 -j NFQUEUE --queue-num 5 --queue-bypass',
    ]);
    // a star: every host's default route points at the router
    const routes = buildTopologyCommands('pb-', profile).filter((c) => c.includes('default'));
    expect(routes.map((c) => c.join(' '))).toEqual([
      'ip -n pb-client route add default via 10.0.1.1',
      'ip -n pb-a route add default via 10.0.2.1',
      'ip -n pb-b route add default via 10.0.3.1',
      'ip -n pb-e route add default via 10.0.4.1',
    ]);
  });
});
