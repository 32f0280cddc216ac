/**
 * The seed-004 testbed (`cdk deploy -c testbed=seed-004`): one stack per region, each a VPC with
 * a subnet per AZ (pinned by AZ ID: AZ names differ per account), one host per AZ and a second,
 * same-AZ reference host in the first AZ — Tokyo apne1-az1/az2/az4 and Osaka apne3-az1/az2/az3,
 * eight hosts. Built from the seed-000 testbed's blocks (TestbedNetwork: no internet gateway,
 * SSM and S3 endpoints, the probe security group; HostFleet: role, agent asset, AL2023, the
 * user data that keeps the target servers up on every host). Each stack lists its hosts in
 * one output, `TestbedAzHosts` (JSON), which `pathbench plan az-matrix --outputs FILE` (or
 * `plan from-testbed --outputs FILE`) turns into the AZ-pair plan. The pairs are within a
 * region, so the two VPCs are not connected.
 */
import { type App, CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { AZ_HOSTS_OUTPUT } from './az-matrix.js';
import { acknowledgeTestbedFindings, HostFleet } from './hosts.js';
import { TestbedNetwork } from './network.js';
import { resolveTestbedProps, type TestbedProps } from './props.js';

export interface Seed004Region {
  region: string;
  cidr: string;
  /** The region's AZ IDs; the first also holds the same-AZ reference host. */
  azIds: [string, string, string];
}

export interface Seed004Props {
  tokyo: Seed004Region;
  osaka: Seed004Region;
  instanceType: string;
  agentPath: string;
  account?: string;
  stackPrefix: string;
  pipelineBucketName?: string;
}

export const SEED004_DEFAULTS: Omit<Seed004Props, 'instanceType' | 'agentPath' | 'account'> = {
  tokyo: { region: 'ap-northeast-1', cidr: '10.40.0.0/16', azIds: ['apne1-az1', 'apne1-az2', 'apne1-az4'] },
  osaka: { region: 'ap-northeast-3', cidr: '10.41.0.0/16', azIds: ['apne3-az1', 'apne3-az2', 'apne3-az3'] },
  stackPrefix: 'PathbenchTestbed004',
};

export interface Seed004StackProps extends StackProps {
  name: string;
  site: Seed004Region;
  otherCidr: string;
  instanceType: string;
  agentPath: string;
  pipelineBucketName?: string;
}

/** One region of the seed-004 testbed: three AZs, four hosts, the TestbedAzHosts output. */
export class Seed004RegionStack extends Stack {
  readonly network: TestbedNetwork;
  /** The hosts in output order: az1, az2, az3rd, az1 reference. */
  readonly hostIds: string[] = [];

  constructor(scope: Construct, id: string, props: Seed004StackProps) {
    super(scope, id, props);
    const { site } = props;
    this.network = new TestbedNetwork(this, 'Network', {
      name: `seed004-${props.name}`,
      cidr: site.cidr,
      peerCidr: props.otherCidr,
      azIds: [...site.azIds],
      endpointAzIds: [site.azIds[0]],
    });
    const fleet = new HostFleet(this, 'Hosts', {
      instanceType: props.instanceType,
      agentPath: props.agentPath,
      pipelineBucketName: props.pipelineBucketName,
    });
    const sg = this.network.probeSecurityGroup;
    const hosts = [
      ...site.azIds.map((azId) => ({ azId, name: `${props.name}-${azId}` })),
      { azId: site.azIds[0], name: `${props.name}-${site.azIds[0]}-ref` },
    ];
    const list = hosts.map((h, i) => {
      const logical = `Host${i}${i === hosts.length - 1 ? 'Ref' : ''}`;
      this.hostIds.push(logical);
      const instance = fleet.host(logical, h.name, this.network.subnet(h.azId), sg);
      return { name: h.name, region: this.region, azId: h.azId, instanceId: instance.ref, ip: instance.attrPrivateIp };
    });
    acknowledgeTestbedFindings(
      this.network.vpc,
      'a measurement testbed without internet gateway, torn down after the run; flow logs would add cost and no finding',
      fleet,
    );
    new CfnOutput(this, AZ_HOSTS_OUTPUT, {
      value: this.toJsonString(list),
      description: 'hosts of this region (JSON): pathbench plan az-matrix --outputs FILE',
    });
  }
}

export interface Seed004Stacks {
  tokyo: Seed004RegionStack;
  osaka: Seed004RegionStack;
}

/**
 * Add the two seed-004 stacks to `app`. Instance type, account, agent bundle and pipeline bucket
 * come from the seed-000 testbed's settings (context testbedInstanceType, testbedAccount,
 * testbedPipelineBucket); the regions and AZ IDs are seed 004's.
 */
export function addSeed004Testbed(app: App, props: Partial<TestbedProps> = {}): Seed004Stacks {
  const tb = resolveTestbedProps(app, props);
  const d = SEED004_DEFAULTS;
  const common = {
    instanceType: tb.instanceType,
    agentPath: tb.agentPath,
    pipelineBucketName: tb.pipelineBucketName,
  };
  const stack = (name: string, site: Seed004Region, other: Seed004Region) =>
    new Seed004RegionStack(app, `${d.stackPrefix}${name[0].toUpperCase()}${name.slice(1)}`, {
      ...common,
      name,
      site,
      otherCidr: other.cidr,
      env: { account: tb.account, region: site.region },
      description: `pathbench seed-004 testbed: ${site.region} ${site.azIds.join(', ')} (+ a same-AZ reference host)`,
    });
  return { tokyo: stack('tokyo', d.tokyo, d.osaka), osaka: stack('osaka', d.osaka, d.tokyo) };
}
