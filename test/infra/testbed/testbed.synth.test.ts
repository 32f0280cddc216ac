/**
 * The testbed stacks synthesized offline (no account, no lookups): targeted assertions on the
 * seed-000 topology, the cross-region wiring and the facts the pipeline relies on.
 */
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../core/errors.js';
import { addTestbed, type TestbedStacks } from '../../../infra/testbed/index.js';
import { TESTBED_OUTPUTS } from '../../../infra/testbed/plan-from-outputs.js';
import { DEFAULT_TESTBED_INVENTORY } from '../../../infra/testbed/testbed-cost.js';

type Resource = { Type: string; Properties: Record<string, unknown>; DependsOn?: string[] };
type Json = { Resources: Record<string, Resource>; Outputs?: Record<string, unknown> };

let stacks: TestbedStacks;
let peer: Template;
let client: Template;
let peerRoutes: Template;

function ofType(t: Template, type: string): [string, Resource][] {
  return Object.entries((t.toJSON() as Json).Resources).filter(([, r]) => r.Type === type);
}

const hasTag = (r: Resource, key: string, value: string) =>
  ((r.Properties.Tags as { Key: string; Value: string }[] | undefined) ?? []).some(
    (t) => t.Key === key && t.Value === value,
  );

beforeAll(() => {
  const app = new App({ context: { testbed: 'true' } });
  stacks = addTestbed(app);
  peer = Template.fromStack(stacks.peer);
  client = Template.fromStack(stacks.client);
  peerRoutes = Template.fromStack(stacks.peerRoutes);
}, 300_000);

