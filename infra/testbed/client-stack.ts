/**
 * The client-region stack (Tokyo by default): VPC in the client AZ and a second AZ, the client
 * and its same-AZ and cross-AZ peers, a Transit Gateway, and the requester side of every
 * connection to the peer region — VPC peering, TGW peering (accepted in the peer region and
 * awaited), and the cross-region PrivateLink endpoint. It deploys with peering active: the route
 * table holds the peer CIDR via the peering connection; the pipeline swaps it to the TGW for D.
 */
import { Fn, Stack, type StackProps } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type { Construct } from 'constructs';
import { HostFleet } from './hosts.js';
import { TestbedNetwork } from './network.js';
import { addTestbedOutputs } from './outputs.js';
import { endpointServiceName, type TestbedPeerStack, tgwWithRouteTable } from './peer-stack.js';
import { TESTBED_PORTS } from './plan-from-outputs.js';
import type { TestbedProps } from './props.js';
import { TgwPeeringAccept } from './tgw-accept.js';

export interface ClientStackProps extends StackProps {
  testbed: TestbedProps;
  peer: TestbedPeerStack;
}

export class TestbedClientStack extends Stack {
  readonly network: TestbedNetwork;
  readonly peeringConnection: ec2.CfnVPCPeeringConnection;
  readonly tgwPeering: ec2.CfnTransitGatewayPeeringAttachment;
  readonly tgwAccept: TgwPeeringAccept;

  constructor(scope: Construct, id: string, props: ClientStackProps) {
    super(scope, id, props);
    const tb = props.testbed;
    const peer = props.peer;
    const plAzIds = tb.privateLinkEndpointAzIds ?? [tb.clientAzId];

    this.network = new TestbedNetwork(this, 'Network', {
      name: 'client',
      cidr: tb.clientCidr,
      peerCidr: tb.peerCidr,
      azIds: [...new Set([tb.clientAzId, tb.crossAzId, ...plAzIds])],
      endpointAzIds: [tb.clientAzId],
    });
    const fleet = new HostFleet(this, 'Hosts', {
      instanceType: tb.instanceType,
      agentPath: tb.agentPath,
      pipelineBucketName: tb.pipelineBucketName,
    });
    const sg = this.network.probeSecurityGroup;
    const client = fleet.host('Client', `client-${tb.clientAzId}`, this.network.subnet(tb.clientAzId), sg);
    const sameAz = fleet.host('SameAzPeer', `same-az-${tb.clientAzId}`, this.network.subnet(tb.clientAzId), sg);
    const crossAz = fleet.host('CrossAzPeer', `cross-az-${tb.crossAzId}`, this.network.subnet(tb.crossAzId), sg);

    // Inter-region VPC peering in one account: CloudFormation accepts it itself.
    this.peeringConnection = new ec2.CfnVPCPeeringConnection(this, 'VpcPeering', {
      vpcId: this.network.vpc.ref,
      peerVpcId: peer.network.vpc.ref,
      peerRegion: peer.region,
      tags: [{ key: 'Name', value: 'pathbench-client-peer' }],
    });
    // The active route at deploy time. Only one next hop may hold a CIDR in a table (seed §4.3).
    new ec2.CfnRoute(this, 'RouteToPeerViaPeering', {
      routeTableId: this.network.routeTable.ref,
      destinationCidrBlock: tb.peerCidr,
      vpcPeeringConnectionId: this.peeringConnection.ref,
    });

    const tgw = tgwWithRouteTable(this, 'Tgw', {
      asn: 64512,
      network: this.network,
      attachAzIds: [tb.clientAzId, tb.crossAzId],
      name: 'client',
    });
    this.tgwPeering = new ec2.CfnTransitGatewayPeeringAttachment(this, 'TgwPeering', {
      transitGatewayId: tgw.transitGateway.ref,
      peerTransitGatewayId: peer.transitGateway.ref,
      peerRegion: peer.region,
      peerAccountId: this.account,
      tags: [{ key: 'Name', value: 'pathbench-tgw-peering' }],
    });
    this.tgwAccept = new TgwPeeringAccept(this, 'TgwPeeringAccept', {
      attachmentId: this.tgwPeering.attrTransitGatewayAttachmentId,
      peerRegion: peer.region,
    });
    // Peering attachments never propagate routes: associate and add a static route, once available.
    const association = new ec2.CfnTransitGatewayRouteTableAssociation(this, 'TgwPeeringAssociation', {
      transitGatewayAttachmentId: this.tgwPeering.attrTransitGatewayAttachmentId,
      transitGatewayRouteTableId: tgw.routeTable.ref,
    });
    association.node.addDependency(this.tgwAccept.ready);
    const tgwRoute = new ec2.CfnTransitGatewayRoute(this, 'TgwRouteToPeer', {
      transitGatewayRouteTableId: tgw.routeTable.ref,
      destinationCidrBlock: tb.peerCidr,
      transitGatewayAttachmentId: this.tgwPeering.attrTransitGatewayAttachmentId,
    });
    tgwRoute.node.addDependency(this.tgwAccept.ready);

    // Cross-region PrivateLink consumer. Private DNS does not work cross-region, so the plan
    // targets the endpoint's own DNS name.
    const plSg = new ec2.CfnSecurityGroup(this, 'PrivateLinkSg', {
      vpcId: this.network.vpc.ref,
      groupDescription: 'pathbench probes to the cross-region PrivateLink endpoint',
      securityGroupIngress: [TESTBED_PORTS.tcp, TESTBED_PORTS.http, TESTBED_PORTS.iperf3].map((port) => ({
        ipProtocol: 'tcp',
        fromPort: port,
        toPort: port,
        cidrIp: tb.clientCidr,
        description: `TCP ${port} from the client VPC`,
      })),
      tags: [{ key: 'Name', value: 'pathbench-client-sg-privatelink' }],
    });
    const endpoint = new ec2.CfnVPCEndpoint(this, 'PrivateLinkEndpoint', {
      vpcId: this.network.vpc.ref,
      vpcEndpointType: 'Interface',
      serviceName: endpointServiceName(peer.region, peer.endpointService.attrServiceId),
      serviceRegion: peer.region,
      privateDnsEnabled: false,
      subnetIds: plAzIds.map((az) => this.network.subnet(az).ref),
      securityGroupIds: [plSg.attrGroupId],
    });
    // DnsEntries are "hostedZoneId:dnsName"; the first is the regional name.
    const endpointDns = Fn.select(1, Fn.split(':', Fn.select(0, endpoint.attrDnsEntries)));

    addTestbedOutputs(this, {
      clientRegion: this.region,
      clientAzId: tb.clientAzId,
      crossAzId: tb.crossAzId,
      instanceType: tb.instanceType,
      clientInstanceId: client.ref,
      sameAzPeerIp: sameAz.attrPrivateIp,
      crossAzPeerIp: crossAz.attrPrivateIp,
      clientVpcCidr: tb.clientCidr,
      clientRouteTableId: this.network.routeTable.ref,
      clientTransitGatewayId: tgw.transitGateway.ref,
      vpcPeeringConnectionId: this.peeringConnection.ref,
      tgwPeeringAttachmentId: this.tgwPeering.attrTransitGatewayAttachmentId,
      privateLinkEndpointId: endpoint.ref,
      privateLinkDnsName: endpointDns,
    });
  }
}
