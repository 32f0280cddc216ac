/**
 * Testbed hosts: one instance role/profile per stack (SSM managed instance + read of the agent
 * asset) and AL2023 instances pinned to a subnet, booting into the target servers.
 */
import { Aws, Fn, Stack, Token } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Asset } from 'aws-cdk-lib/aws-s3-assets';
import { Construct, type IConstruct } from 'constructs';
import { ack } from '../nag.js';
import { MANAGED_TAG } from './network.js';
import { isArmInstanceType } from './props.js';
import { hostUserData } from './user-data.js';

export interface HostFleetProps {
  instanceType: string;
  agentPath: string;
  /** Pipeline results bucket each host may read its own specs from and write its own raw outputs to. */
  pipelineBucketName?: string;
}

/** Shared pieces of a stack's hosts: role, profile, agent asset, AMI, user data. */
export class HostFleet extends Construct {
  readonly role: iam.Role;
  private readonly profile: iam.CfnInstanceProfile;
  private readonly userData: string;
  private readonly imageId: string;

  constructor(
    scope: Construct,
    id: string,
    private readonly props: HostFleetProps,
  ) {
    super(scope, id);
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com'),
      description: 'pathbench testbed host: SSM managed instance, reads the agent asset',
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('AmazonSSMManagedInstanceCore')],
    });
    this.profile = new iam.CfnInstanceProfile(this, 'Profile', { roles: [this.role.roleName] });
    const agent = new Asset(this, 'Agent', { path: props.agentPath });
    agent.grantRead(this.role);
    if (props.pipelineBucketName) {
      this.role.addToPolicy(
        new iam.PolicyStatement({
          actions: ['s3:GetObject'],
          resources: [`${this.bucketArn(props.pipelineBucketName)}/agent/*`],
        }),
      );
    }
    const cpuType = isArmInstanceType(props.instanceType)
      ? ec2.AmazonLinuxCpuType.ARM_64
      : ec2.AmazonLinuxCpuType.X86_64;
    // Resolved by CloudFormation from the public SSM parameter at deploy time: no lookup at synth.
    this.imageId = ec2.MachineImage.latestAmazonLinux2023({ cpuType }).getImage(this).imageId;
    this.userData = hostUserData({
      region: Stack.of(this).region,
      bucket: agent.s3BucketName,
      key: agent.s3ObjectKey,
    });
  }

  /** An instance in `subnet`, tagged so the pipeline may stop/start it. */
  host(id: string, name: string, subnet: ec2.CfnSubnet, securityGroup: ec2.CfnSecurityGroup): ec2.CfnInstance {
    const instance = new ec2.CfnInstance(this, id, {
      instanceType: this.props.instanceType,
      imageId: this.imageId,
      subnetId: subnet.ref,
      securityGroupIds: [securityGroup.attrGroupId],
      iamInstanceProfile: this.profile.ref,
      userData: Fn.base64(this.userData),
      // IMDSv2 only; the AWS CLI in the user data uses it to fetch role credentials.
      metadataOptions: { httpTokens: 'required', httpEndpoint: 'enabled' },
      tags: [{ key: 'Name', value: `pathbench-${name}` }, MANAGED_TAG],
    });
    // The user data downloads the agent at first boot: the role's policy must exist by then.
    instance.node.addDependency(this.role);
    if (this.props.pipelineBucketName) {
      // Its own specs and raw output only (core/keys.ts: …/client=<instance id>/), from itself
      // only: no host reads another path's targets or writes another client's output. A policy of
      // its own, apart from the role (which the instance waits for): it names the instance.
      const bucketArn = this.bucketArn(this.props.pipelineBucketName);
      const fromItself = {
        StringLike: {
          'ec2:SourceInstanceARN': `arn:${Aws.PARTITION}:ec2:*:${Aws.ACCOUNT_ID}:instance/${instance.ref}`,
        },
      };
      new iam.Policy(this, `${id}Data`, {
        roles: [this.role],
        statements: [
          new iam.PolicyStatement({
            actions: ['s3:GetObject'],
            resources: [`${bucketArn}/specs/run=*/path=*/client=${instance.ref}/*`],
            conditions: fromItself,
          }),
          new iam.PolicyStatement({
            actions: ['s3:PutObject'],
            resources: [`${bucketArn}/raw/path=*/run=*/client=${instance.ref}/*`],
            conditions: fromItself,
          }),
        ],
      });
    }
    return instance;
  }

  private bucketArn(bucketName: string): string {
    return `arn:${Stack.of(this).partition}:s3:::${bucketName}`;
  }
}

/**
 * The cdk-nag findings a short-lived measurement testbed accepts, each named exactly with its
 * reason (the hosts run for the length of a measurement and are destroyed after it): the VPC's
 * flow logs (`vpcReason` says why not there), the hosts' SSM managed policy, CDK's asset grant
 * and the hosts' EC2 settings.
 */
export function acknowledgeTestbedFindings(vpc: IConstruct, vpcReason: string, fleet: HostFleet): void {
  ack(vpc, vpcReason, 'AwsSolutions-VPC7');
  ack(
    fleet.role,
    'the AWS managed policy for SSM managed instances is how the pipeline reaches the hosts (Run Command)',
    'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/AmazonSSMManagedInstanceCore]',
  );
  const stack = Stack.of(fleet);
  const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
  ack(
    fleet.role,
    "CDK's asset grant: read of the agent bundle in the CDK assets bucket only",
    'AwsSolutions-IAM5[Action::s3:GetObject*]',
    'AwsSolutions-IAM5[Action::s3:GetBucket*]',
    'AwsSolutions-IAM5[Action::s3:List*]',
    `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-${account}-${stack.region}/*]`,
  );
  ack(
    fleet,
    'measurement hosts live for one run: no data on their volumes, no detailed monitoring, no termination protection',
    'AwsSolutions-EC26',
    'AwsSolutions-EC28',
    'AwsSolutions-EC29',
  );
}