describe('testbed stacks (seed 000 Tokyo/Osaka)', () => {
  it('puts the client in Tokyo and the target in Osaka with distinct VPC CIDRs', () => {
    expect(stacks.client.region).toBe('ap-northeast-1');
    expect(stacks.peer.region).toBe('ap-northeast-3');
    expect(stacks.peerRoutes.region).toBe('ap-northeast-3');
    client.resourceCountIs('AWS::EC2::VPC', 1);
    peer.resourceCountIs('AWS::EC2::VPC', 1);
    client.hasResourceProperties('AWS::EC2::VPC', { CidrBlock: '10.0.0.0/16' });
    peer.hasResourceProperties('AWS::EC2::VPC', { CidrBlock: '10.1.0.0/16' });
    for (const t of [client, peer]) t.resourceCountIs('AWS::EC2::InternetGateway', 0);
  });

  it('pins every subnet by AZ ID, never by AZ name', () => {
    const azIds = (t: Template) =>
      ofType(t, 'AWS::EC2::Subnet').map(([, r]) => {
        expect(r.Properties.AvailabilityZone).toBeUndefined();
        return r.Properties.AvailabilityZoneId;
      });
    expect(azIds(client).sort()).toEqual(['apne1-az1', 'apne1-az4']);
    expect(azIds(peer).sort()).toEqual(['apne3-az1', 'apne3-az2']);
    // Client and same-AZ peer share the client AZ's subnet; the cross-AZ peer is elsewhere.
    const subnetOf = (name: string) => {
      const [, inst] = ofType(client, 'AWS::EC2::Instance').find(([id]) => id.includes(name))!;
      const ref = (inst.Properties.SubnetId as { Ref: string }).Ref;
      return (client.toJSON() as Json).Resources[ref].Properties.AvailabilityZoneId;
    };
    expect(subnetOf('HostsClient')).toBe('apne1-az4');
    expect(subnetOf('HostsSameAzPeer')).toBe('apne1-az4');
    expect(subnetOf('HostsCrossAzPeer')).toBe('apne1-az1');
  });

  it('gives each VPC SSM interface endpoints and an S3 gateway endpoint', () => {
    for (const [t, region] of [
      [client, 'ap-northeast-1'],
      [peer, 'ap-northeast-3'],
    ] as const) {
      for (const svc of ['ssm', 'ssmmessages', 'ec2messages'])
        t.hasResourceProperties('AWS::EC2::VPCEndpoint', {
          ServiceName: `com.amazonaws.${region}.${svc}`,
          VpcEndpointType: 'Interface',
          PrivateDnsEnabled: true,
        });
      t.hasResourceProperties('AWS::EC2::VPCEndpoint', {
        ServiceName: `com.amazonaws.${region}.s3`,
        VpcEndpointType: 'Gateway',
      });
    }
  });

  it('creates an inter-region VPC peering connection', () => {
    client.resourceCountIs('AWS::EC2::VPCPeeringConnection', 1);
    client.hasResourceProperties('AWS::EC2::VPCPeeringConnection', {
      PeerRegion: 'ap-northeast-3',
      PeerVpcId: Match.anyValue(),
    });
  });

  it('peers two Transit Gateways and accepts the attachment in the peer region, then waits', () => {
    client.resourceCountIs('AWS::EC2::TransitGateway', 1);
    peer.resourceCountIs('AWS::EC2::TransitGateway', 1);
    client.hasResourceProperties('AWS::EC2::TransitGatewayPeeringAttachment', {
      PeerRegion: 'ap-northeast-3',
      PeerTransitGatewayId: Match.anyValue(),
    });
    const [[acceptId, accept]] = ofType(client, 'Custom::AWS');
    const create = JSON.stringify(accept.Properties.Create);
    expect(create).toContain('AcceptTransitGatewayPeeringAttachment');
    expect(create).toContain('\\"region\\":\\"ap-northeast-3\\"');
    const [[waiterId, waiter]] = ofType(client, 'Custom::TgwPeeringAvailable');
    expect(waiter.DependsOn ?? []).toContain(acceptId);
    // The static route and the association wait for `available`.
    for (const type of ['AWS::EC2::TransitGatewayRoute', 'AWS::EC2::TransitGatewayRouteTableAssociation']) {
      const peeringOnes = ofType(client, type).filter(([, r]) =>
        JSON.stringify(r.Properties.TransitGatewayAttachmentId).includes('TgwPeering'),
      );
      expect(peeringOnes).toHaveLength(1);
      expect(peeringOnes[0][1].DependsOn ?? []).toContain(waiterId);
    }
  });

  it('adds static TGW routes for the other CIDR in both regions', () => {
    client.hasResourceProperties('AWS::EC2::TransitGatewayRoute', { DestinationCidrBlock: '10.1.0.0/16' });
    peerRoutes.hasResourceProperties('AWS::EC2::TransitGatewayRoute', { DestinationCidrBlock: '10.0.0.0/16' });
    peerRoutes.resourceCountIs('AWS::EC2::TransitGatewayRouteTableAssociation', 1);
    // Own TGWs never auto-associate: every association is explicit.
    for (const t of [client, peer])
      t.hasResourceProperties('AWS::EC2::TransitGateway', {
        DefaultRouteTableAssociation: 'disable',
        DefaultRouteTablePropagation: 'disable',
      });
  });

  it('spans the PrivateLink NLB over two subnets in two AZ IDs', () => {
    const [[, nlb]] = ofType(peer, 'AWS::ElasticLoadBalancingV2::LoadBalancer');
    expect(nlb.Properties).toMatchObject({ Type: 'network', Scheme: 'internal' });
    const subnets = (nlb.Properties.Subnets as { Ref: string }[]).map(
      (s) => (peer.toJSON() as Json).Resources[s.Ref].Properties.AvailabilityZoneId,
    );
    expect(new Set(subnets).size).toBe(2);
    const listenerPorts = ofType(peer, 'AWS::ElasticLoadBalancingV2::Listener').map(([, r]) => r.Properties.Port);
    expect(listenerPorts.sort()).toEqual([5201, 7000, 8080]);
    for (const [, r] of ofType(peer, 'AWS::ElasticLoadBalancingV2::Listener'))
      expect(r.Properties.Protocol).toBe('TCP');
  });

  it('opens the endpoint service to the client region and consumes it without private DNS', () => {
    peer.hasResourceProperties('AWS::EC2::VPCEndpointService', {
      SupportedRegions: ['ap-northeast-1'],
      AcceptanceRequired: false,
    });
    client.hasResourceProperties('AWS::EC2::VPCEndpoint', {
      VpcEndpointType: 'Interface',
      PrivateDnsEnabled: false,
      ServiceRegion: 'ap-northeast-3',
      ServiceName: Match.objectLike({ 'Fn::Join': Match.anyValue() }),
    });
  });

  it('holds exactly one VPC route per peer CIDR per table, via peering', () => {
    type Route = { stack: string } & Record<string, unknown>;
    const routesOf = (stack: string, t: Template): Route[] =>
      ofType(t, 'AWS::EC2::Route').map(([, r]) => ({ stack, ...r.Properties }));
    const routes = [...routesOf('client', client), ...routesOf('peer', peer), ...routesOf('peerRoutes', peerRoutes)];
    const clientSide = routes.filter((r) => r.DestinationCidrBlock === '10.1.0.0/16');
    const peerSide = routes.filter((r) => r.DestinationCidrBlock === '10.0.0.0/16');
    expect(clientSide).toHaveLength(1);
    expect(peerSide).toHaveLength(1);
    expect(clientSide[0]).toMatchObject({ stack: 'client', VpcPeeringConnectionId: { Ref: 'VpcPeering' } });
    expect(peerSide[0].stack).toBe('peerRoutes');
    expect(peerSide[0].VpcPeeringConnectionId).toBeDefined();
    for (const r of routes) expect(r.TransitGatewayId).toBeUndefined();
  });

  it('tags instances and route tables pathbench:managed=true', () => {
    for (const t of [client, peer]) {
      for (const type of ['AWS::EC2::Instance', 'AWS::EC2::RouteTable']) {
        const all = ofType(t, type);
        expect(all.length).toBeGreaterThan(0);
        for (const [id, r] of all) expect(hasTag(r, 'pathbench:managed', 'true'), id).toBe(true);
      }
    }
  });

  it('opens only the probe ports between the two VPC CIDRs', () => {
    const [[, sg]] = ofType(client, 'AWS::EC2::SecurityGroup').filter(([id]) => id.includes('ProbeSg'));
    const ingress = sg.Properties.SecurityGroupIngress as { IpProtocol: string; FromPort: number; CidrIp: string }[];
    const seen = new Set(ingress.map((r) => `${r.IpProtocol}/${r.FromPort}/${r.CidrIp}`));
    for (const cidr of ['10.0.0.0/16', '10.1.0.0/16']) {
      for (const rule of [
        'tcp/7000',
        'tcp/8080',
        'tcp/5201',
        'udp/5201',
        'tcp/11111',
        'udp/11111',
        'tcp/7007',
        'udp/7007',
        'icmp/-1',
      ])
        expect(seen.has(`${rule}/${cidr}`), `${rule} ${cidr}`).toBe(true);
    }
    expect(ingress.every((r) => r.CidrIp === '10.0.0.0/16' || r.CidrIp === '10.1.0.0/16')).toBe(true);
    expect(ingress).toHaveLength(18);
  });

  it('boots hosts into the target servers from the agent asset', () => {
    const [[, inst]] = ofType(peer, 'AWS::EC2::Instance');
    const userData = JSON.stringify(inst.Properties.UserData);
    expect(userData).toContain('agent.cjs serve --tcp 7000 --http 8080');
    expect(userData).toContain('iperf3 -s -p 5201');
    expect(userData).toContain('sockperf server');
    expect(userData).toContain('--pingpong 7007');
    expect(userData).toContain('dnf install -y iperf3 nodejs20');
    peer.hasResourceProperties('AWS::IAM::Role', {
      ManagedPolicyArns: Match.arrayWith([
        Match.objectLike({
          'Fn::Join': Match.arrayWith([Match.arrayWith([':iam::aws:policy/AmazonSSMManagedInstanceCore'])]),
        }),
      ]),
    });
  });

  it('lets each host read only its own specs and write only its own raw output, from itself', () => {
    const app = new App({ context: { testbed: 'true', testbedPipelineBucket: 'pathbench-data' } });
    const t = Template.fromStack(addTestbed(app).client);
    const [[instanceId]] = ofType(t, 'AWS::EC2::Instance');
    const own = (prefix: string) => ({
      'Fn::Join': ['', Match.arrayWith([`:s3:::pathbench-data/${prefix}`, { Ref: instanceId }, '/*'])],
    });
    const fromItself = {
      StringLike: {
        'ec2:SourceInstanceARN': { 'Fn::Join': ['', Match.arrayWith([{ Ref: instanceId }])] },
      },
    };
    t.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [
          {
            Action: 's3:GetObject',
            Effect: 'Allow',
            Resource: own('specs/run=*/path=*/client='),
            Condition: fromItself,
          },
          { Action: 's3:PutObject', Effect: 'Allow', Resource: own('raw/path=*/run=*/client='), Condition: fromItself },
        ],
      },
    });
    // No statement of any policy reaches every spec or every raw prefix.
    const text = JSON.stringify(t.toJSON());
    expect(text).not.toMatch(/pathbench-data\/(specs|raw)\/\*/);
  });

  it('outputs everything a plan needs', () => {
    const keys = [
      ...Object.keys((client.toJSON() as Json).Outputs ?? {}),
      ...Object.keys((peer.toJSON() as Json).Outputs ?? {}),
    ];
    for (const key of Object.values(TESTBED_OUTPUTS)) expect(keys, key).toContain(key);
    client.hasResourceProperties('AWS::SSM::Parameter', { Name: '/pathbench/testbed/outputs/PathbenchTestbedClient' });
    peer.hasResourceProperties('AWS::SSM::Parameter', { Name: '/pathbench/testbed/outputs/PathbenchTestbedPeer' });
  });

  it('creates what the cost note counts', () => {
    const inv = DEFAULT_TESTBED_INVENTORY;
    const both = [client, peer];
    const count = (type: string) => both.reduce((n, t) => n + ofType(t, type).length, 0);
    expect(count('AWS::EC2::Instance')).toBe(inv.instances);
    expect(stacks.props.instanceType).toBe(inv.instanceType);
    expect(count('AWS::ElasticLoadBalancingV2::LoadBalancer')).toBe(inv.nlbs);
    // The seed counts the peering attachment on both sides ("4 attachments").
    expect(count('AWS::EC2::TransitGatewayAttachment') + 2 * count('AWS::EC2::TransitGatewayPeeringAttachment')).toBe(
      inv.tgwAttachments,
    );
    const endpointAzs = both
      .flatMap((t) => ofType(t, 'AWS::EC2::VPCEndpoint'))
      .filter(([, r]) => r.Properties.VpcEndpointType === 'Interface')
      .reduce((n, [, r]) => n + ((r.Properties.SubnetIds as unknown[] | undefined) ?? []).length, 0);
    expect(endpointAzs).toBe(inv.interfaceEndpointAzs);
  });
});

