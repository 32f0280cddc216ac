/**
 * The mesh testbed (`-c testbed=mesh -c meshRegions=…`), synthesized with three regions:
 * non-overlapping CIDRs, security groups admitting only the mesh's CIDRs, one small host per
 * region, the TestbedMeshHost output `plan from-testbed` turns into a mesh plan in rounds, and
 * cdk-nag AwsSolutions with no unacknowledged error; and with two, three and five regions: every
 * pair of regions peered once, each side routing the other's CIDR through that connection.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { meshRoundLowerBound } from '../../../core/mesh-schedule.js';
import { parsePlan } from '../../../core/plan.js';
import { MESH_HOST_OUTPUT, meshCostNote, meshPlanFromOutputs } from '../../../infra/testbed/mesh-plan.js';
import {
  addMeshTestbed,
  MESH_MAX_REGIONS,
  type MeshRegionStack,
  type MeshTestbed,
} from '../../../infra/testbed/mesh-testbed.js';

const REGIONS = ['us-east-1', 'eu-west-1', 'ap-northeast-1'];
let testbed: MeshTestbed;
let stacks: MeshRegionStack[];
let templates: Template[];

beforeAll(() => {
  const app = new App({ context: { testbed: 'mesh', meshRegions: REGIONS.join(',') } });
  testbed = addMeshTestbed(app, REGIONS.join(','), { account: '123456789012' });
  stacks = testbed.regions;
  templates = stacks.map((s) => Template.fromStack(s));
}, 120_000);

/** The id CDK's cross-region references give a stack: its name without hyphens. */
const compact = (region: string) => `PathbenchMesh${region.replaceAll('-', '')}`;

