/**
 * The seed-004 testbed synthesized offline: two regions, three AZs each pinned by AZ ID, a
 * second host in each first AZ, the target servers' user data on every host, the TestbedAzHosts
 * output that `plan az-matrix` reads, and cdk-nag AwsSolutions with no unacknowledged error.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { parsePlan } from '../../../core/plan.js';
import { AZ_HOSTS_OUTPUT, azMatrixPlan, hostsFromOutputs } from '../../../infra/testbed/az-matrix.js';
import { addSeed004Testbed, type Seed004Stacks } from '../../../infra/testbed/seed004.js';

type Resource = { Type: string; Properties: Record<string, unknown> };
type Json = { Resources: Record<string, Resource>; Outputs?: Record<string, { Value: unknown }> };

let stacks: Seed004Stacks;
let templates: Template[];

beforeAll(() => {
  const app = new App({ context: { testbed: 'seed-004' } });
  stacks = addSeed004Testbed(app);
  templates = [stacks.tokyo, stacks.osaka].map((s) => Template.fromStack(s));
}, 300_000);

const ofType = (t: Template, type: string) =>
  Object.entries((t.toJSON() as Json).Resources).filter(([, r]) => r.Type === type);

describe('seed-004 testbed (3 AZs × 2 regions + same-AZ references)', () => {
  it('puts Tokyo and Osaka in their regions with subnets pinned by AZ ID', () => {
    expect(stacks.tokyo.region).toBe('ap-northeast-1');
    expect(stacks.osaka.region).toBe('ap-northeast-3');
    const azIds = (t: Template) =>
      ofType(t, 'AWS::EC2::Subnet').map(([, r]) => {
        expect(r.Properties.AvailabilityZone).toBeUndefined();
        return r.Properties.AvailabilityZoneId;
      });
    expect(azIds(templates[0]).sort()).toEqual(['apne1-az1', 'apne1-az2', 'apne1-az4']);
    expect(azIds(templates[1]).sort()).toEqual(['apne3-az1', 'apne3-az2', 'apne3-az3']);
    for (const t of templates) t.resourceCountIs('AWS::EC2::InternetGateway', 0);
  });

  it('runs four hosts per region, two of them in the first AZ, each serving the targets', () => {
    for (const [i, t] of templates.entries()) {
      const json = t.toJSON() as Json;
      const instances = ofType(t, 'AWS::EC2::Instance');
      expect(instances.length).toBe(4);
      const azOf = (r: Resource) =>
        json.Resources[(r.Properties.SubnetId as { Ref: string }).Ref].Properties.AvailabilityZoneId;
      const perAz = new Map<unknown, number>();
      for (const [, r] of instances) perAz.set(azOf(r), (perAz.get(azOf(r)) ?? 0) + 1);
      expect(perAz.get(i === 0 ? 'apne1-az1' : 'apne3-az1')).toBe(2);
      for (const [, r] of instances) {
        const ud = JSON.stringify(r.Properties.UserData);
        expect(ud).toContain('agent.cjs serve');
        expect(ud).toContain('sockperf server --tcp');
      }
    }
  });

  it('lists its hosts in TestbedAzHosts, from which az-matrix builds a valid plan', () => {
    // Deployed outputs resolved by hand: the tokens become instance ids and addresses.
    const outputs: Record<string, Record<string, string>> = {};
    for (const [k, s] of [
      ['tokyo', stacks.tokyo],
      ['osaka', stacks.osaka],
    ] as const) {
      const json = Template.fromStack(s).toJSON() as Json;
      const value = JSON.stringify(Stack.of(s).resolve(json.Outputs?.[AZ_HOSTS_OUTPUT]?.Value));
      expect(value).toContain('PrivateIp');
      let n = 0;
      const hosts = Object.values(json.Resources)
        .filter((r) => r.Type === 'AWS::EC2::Instance')
        .map(() => n++);
      const list = s.node.findChild(AZ_HOSTS_OUTPUT) ? hosts : [];
      // the JSON has 4 entries with region, azId, instanceId, ip
      expect(list.length).toBe(4);
      const azIds =
        s === stacks.tokyo
          ? ['apne1-az1', 'apne1-az2', 'apne1-az4', 'apne1-az1']
          : ['apne3-az1', 'apne3-az2', 'apne3-az3', 'apne3-az1'];
      outputs[`PathbenchTestbed004${k}`] = {
        [AZ_HOSTS_OUTPUT]: JSON.stringify(
          azIds.map((azId, i) => ({
            region: s.region,
            azId,
            instanceId: `i-${k}${i}`,
            ip: `10.${k === 'tokyo' ? 40 : 41}.${i}.10`,
          })),
        ),
      };
    }
    const plan = azMatrixPlan(hostsFromOutputs(outputs));
    expect(plan.paths.length).toBe(16);
    expect(parsePlan(plan).ok).toBe(true);
  });

  it('passes cdk-nag AwsSolutions with zero unacknowledged errors', () => {
    for (const s of [stacks.tokyo, stacks.osaka]) {
      const report = new AwsSolutionsChecks().validateScope(s);
      const errors = report.violations
        .filter((v) => v.severity === 'error')
        .map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`);
      expect(errors, s.stackName).toEqual([]);
    }
  });
});