describe('testbed settings', () => {
  it('takes regions and AZ IDs from context', () => {
    const app = new App({
      context: {
        testbedClientRegion: 'us-east-1',
        testbedPeerRegion: 'us-west-2',
        testbedClientAzId: 'use1-az1',
        testbedCrossAzId: 'use1-az2',
        testbedPeerAzIds: 'usw2-az1,usw2-az2',
        testbedInstanceType: 'c7g.large',
      },
    });
    const s = addTestbed(app);
    expect(s.client.region).toBe('us-east-1');
    expect(s.peer.region).toBe('us-west-2');
    const t = Template.fromStack(s.peer);
    t.hasResourceProperties('AWS::EC2::Instance', { InstanceType: 'c7g.large' });
    // Graviton gets the arm64 AL2023 image parameter.
    expect(JSON.stringify(t.toJSON().Parameters)).toContain('arm64');
    Template.fromStack(s.peer).hasResourceProperties('AWS::EC2::VPCEndpointService', {
      SupportedRegions: ['us-east-1'],
    });
  });

  it('refuses AZ names, a moved region with Tokyo AZ IDs, and overlapping CIDRs, all at once', () => {
    const app = new App({ context: { testbedClientRegion: 'us-east-1' } });
    let err: unknown;
    try {
      addTestbed(app, { crossAzId: 'ap-northeast-1c', peerCidr: '10.0.0.0/16' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    expect(msg).toContain('crossAzId: expected an AZ ID');
    expect(msg).toContain('clientAzId: set AZ IDs of us-east-1');
    expect(msg).toContain('peerCidr: must not overlap');
  });
});
