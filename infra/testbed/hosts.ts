/**
 * Testbed hosts: one instance role/profile per stack (SSM managed instance + read of the agent
 * asset) and AL2023 instances pinned to a subnet, booting into the target servers.
 */
import { Fn, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Asset } from 'aws-cdk-lib/aws-s3-assets';
import { Construct } from 'constructs';
import { MANAGED_TAG } from './network.js';
import { isArmInstanceType } from './props.js';
import { hostUserData } from './user-data.js';

export interface HostFleetProps {
  instanceType: string;
  agentPath: string;
  /** Pipeline results bucket the hosts may read specs from and write raw outputs to. */
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
      const bucketArn = `arn:${Stack.of(this).partition}:s3:::${props.pipelineBucketName}`;
      this.role.addToPolicy(
        new iam.PolicyStatement({
          actions: ['s3:GetObject', 's3:PutObject'],
          resources: [`${bucketArn}/specs/*`, `${bucketArn}/raw/*`, `${bucketArn}/agent/*`],
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
    return instance;
  }
}