interface Cfn {
  Type: string;
  Properties: Record<string, unknown>;
}
const resources = (t: Template, type: string) => Object.entries(t.findResources(type)) as [string, Cfn][];
/** The cross-region import a value is, as `<producer stack, compact>Ref<logical id>`; else undefined. */
function imported(value: unknown): string | undefined {
  const attr = (value as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
  return attr?.[0].startsWith('ExportsReader') ? attr[1].split('/').at(-1) : undefined;
}

describe('mesh testbed', () => {
  it('puts one stack per region, each VPC its own non-overlapping CIDR, one small host', () => {
    expect(stacks.map((s) => [s.stackName, s.region])).toEqual(REGIONS.map((r) => [`PathbenchMesh-${r}`, r]));
    templates.forEach((t, i) => {
      t.hasResourceProperties('AWS::EC2::VPC', { CidrBlock: `10.${100 + i}.0.0/16` });
      t.resourceCountIs('AWS::EC2::Instance', 1);
      t.hasResourceProperties('AWS::EC2::Instance', {
        InstanceType: 't3.micro',
        MetadataOptions: { HttpTokens: 'required', HttpEndpoint: 'enabled' },
      });
    });
    expect(() => addMeshTestbed(new App(), 'us-east-1')).toThrow(/at least two regions/);
    const letter = (k: number) => String.fromCharCode(97 + (k % 26));
    const many = Array.from({ length: MESH_MAX_REGIONS + 1 }, (_, i) => `xx-t${letter(i)}${letter(i / 26)}-1`).join(
      ',',
    );
    expect(() => addMeshTestbed(new App(), many)).toThrow(/51 regions .*at most 50 .*50 peering connections per VPC/);
    expect(() => addMeshTestbed(new App(), 'us-east-1,xx-north-9')).toThrow(/unknown region xx-north-9/);
  });

  it("admits only the mesh's own instances: every ingress rule's source is a mesh CIDR", () => {
    const cidrs = REGIONS.map((_, i) => `10.${100 + i}.0.0/16`);
    for (const t of templates) {
      const sgs = Object.values(t.findResources('AWS::EC2::SecurityGroup')) as {
        Properties: {
          SecurityGroupIngress?: { CidrIp?: string }[];
          SecurityGroupEgress?: { CidrIp?: string; FromPort?: number }[];
        };
      }[];
      expect(sgs).toHaveLength(1);
      const ingress = sgs[0].Properties.SecurityGroupIngress ?? [];
      expect(ingress.length).toBeGreaterThan(0);
      expect(new Set(ingress.map((r) => r.CidrIp))).toEqual(new Set(cidrs));
      // Out: the probe ports to the mesh, and HTTPS only to anywhere (SSM, S3).
      const open = (sgs[0].Properties.SecurityGroupEgress ?? []).filter((r) => r.CidrIp === '0.0.0.0/0');
      expect(open.map((r) => r.FromPort)).toEqual([443]);
    }
  });

  it('lists its host in TestbedMeshHost, which plan from-testbed turns into a mesh plan at the round lower bound', () => {
    for (const t of templates) expect(Object.keys(t.findOutputs(MESH_HOST_OUTPUT))).toHaveLength(1);
    // As `cdk deploy --outputs-file` saves them.
    const outputs = Object.fromEntries(
      REGIONS.map((region, i) => [
        `PathbenchMesh-${region}`,
        {
          [MESH_HOST_OUTPUT]: JSON.stringify({
            region,
            instanceId: `i-0${i}aaaaaaaaaaaaaa`.slice(0, 19),
            ip: `10.${100 + i}.0.10`,
            cidr: `10.${100 + i}.0.0/16`,
          }),
        },
      ]),
    );
    const { plan, layout } = meshPlanFromOutputs(outputs);
    expect(parsePlan(plan).ok).toBe(true);
    expect(layout.pairs).toHaveLength(6);
    expect(layout.rounds).toBe(meshRoundLowerBound(3));
    const paths = plan.paths as {
      id: string;
      client: { region: string };
      target: { host: string };
      mesh: { round: number };
    }[];
    const euToTokyo = paths.find((p) => p.id === 'eu-west-1--ap-northeast-1');
    expect(euToTokyo?.client.region).toBe('eu-west-1');
    expect(euToTokyo?.target.host).toBe('10.102.0.10');
    // No region in two tests of one round.
    for (let r = 0; r < layout.rounds; r++) {
      const inRound = layout.pairs.filter((p) => p.round === r).flatMap((p) => [p.from, p.to]);
      expect(new Set(inRound).size).toBe(inRound.length);
    }
    const bad = { ...outputs, x: { [MESH_HOST_OUTPUT]: '{"region":"us-east-1"}' } };
    expect(() => meshPlanFromOutputs(bad)).toThrow(/x\.TestbedMeshHost: expected \{ region, instanceId, ip, cidr \}/);
  });

  it('prints a standing cost from the shipped price table', () => {
    const note = meshCostNote(REGIONS, 't3.micro');
    expect(note).toMatch(/3 hosts/);
    // us-east-1 and eu-west-1 at the default $0.0104/h, Tokyo $0.0136/h, plus 3 × $0.005/h.
    expect(note).toContain('total $0.0494/h, $1.19/day');
    expect(note).toContain('inter-region VPC peering: 3 connections, no hourly charge');
    expect(meshCostNote([...REGIONS, 'us-west-2', 'sa-east-1'], 't3.micro')).toContain('10 connections');
  });

  it.each([
    { regions: ['us-east-1', 'eu-west-1'] },
    { regions: REGIONS },
    { regions: ['us-east-1', 'us-west-2', 'eu-central-1', 'ap-southeast-2', 'sa-east-1'] },
  ])(
    'peers every pair of $regions.length regions once, each routing the other CIDRs through its pair’s connection',
    ({ regions }) => {
      const app = new App({ context: { testbed: 'mesh' } });
      const tb = addMeshTestbed(app, regions.join(','), { account: '123456789012' });
      const n = regions.length;
      expect(tb.regions.map((s) => s.stackName)).toEqual(regions.map((r) => `PathbenchMesh-${r}`));
      // the first region has no earlier one to route back to
      expect(tb.routes.map((s) => [s.stackName, s.region])).toEqual(
        regions.slice(1).map((r) => [`PathbenchMesh-${r}-Routes`, r]),
      );
      const cidrOf = new Map(regions.map((r, i) => [r, `10.${100 + i}.0.0/16`]));
      const regionOf = new Map([...cidrOf].map(([r, c]) => [c, r]));
      // Peering connections: the earlier region requests, naming the later one's VPC.
      const pairs: string[] = [];
      tb.regions.forEach((s, i) => {
        for (const [, p] of resources(Template.fromStack(s), 'AWS::EC2::VPCPeeringConnection')) {
          const peer = p.Properties.PeerRegion as string;
          expect(regions.indexOf(peer), `${regions[i]} → ${peer}`).toBeGreaterThan(i);
          expect(p.Properties.VpcId).toEqual({ Ref: 'Vpc' });
          expect(imported(p.Properties.PeerVpcId)).toMatch(new RegExp(`^${compact(peer)}RefVpc`));
          pairs.push(`${regions[i]}|${peer}`);
        }
      });
      expect(pairs).toHaveLength((n * (n - 1)) / 2);
      expect(new Set(pairs).size).toBe(pairs.length);
      // Routes: every region reaches every other region's CIDR, through the connection of that pair.
      regions.forEach((region, i) => {
        const own = resources(Template.fromStack(tb.regions[i]), 'AWS::EC2::Route');
        const back = i === 0 ? [] : resources(Template.fromStack(tb.routes[i - 1]), 'AWS::EC2::Route');
        const viaPeering = [...own, ...back].filter(([, r]) => r.Properties.VpcPeeringConnectionId);
        const reached = viaPeering.map(([, r]) => regionOf.get(r.Properties.DestinationCidrBlock as string));
        expect(new Set(reached)).toEqual(new Set(regions.filter((r) => r !== region)));
        expect(reached).toHaveLength(n - 1);
        for (const [, r] of viaPeering) {
          const other = regionOf.get(r.Properties.DestinationCidrBlock as string)!;
          const via = r.Properties.VpcPeeringConnectionId;
          if (regions.indexOf(other) > i) {
            // this region requested it: its own connection, in its own route table
            expect(via).toEqual({ Ref: `Peering${other.replaceAll('-', '')}` });
            expect(r.Properties.RouteTableId).toEqual({ Ref: 'RouteTable' });
          } else {
            // the earlier region requested it: its id crosses regions; the route table is this region's
            expect(imported(via)).toMatch(new RegExp(`^${compact(other)}RefPeering${region.replaceAll('-', '')}`));
            expect(JSON.stringify(r.Properties.RouteTableId)).toContain(`PathbenchMesh-${region}:`);
          }
        }
      });
    },
  );

  it('passes cdk-nag AwsSolutions with zero unacknowledged errors', () => {
    for (const s of [...stacks, ...testbed.routes]) {
      const report = new AwsSolutionsChecks().validateScope(s);
      const errors = report.violations
        .filter((v) => v.severity === 'error')
        .map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`);
      expect(errors, s.stackName).toEqual([]);
    }
  });
});
