/** planFromTestbedOutputs on a saved `cdk deploy --outputs-file` of the testbed stacks. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parsePlan } from '../../../core/plan.js';
import type { ResolvedPlan } from '../../../core/resolved-plan.js';
import { planFromTestbedOutputs, TestbedOutputsError } from '../../../infra/testbed/plan-from-outputs.js';
import { ROOT } from '../../helpers/repo.js';

const FIXTURE = fileURLToPath(new URL('../../fixtures/testbed-outputs.json', import.meta.url));
const outputs = (): Record<string, Record<string, string>> => JSON.parse(readFileSync(FIXTURE, 'utf8'));

function resolved(json: unknown): ResolvedPlan {
  const r = parsePlan(json);
  if (!r.ok) throw new Error(r.problems.join('\n'));
  return r.plan;
}

describe('planFromTestbedOutputs', () => {
  it('builds an A–E plan, with C-NLB and D-NLB beside C and D, that passes the plan validator', () => {
    const plan = resolved(planFromTestbedOutputs(outputs()));
    expect(plan.paths.map((p) => p.id)).toEqual(['A', 'B', 'C', 'C-NLB', 'D', 'D-NLB', 'E']);
    for (const p of plan.paths) {
      expect(p.client).toEqual({ instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' });
      expect(p.reboot).toBe(true);
    }
    const [a, b, c, , , , e] = plan.paths;
    expect(a.target).toEqual({ host: '10.0.1.23', port: 7000 });
    expect(b.target.host).toBe('10.0.2.141');
    expect(c.target.host).toBe('10.1.1.57');
    expect(e.target.host).toBe(
      'vpce-0a1b2c3d4e5f6a7b8-1a2b3c4d.vpce-svc-0123456789abcdef0.ap-northeast-3.vpce.amazonaws.com',
    );
    expect(a.label).toContain('apne1-az4');
    expect(b.label).toContain('apne1-az1');
  });

  it('routes C through the peering connection and D through each region’s TGW, in both regions', () => {
    const plan = resolved(planFromTestbedOutputs(outputs()));
    const byId = new Map(plan.paths.map((p) => [p.id, p]));
    expect(byId.get('A')!.routes).toEqual([]);
    expect(byId.get('B')!.routes).toEqual([]);
    expect(byId.get('E')!.routes).toEqual([]);
    expect(byId.get('C')!.routes).toEqual([
      {
        region: 'ap-northeast-1',
        routeTableId: 'rtb-0123456789abcdef0',
        destination: '10.1.0.0/16',
        via: { vpcPeeringConnectionId: 'pcx-0123456789abcdef0' },
      },
      {
        region: 'ap-northeast-3',
        routeTableId: 'rtb-0a1b2c3d4e5f60718',
        destination: '10.0.0.0/16',
        via: { vpcPeeringConnectionId: 'pcx-0123456789abcdef0' },
      },
    ]);
    expect(byId.get('D')!.routes.map((r) => [r.region, r.via])).toEqual([
      ['ap-northeast-1', { transitGatewayId: 'tgw-0123456789abcdef0' }],
      ['ap-northeast-3', { transitGatewayId: 'tgw-0f1e2d3c4b5a69788' }],
    ]);
  });

  it('aims C-NLB and D-NLB at the provider NLB over C’s and D’s routes, and compares as seed 000 §6.2 did', () => {
    const plan = resolved(planFromTestbedOutputs(outputs()));
    const byId = new Map(plan.paths.map((p) => [p.id, p]));
    const nlb = 'Pathbe-Nlb-1A2B3C4D5E6F-0123456789abcdef.elb.ap-northeast-3.amazonaws.com';
    for (const [id, via] of [
      ['C-NLB', 'C'],
      ['D-NLB', 'D'],
    ] as const) {
      const p = byId.get(id)!;
      expect(p.target).toEqual({ host: nlb, port: 7000 });
      expect(p.routes).toEqual(byId.get(via)!.routes);
      expect(p.label).toMatch(/NLB direct/);
      // TCP listeners only, and no ICMP through an NLB
      expect(p.skipped.map((x) => x.name)).toEqual(['iperf3-udp', 'mtu']);
    }
    expect(plan.compare).toEqual([
      { path: 'B', baseline: 'A' },
      { path: 'C', baseline: 'B' },
      { path: 'D', baseline: 'C' },
      { path: 'E', baseline: 'D' },
      { path: 'C-NLB', baseline: 'C' },
      { path: 'D-NLB', baseline: 'D' },
      { path: 'E', baseline: 'D-NLB' },
    ]);
    // An older testbed's outputs (no NLB DNS name): A–E and the ladder only.
    const o = outputs();
    delete o.PathbenchTestbedPeer.TestbedNlbDnsName;
    const older = resolved(planFromTestbedOutputs(o));
    expect(older.paths.map((p) => p.id)).toEqual(['A', 'B', 'C', 'D', 'E']);
    expect(older.compare).toHaveLength(4);
  });

  it('probes like the seed and skips UDP and MTU on PrivateLink with reasons', () => {
    const plan = resolved(planFromTestbedOutputs(outputs()));
    const [a, , , , , , e] = plan.paths;
    const names = a.probes.map((p) => p.name);
    expect(names).toEqual(['tcp-connect', 'iperf3-tcp-p1', 'iperf3-tcp-p4', 'iperf3-udp', 'http', 'mtu']);
    expect(a.probes[0]).toMatchObject({ kind: 'tcp-connect', count: 300, intervalMs: 200, timeoutMs: 400 });
    for (const p of a.probes.filter((x) => x.kind === 'iperf3'))
      expect(p).toMatchObject({ durationSeconds: 30, repeats: 3, port: 5201 });
    expect(a.probes.find((p) => p.name === 'iperf3-tcp-p4')).toMatchObject({ streams: 4, mode: 'tcp' });
    const udp = a.probes.find((p) => p.name === 'iperf3-udp');
    expect(udp).toMatchObject({ mode: 'udp', bitrate: '1G' });
    expect(e.probes.map((p) => p.name)).toEqual(['tcp-connect', 'iperf3-tcp-p1', 'iperf3-tcp-p4', 'http']);
    expect(e.skipped).toMatchObject([
      { name: 'iperf3-udp', reason: 'PrivateLink NLB passes no UDP without IPv6 source NAT' },
      { name: 'mtu', reason: 'no ICMP through an NLB' },
    ]);
  });

  it('is what plans/seed-000-tokyo-osaka.example.json shows (the example is this fixture’s plan)', () => {
    const example = JSON.parse(readFileSync(join(ROOT, 'plans', 'seed-000-tokyo-osaka.example.json'), 'utf8'));
    expect(example).toEqual(planFromTestbedOutputs(outputs()));
  });

  it('takes options for duration, repeats and the UDP bitrate', () => {
    const plan = resolved(
      planFromTestbedOutputs(outputs(), { name: 'short', durationSeconds: 5, repeats: 1, udpBitrate: '500M' }),
    );
    expect(plan.name).toBe('short');
    expect(plan.paths[0].probes.find((p) => p.name === 'iperf3-udp')).toMatchObject({
      durationSeconds: 5,
      repeats: 1,
      bitrate: '500M',
    });
  });

  it('lists every missing output at once', () => {
    const o = outputs();
    delete o.PathbenchTestbedClient.TestbedVpcPeeringConnectionId;
    delete o.PathbenchTestbedPeer.TestbedPeerTargetIp;
    let err: unknown;
    try {
      planFromTestbedOutputs(o);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TestbedOutputsError);
    expect((err as TestbedOutputsError).problems).toEqual([
      'TestbedVpcPeeringConnectionId: missing (expected in a PathbenchTestbed* stack)',
      'TestbedPeerTargetIp: missing (expected in a PathbenchTestbed* stack)',
    ]);
  });

  it('refuses the same output key with two different values', () => {
    const o = outputs();
    o.Other = { TestbedClientRegion: 'us-east-1' };
    expect(() => planFromTestbedOutputs(o)).toThrow(/TestbedClientRegion: Other says "us-east-1"/);
  });
});
