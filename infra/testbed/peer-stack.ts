/**
 * The peer-region stack (Osaka by default): VPC in two AZ IDs, the target host, a Transit
 * Gateway with its VPC attachment, and the PrivateLink provider side (internal NLB across two
 * AZs + endpoint service open to the client region). Routes towards the client live in the
 * PeerRoutes stack, which can only be deployed after the client stack created the peerings.
 */
import { Stack, type StackProps } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import type { Construct } from 'constructs';
import { HostFleet } from './hosts.js';
import { TestbedNetwork } from './network.js';
import { addTestbedOutputs } from './outputs.js';
import { TESTBED_PORTS } from './plan-from-outputs.js';
import type { TestbedProps } from './props.js';

export interface PeerStackProps extends StackProps {
  testbed: TestbedProps;
}

export class TestbedPeerStack extends Stack {
  readonly network: TestbedNetwork;
  readonly target: ec2.CfnInstance;
  readonly transitGateway: ec2.CfnTransitGateway;
  readonly tgwRouteTable: ec2.CfnTransitGatewayRouteTable;
  readonly endpointService: ec2.CfnVPCEndpointService;

  constructor(scope: Construct, id: string, props: PeerStackProps) {
    super(scope, id, props);
    const tb = props.testbed;
    const [targetAz, secondAz] = tb.peerAzIds;

    this.network = new TestbedNetwork(this, 'Network', {
      name: 'peer',
      cidr: tb.peerCidr,
      peerCidr: tb.clientCidr,
      azIds: [targetAz, secondAz],
      endpointAzIds: [targetAz],
    });
    const fleet = new HostFleet(this, 'Hosts', { instanceType: tb.instanceType, agentPath: tb.agentPath });
    this.target = fleet.host(
      'Target',
      `peer-target-${targetAz}`,
      this.network.subnet(targetAz),
      this.network.probeSecurityGroup,
    );

    const tgw = tgwWithRouteTable(this, 'Tgw', {
      asn: 64513,
      network: this.network,
      attachAzIds: [targetAz, secondAz],
      name: 'peer',
    });
    this.transitGateway = tgw.transitGateway;
    this.tgwRouteTable = tgw.routeTable;

    // PrivateLink provider. Cross-region endpoint services refuse an NLB in fewer than 2 AZs
    // ("Services must support at least 2 availability zones for cross region").
    const nlb = new elbv2.CfnLoadBalancer(this, 'Nlb', {
      type: 'network',
      scheme: 'internal',
      subnets: [this.network.subnet(targetAz).ref, this.network.subnet(secondAz).ref],
    });
    // TCP only: an NLB behind PrivateLink takes no UDP listener without IPv6 source NAT.
    for (const [name, port] of [
      ['Agent', TESTBED_PORTS.tcp],
      ['Http', TESTBED_PORTS.http],
      ['Iperf3', TESTBED_PORTS.iperf3],
    ] as const) {
      const tg = new elbv2.CfnTargetGroup(this, `Tg${name}`, {
        vpcId: this.network.vpc.ref,
        protocol: 'TCP',
        port,
        targetType: 'instance',
        targets: [{ id: this.target.ref, port }],
        healthCheckProtocol: 'TCP',
        healthCheckIntervalSeconds: 10,
      });
      new elbv2.CfnListener(this, `Listener${name}`, {
        loadBalancerArn: nlb.ref,
        protocol: 'TCP',
        port,
        defaultActions: [{ type: 'forward', targetGroupArn: tg.ref }],
      });
    }
    this.endpointService = new ec2.CfnVPCEndpointService(this, 'EndpointService', {
      networkLoadBalancerArns: [nlb.ref],
      acceptanceRequired: false,
      supportedRegions: [tb.clientRegion],
    });
    new ec2.CfnVPCEndpointServicePermissions(this, 'EndpointServiceAccount', {
      serviceId: this.endpointService.attrServiceId,
      allowedPrincipals: [`arn:${this.partition}:iam::${this.account}:root`],
    });

    addTestbedOutputs(this, {
      peerRegion: this.region,
      peerAzId: targetAz,
      peerInstanceId: this.target.ref,
      peerTargetIp: this.target.attrPrivateIp,
      peerVpcCidr: tb.peerCidr,
      peerRouteTableId: this.network.routeTable.ref,
      peerTransitGatewayId: this.transitGateway.ref,
      endpointServiceName: endpointServiceName(this.region, this.endpointService.attrServiceId),
      nlbArn: nlb.ref,
      // NLB direct (seed 000 §6.2): the same NLB reached over the peering or the TGW, not PrivateLink.
      nlbDnsName: nlb.attrDnsName,
    });
  }
}

/** The name consumers use for an endpoint service: com.amazonaws.vpce.<region>.<service id>. */
export function endpointServiceName(region: string, serviceId: string): string {
  return `com.amazonaws.vpce.${region}.${serviceId}`;
}

export interface TgwProps {
  asn: number;
  network: TestbedNetwork;
  attachAzIds: string[];
  name: string;
}

/**
 * A Transit Gateway with its own route table (default association/propagation off, so every
 * association is explicit and the peering attachment can be associated once it is available),
 * the VPC attachment associated and propagating into it.
 */
export function tgwWithRouteTable(scope: Construct, id: string, p: TgwProps) {
  const transitGateway = new ec2.CfnTransitGateway(scope, id, {
    // Distinct ASNs on the two peered gateways, as AWS recommends for TGW peering.
    amazonSideAsn: p.asn,
    defaultRouteTableAssociation: 'disable',
    defaultRouteTablePropagation: 'disable',
    description: `pathbench testbed ${p.name}`,
    tags: [{ key: 'Name', value: `pathbench-${p.name}-tgw` }],
  });
  const routeTable = new ec2.CfnTransitGatewayRouteTable(scope, `${id}RouteTable`, {
    transitGatewayId: transitGateway.ref,
    tags: [{ key: 'Name', value: `pathbench-${p.name}-tgw-rt` }],
  });
  const vpcAttachment = new ec2.CfnTransitGatewayAttachment(scope, `${id}VpcAttachment`, {
    transitGatewayId: transitGateway.ref,
    vpcId: p.network.vpc.ref,
    subnetIds: p.attachAzIds.map((az) => p.network.subnet(az).ref),
    tags: [{ key: 'Name', value: `pathbench-${p.name}-tgw-vpc` }],
  });
  new ec2.CfnTransitGatewayRouteTableAssociation(scope, `${id}VpcAssociation`, {
    transitGatewayAttachmentId: vpcAttachment.ref,
    transitGatewayRouteTableId: routeTable.ref,
  });
  new ec2.CfnTransitGatewayRouteTablePropagation(scope, `${id}VpcPropagation`, {
    transitGatewayAttachmentId: vpcAttachment.ref,
    transitGatewayRouteTableId: routeTable.ref,
  });
  return { transitGateway, routeTable, vpcAttachment };
}
