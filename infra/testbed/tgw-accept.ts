/**
 * Accepts an inter-region Transit Gateway peering attachment in the peer region and waits until
 * it is `available`. No CloudFormation resource accepts a TGW peering attachment, and static
 * routes (and route table associations) fail until the attachment is available (seed 000 §9).
 *
 * Two steps: an AwsCustomResource calls EC2 AcceptTransitGatewayPeeringAttachment in the peer
 * region (once, on create); then a Provider with an isComplete handler polls
 * DescribeTransitGatewayPeeringAttachments until the state is `available` (pending → available
 * takes minutes), failing fast on rejected/failed/deleted. Resources that need the attachment
 * depend on `ready`.
 */
import { CustomResource, Duration, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';

export interface TgwPeeringAcceptProps {
  attachmentId: string;
  peerRegion: string;
}

// Inline so the synth needs no bundling; the Node.js runtime ships the v3 EC2 client.
const WAITER_CODE = `
const { EC2Client, DescribeTransitGatewayPeeringAttachmentsCommand } = require('@aws-sdk/client-ec2');
const ec2 = new EC2Client({});
const DEAD = ['failed', 'failing', 'rejected', 'rejecting', 'deleted', 'deleting'];
exports.onEvent = async (event) => ({ PhysicalResourceId: event.ResourceProperties.AttachmentId });
exports.isComplete = async (event) => {
  if (event.RequestType === 'Delete') return { IsComplete: true };
  const id = event.ResourceProperties.AttachmentId;
  const out = await ec2.send(new DescribeTransitGatewayPeeringAttachmentsCommand({ TransitGatewayAttachmentIds: [id] }));
  const state = out.TransitGatewayPeeringAttachments?.[0]?.State;
  if (DEAD.includes(state)) throw new Error('TGW peering attachment ' + id + ' is ' + state);
  return { IsComplete: state === 'available' };
};
`;

export class TgwPeeringAccept extends Construct {
  /** Depend on this before associating or routing through the attachment. */
  readonly ready: CustomResource;
  readonly accept: cr.AwsCustomResource;

  constructor(scope: Construct, id: string, props: TgwPeeringAcceptProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.accept = new cr.AwsCustomResource(this, 'Accept', {
      onCreate: {
        service: 'EC2',
        action: 'AcceptTransitGatewayPeeringAttachment',
        parameters: { TransitGatewayAttachmentId: props.attachmentId },
        region: props.peerRegion,
        physicalResourceId: cr.PhysicalResourceId.of(props.attachmentId),
      },
      policy: cr.AwsCustomResourcePolicy.fromStatements([
        new iam.PolicyStatement({
          actions: ['ec2:AcceptTransitGatewayPeeringAttachment'],
          resources: [`arn:${stack.partition}:ec2:${props.peerRegion}:${stack.account}:transit-gateway-attachment/*`],
        }),
      ]),
      installLatestAwsSdk: false,
    });

    const code = lambda.Code.fromInline(WAITER_CODE);
    const common = { runtime: lambda.Runtime.NODEJS_22_X, code, timeout: Duration.seconds(30) };
    const onEvent = new lambda.Function(this, 'OnEvent', { ...common, handler: 'index.onEvent' });
    const isComplete = new lambda.Function(this, 'IsComplete', { ...common, handler: 'index.isComplete' });
    isComplete.addToRolePolicy(
      new iam.PolicyStatement({
        // Describe* actions support no resource-level permissions.
        actions: ['ec2:DescribeTransitGatewayPeeringAttachments'],
        resources: ['*'],
      }),
    );
    const provider = new cr.Provider(this, 'Waiter', {
      onEventHandler: onEvent,
      isCompleteHandler: isComplete,
      queryInterval: Duration.seconds(15),
      totalTimeout: Duration.minutes(20),
    });
    this.ready = new CustomResource(this, 'Available', {
      serviceToken: provider.serviceToken,
      resourceType: 'Custom::TgwPeeringAvailable',
      properties: { AttachmentId: props.attachmentId },
    });
    this.ready.node.addDependency(this.accept);
  }
}
