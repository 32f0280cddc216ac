/**
 * The mesh testbed (`-c testbed=mesh -c meshRegions=…`), synthesized once with three regions:
 * non-overlapping CIDRs, security groups admitting only the mesh's CIDRs, one small host per
 * region, the TestbedMeshHost output `plan from-testbed` turns into a mesh plan in rounds, and
 * cdk-nag AwsSolutions with no unacknowledged error.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { meshRoundLowerBound } from '../../../core/mesh-schedule.js';
import { parsePlan } from '../../../core/plan.js';
import { MESH_HOST_OUTPUT, meshCostNote, meshPlanFromOutputs } from '../../../infra/testbed/mesh-plan.js';
import { addMeshTestbed, type MeshRegionStack } from '../../../infra/testbed/mesh-testbed.js';

const REGIONS = ['us-east-1', 'eu-west-1', 'ap-northeast-1'];
let stacks: MeshRegionStack[];
let templates: Template[];

beforeAll(() => {
  const app = new App({ context: { testbed: 'mesh', meshRegions: REGIONS.join(',') } });
  stacks = addMeshTestbed(app, REGIONS.join(','), { account: '123456789012' });
  templates = stacks.map((s) => Template.fromStack(s));
}, 120_000);

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
  });

  it('passes cdk-nag AwsSolutions with zero unacknowledged errors', () => {
    for (const s of stacks) {
      const report = new AwsSolutionsChecks().validateScope(s);
      const errors = report.violations
        .filter((v) => v.severity === 'error')
        .map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`);
      expect(errors, s.stackName).toEqual([]);
    }
  });
});
