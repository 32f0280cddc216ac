/**
 * The peer-region half of the connections, deployed after the client stack: the peer VPC's
 * route back to the client CIDR via VPC peering (active at deploy time, like the client side),
 * and the TGW peering attachment's association and static route in the peer TGW route table.
 * A separate stack because the client stack needs the peer's VPC/TGW ids first and these
 * resources need the client's peering ids: one stack per region would be a reference cycle.
 */
import { Stack, type StackProps } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type { Construct } from 'constructs';
import type { TestbedClientStack } from './client-stack.js';
import type { TestbedPeerStack } from './peer-stack.js';
import type { TestbedProps } from './props.js';

export interface PeerRoutesStackProps extends StackProps {
  testbed: TestbedProps;
  peer: TestbedPeerStack;
  client: TestbedClientStack;
}

export class TestbedPeerRoutesStack extends Stack {
  constructor(scope: Construct, id: string, props: PeerRoutesStackProps) {
    super(scope, id, props);
    const { testbed: tb, peer, client } = props;
    new ec2.CfnRoute(this, 'RouteToClientViaPeering', {
      routeTableId: peer.network.routeTable.ref,
      destinationCidrBlock: tb.clientCidr,
      vpcPeeringConnectionId: client.peeringConnection.ref,
    });
    // The client stack finished only after the attachment became available, so these succeed.
    const attachmentId = client.tgwPeering.attrTransitGatewayAttachmentId;
    new ec2.CfnTransitGatewayRouteTableAssociation(this, 'TgwPeeringAssociation', {
      transitGatewayAttachmentId: attachmentId,
      transitGatewayRouteTableId: peer.tgwRouteTable.ref,
    });
    new ec2.CfnTransitGatewayRoute(this, 'TgwRouteToClient', {
      transitGatewayRouteTableId: peer.tgwRouteTable.ref,
      destinationCidrBlock: tb.clientCidr,
      transitGatewayAttachmentId: attachmentId,
    });
  }
}
