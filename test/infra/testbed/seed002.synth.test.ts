/**
 * The seed-002 testbed synthesized offline once: three VPCs with peering and a Transit Gateway,
 * an ECS cluster on EC2 capacity with one host per service (placement by host attribute), Service
 * Connect for D, the NLB + endpoint service + interface endpoint for G / G′, VPC Lattice for H,
 * the client service's queue and least-privilege task role; its outputs give the nine-path plan
 * `plan from-testbed` writes; cdk-nag AwsSolutions with no unacknowledged error.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { parsePlan } from '../../../core/plan.js';
import { TestbedOutputsError } from '../../../infra/testbed/plan-from-outputs.js';
import { addSeed002Testbed, type Seed002Stack, tcpTwReuseContext } from '../../../infra/testbed/seed002.js';
import {
  SEED002_COMPARE,
  SEED002_INVENTORY,
  SEED002_OUTPUTS,
  SEED002_PATH_IDS,
  SEED002_RATIOS,
  seed002CostNote,
  seed002Plan,
} from '../../../infra/testbed/seed002-plan.js';
import { ROOT } from '../../helpers/repo.js';

type Resource = { Type: string; Properties: Record<string, unknown>; DependsOn?: string[] };
type Json = { Resources: Record<string, Resource>; Outputs?: Record<string, { Value: unknown }> };

let stack: Seed002Stack;
let json: Json;
const ofType = (type: string) => Object.entries(json.Resources).filter(([, r]) => r.Type === type);

beforeAll(() => {
  // The stack builds the agent and ECS worker bundles it uploads when they are missing or stale.
  const app = new App({ context: { testbed: 'seed-002', testbedPipelineBucket: 'pathbench-data-test' } });
  stack = addSeed002Testbed(app, { account: '123456789012' });
  json = Template.fromStack(stack).toJSON() as Json;
}, 300_000);

describe('seed-002 testbed (ECS service-to-service paths)', () => {
  it('has client, server and TGW VPCs, peering client↔server and a TGW client↔TGW VPC with routes after the attachments', () => {
    expect(
      ofType('AWS::EC2::VPC')
        .map(([, r]) => r.Properties.CidrBlock)
        .sort(),
    ).toEqual(['10.0.0.0/16', '10.2.0.0/16', '10.3.0.0/16']);
    expect(ofType('AWS::EC2::VPCPeeringConnection')).toHaveLength(1);
    expect(ofType('AWS::EC2::TransitGatewayAttachment')).toHaveLength(SEED002_INVENTORY.tgwAttachments);
    expect(ofType('AWS::EC2::NatGateway')).toHaveLength(SEED002_INVENTORY.natGateways);
    const tgwRoutes = ofType('AWS::EC2::Route').filter(([, r]) => r.Properties.TransitGatewayId);
    expect(tgwRoutes.length).toBeGreaterThan(0);
    for (const [, r] of tgwRoutes) expect(r.DependsOn?.some((d) => d.startsWith('TgwAttach'))).toBe(true);
  });

  it('runs one ECS host per service on EC2 capacity, each service placed on its own host by attribute', () => {
    const asgs = ofType('AWS::AutoScaling::AutoScalingGroup');
    expect(asgs).toHaveLength(SEED002_INVENTORY.instances);
    for (const [, a] of asgs) expect([a.Properties.MinSize, a.Properties.MaxSize]).toEqual(['1', '1']);
    const lts = ofType('AWS::EC2::LaunchTemplate');
    expect(JSON.stringify(lts)).toContain(SEED002_INVENTORY.instanceType);
    const services = ofType('AWS::ECS::Service');
    expect(services.map(([, s]) => s.Properties.ServiceName).sort()).toEqual(
      [
        'client',
        'server-a',
        'server-b',
        'server-d',
        'server-f',
        'server-g',
        'server-h',
        'server-l1',
        'server-l2',
      ].sort(),
    );
    const hostsNamed = new Set<string>();
    for (const [, s] of services) {
      const c = s.Properties.PlacementConstraints as { Type: string; Expression: string }[];
      expect(c).toEqual([{ Type: 'memberOf', Expression: `attribute:pathbench-host == ${s.Properties.ServiceName}` }]);
      hostsNamed.add(String(s.Properties.ServiceName));
      expect(s.Properties.DesiredCount).toBe(1);
    }
    expect(hostsNamed.size).toBe(9);
    // Each host carries its attribute.
    const ud = JSON.stringify(lts).replace(/\\/g, '');
    for (const n of hostsNamed) expect(ud).toContain(`ECS_INSTANCE_ATTRIBUTES={"pathbench-host":"${n}"}`);
  });

  it('gives D Service Connect on both sides, G/G′ an internal NLB with endpoint service and interface endpoint, H VPC Lattice', () => {
    const svc = (name: string) => ofType('AWS::ECS::Service').find(([, s]) => s.Properties.ServiceName === name)?.[1];
    const d = svc('server-d')?.Properties.ServiceConnectConfiguration as Record<string, unknown>;
    expect(d).toMatchObject({
      Enabled: true,
      Services: [{ PortName: 'http', ClientAliases: [{ DnsName: 'backend', Port: 8080 }] }],
    });
    expect(svc('client')?.Properties.ServiceConnectConfiguration).toMatchObject({ Enabled: true });
    const [[, nlb]] = ofType('AWS::ElasticLoadBalancingV2::LoadBalancer');
    expect(nlb.Properties).toMatchObject({ Type: 'network', Scheme: 'internal' });
    expect(ofType('AWS::ElasticLoadBalancingV2::TargetGroup')[0][1].Properties.TargetType).toBe('ip');
    expect(ofType('AWS::EC2::VPCEndpointService')).toHaveLength(1);
    const endpoints = ofType('AWS::EC2::VPCEndpoint');
    expect(endpoints).toHaveLength(1);
    expect(endpoints[0][1].Properties).toMatchObject({ VpcEndpointType: 'Interface', PrivateDnsEnabled: false });
    expect((endpoints[0][1].Properties.SubnetIds as unknown[]).length).toBe(SEED002_INVENTORY.interfaceEndpointAzs);
    for (const t of [
      'AWS::VpcLattice::ServiceNetwork',
      'AWS::VpcLattice::Service',
      'AWS::VpcLattice::Listener',
      'AWS::VpcLattice::TargetGroup',
      'AWS::VpcLattice::ServiceNetworkServiceAssociation',
      'AWS::VpcLattice::ServiceNetworkVpcAssociation',
    ])
      expect(ofType(t), t).toHaveLength(1);
    expect(ofType('AWS::VpcLattice::Listener')[0][1].Properties).toMatchObject({ Protocol: 'HTTP', Port: 80 });
    const assoc = ofType('AWS::VpcLattice::ServiceNetworkVpcAssociation')[0][1];
    const sgId = (assoc.Properties.SecurityGroupIds as { 'Fn::GetAtt': string[] }[])[0]['Fn::GetAtt'][0];
    expect(json.Resources[sgId].Properties.SecurityGroupIngress).toEqual([
      expect.objectContaining({ CidrIp: '10.0.0.0/16', FromPort: 80, ToPort: 80 }),
    ]);
    expect(svc('server-h')?.Properties.VpcLatticeConfigurations).toMatchObject([{ PortName: 'http' }]);
  });

  it('runs the task client from public images with the bundles from S3, its own queue and a least-privilege role', () => {
    const [[, q]] = ofType('AWS::SQS::Queue');
    expect(q.Properties.QueueName).toBe('pathbench-client-seed002-client');
    const tds = JSON.stringify(ofType('AWS::ECS::TaskDefinition'));
    expect(tds).toContain('public.ecr.aws/docker/library/node:20-slim');
    expect(tds).toContain('/bundles/ecs-worker.cjs');
    expect(tds).not.toContain('dkr.ecr'); // no image built or pushed
    const clientTd = ofType('AWS::ECS::TaskDefinition').find(([id]) => id.startsWith('ClientTask'));
    expect(clientTd).toBeDefined();
    const roleRef = ((clientTd as [string, Resource])[1].Properties.TaskRoleArn as { 'Fn::GetAtt': string[] })[
      'Fn::GetAtt'
    ][0];
    const statements = ofType('AWS::IAM::Policy')
      .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleRef))
      .flatMap(
        ([, p]) => (p.Properties.PolicyDocument as { Statement: { Action: unknown; Resource: unknown }[] }).Statement,
      );
    const text = JSON.stringify(statements);
    expect(text).toContain('raw/path=*/run=*/client=client/*');
    expect(text).toContain('stateMachine:Pathbench-Measurement');
    for (const a of [
      'states:SendTaskSuccess',
      'states:SendTaskFailure',
      'states:SendTaskHeartbeat',
      'sqs:ReceiveMessage',
    ])
      expect(text).toContain(a);
    expect(text).not.toContain('sqs:SendMessage');
    expect(text).not.toContain('"s3:PutObject","Resource":"*"');
  });

  it('sets tcp_tw_reuse in the client task as the seed did (systemControls), 0 on request, in no server task', () => {
    type Container = { Name: string; SystemControls?: { Namespace: string; Value: string }[] };
    const controls = (j: Json, prefix: string) =>
      Object.entries(j.Resources)
        .filter(([id, r]) => r.Type === 'AWS::ECS::TaskDefinition' && id.startsWith(prefix))
        .flatMap(([, r]) => r.Properties.ContainerDefinitions as Container[])
        .filter((c) => c.SystemControls)
        .map((c) => [c.Name, c.SystemControls]);
    expect(controls(json, 'ClientTask')).toEqual([['main', [{ Namespace: 'net.ipv4.tcp_tw_reuse', Value: '1' }]]]);
    expect(controls(json, 'Server')).toEqual([]);
    expect(json.Outputs?.[SEED002_OUTPUTS.tcpTwReuse]?.Value).toBe('1');
    // -c seed002TcpTwReuse=0 reproduces what the seed fixed; anything but 0, 1, 2 is refused
    expect(tcpTwReuseContext('0')).toBe(0);
    expect(tcpTwReuseContext(2)).toBe(2);
    expect(tcpTwReuseContext(undefined)).toBeUndefined();
    for (const bad of ['', 'yes', '3', -1])
      expect(() => tcpTwReuseContext(bad)).toThrow(/seed002TcpTwReuse: expected 0, 1 or 2/);
  });

  it('outputs what plan from-testbed turns into paths A, B, D, F, G, G-prime, H, L1, L2 from the client task', () => {
    expect(Object.keys(json.Outputs ?? {})).toEqual(
      expect.arrayContaining(Object.values(SEED002_OUTPUTS).filter((k) => k !== SEED002_OUTPUTS.taskIps)),
    );
    // A saved outputs file, as `cdk deploy --outputs-file` writes it.
    const saved = {
      PathbenchTestbed002: {
        [SEED002_OUTPUTS.region]: 'ap-northeast-1',
        [SEED002_OUTPUTS.cluster]: 'seed002',
        [SEED002_OUTPUTS.clientService]: 'client',
        [SEED002_OUTPUTS.queueUrl]:
          'https://sqs.ap-northeast-1.amazonaws.com/123456789012/pathbench-client-seed002-client',
        [SEED002_OUTPUTS.serverNames]: String(json.Outputs?.[SEED002_OUTPUTS.serverNames]?.Value),
        [SEED002_OUTPUTS.serviceConnectHost]: 'backend',
        [SEED002_OUTPUTS.endpointDnsName]: 'vpce-0abc-defg.vpce-svc-0abc.ap-northeast-1.vpce.amazonaws.com',
        [SEED002_OUTPUTS.nlbDnsName]: 'Nlb-0123.elb.ap-northeast-1.amazonaws.com',
        [SEED002_OUTPUTS.latticeDnsName]: 'pathbench-seed002-h-0abc.7d67968.vpc-lattice-svcs.ap-northeast-1.on.aws',
      },
    };
    const plan = seed002Plan(saved);
    expect(plan.paths.map((p) => p.id)).toEqual([...SEED002_PATH_IDS]);
    expect(plan.paths.find((p) => p.id === 'A')?.target.host).toBe('a.seed002.internal');
    expect(plan.defaults.client).toMatchObject({ kind: 'ecs-task', cluster: 'seed002', service: 'client' });
    expect(plan.defaults.probes).toHaveLength(8);
    // the task's tcp_tw_reuse stated on every http probe: each trial records the value in force
    const twSaved = { PathbenchTestbed002: { ...saved.PathbenchTestbed002, [SEED002_OUTPUTS.tcpTwReuse]: '1' } };
    expect(seed002Plan(twSaved).defaults.probes.map((p) => p.tcpTwReuse)).toEqual(new Array(8).fill(1));
    expect(plan.defaults.probes.every((p) => !('tcpTwReuse' in p))).toBe(true);
    const badTw = { PathbenchTestbed002: { ...saved.PathbenchTestbed002, [SEED002_OUTPUTS.tcpTwReuse]: 'on' } };
    expect(() => seed002Plan(badTw)).toThrow(/Seed002TcpTwReuse: expected 0, 1 or 2, got "on"/);
    const parsed = parsePlan(plan);
    expect(parsed.ok, JSON.stringify(parsed)).toBe(true);
    // The seed's comparisons, on AWS and in the lab twin alike (not every path against A).
    const pairs = (c: readonly { path: string; baseline: string }[] | undefined) =>
      (c ?? []).map((x) => `${x.path}-${x.baseline}`).sort();
    expect(pairs(plan.compare)).toEqual(['B-A', 'D-B', 'F-B', 'G-B', 'G-G-prime', 'H-B', 'L2-L1']);
    const lab = JSON.parse(readFileSync(path.join(ROOT, 'plans', 'lab-seed-002.json'), 'utf8'));
    expect(pairs(lab.compare)).toEqual(pairs(SEED002_COMPARE));
    // The seed's within-path ratios (keep-alive off ÷ on, c16 ÷ c1) on every HTTP path, here and in the lab.
    expect(lab.ratios).toEqual(SEED002_RATIOS);
    expect(plan.ratios).toEqual(SEED002_RATIOS);
    if (!parsed.ok) throw new Error('unreachable');
    const http = ['A', 'B', 'D', 'F', 'G', 'G-prime', 'H'];
    expect(parsed.plan.ratios?.map((r) => `${r.path}:${r.probe}`)).toEqual([
      ...http.map((id) => `${id}:http-noka-c1-1k`),
      ...http.map((id) => `${id}:http-ka-c16-1k`),
    ]);
    expect(parsed.plan.paths.map((p) => p.method)).toEqual([
      'same-vpc',
      'vpc-peering',
      'service-connect',
      'transit-gateway',
      'privatelink',
      'nlb',
      'lattice',
      'same-vpc',
      'same-vpc',
    ]);
    // The running tasks' IPs, when the operator adds them, replace the names.
    const withIps = seed002Plan({
      PathbenchTestbed002: {
        ...saved.PathbenchTestbed002,
        [SEED002_OUTPUTS.taskIps]:
          '{"A":"10.0.2.20","B":"10.2.2.20","F":"10.3.2.20","L1":"10.0.2.21","L2":"10.0.3.21"}',
      },
    });
    expect(withIps.paths.find((p) => p.id === 'B')?.target.host).toBe('10.2.2.20');
    const { [SEED002_OUTPUTS.latticeDnsName]: _gone, ...partial } = saved.PathbenchTestbed002;
    expect(() => seed002Plan({ PathbenchTestbed002: partial })).toThrow(TestbedOutputsError);
    expect(() => seed002Plan({ PathbenchTestbed002: partial })).toThrow(/Seed002LatticeDnsName: missing/);
    expect(seed002CostNote()).toMatch(/ECS hosts \(EC2\)\s+9 × c6i\.large[\s\S]*total\s+\$\d+\.\d\d/);
  });

  it('passes cdk-nag AwsSolutions with zero unacknowledged errors', () => {
    const report = new AwsSolutionsChecks().validateScope(stack);
    const errors = report.violations
      .filter((v) => v.severity === 'error')
      .map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`);
    expect(errors).toEqual([]);
  });
});
