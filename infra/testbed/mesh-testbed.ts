/**
 * The mesh testbed (`cdk deploy -c testbed=mesh -c meshRegions=us-east-1,eu-west-1,…`): one stack
 * per region, each a VPC with its own non-overlapping CIDR (10.(100+i).0.0/16 for the i-th region
 * of the list, so the mesh's address plan is fixed by the list order), one public subnet, one small
 * instance (default t3.micro, context testbedInstanceType) with the SSM role and the user data that
 * keeps the target servers up (HostFleet, infra/testbed/hosts.ts).
 *
 * The probe security group admits only the mesh's own instances: ingress on the probe ports from
 * the mesh regions' CIDRs and nothing else (no 0.0.0.0/0 rule, no SSH). A security group cannot
 * name a group in another region, so the per-region CIDRs are how the other instances are named;
 * each VPC holds one instance, so a region's CIDR is that instance. Egress: the probe ports to the
 * same CIDRs, and HTTPS out through the internet gateway for SSM and S3 (the specs and raw outputs
 * live in the pipeline's bucket, in another region than most hosts, which a gateway endpoint cannot
 * reach). The pairs reach each other at their private addresses over inter-region VPC peering: one
 * connection per pair of regions (n(n−1)/2), requested by the earlier region of the list, accepted
 * by CloudFormation itself (one account), with a route to the other's CIDR on both sides. The later
 * region's route back needs the connection's id, which exists only once the earlier stack (itself
 * after the later one: it names the later VPC) is deployed, so it lives in a third kind of stack,
 * `PathbenchMesh-<region>-Routes`, deployed last — one stack per region would be a reference
 * cycle, as in the seed-000 testbed (infra/testbed/peer-routes-stack.ts). Ids cross regions
 * through CDK `crossRegionReferences`.
 *
 * Each stack lists its host in one output, `TestbedMeshHost` (JSON), which `plan from-testbed
 * --outputs FILE` turns into a mesh plan with the round schedule (infra/testbed/mesh-plan.ts).
 */
import { type App, CfnOutput, Fn, Stack, type StackProps } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type { Construct } from 'constructs';
import { regionByCode } from '../../core/regions.js';
import { parseMeshRegions } from '../agent-region-stack.js';
import { acknowledgeTestbedFindings, HostFleet } from './hosts.js';
import { MESH_DEFAULT_INSTANCE_TYPE, MESH_HOST_OUTPUT, MESH_STACK_PREFIX, meshCidr } from './mesh-plan.js';
import { MANAGED_TAG, probeRules } from './network.js';
import { resolveTestbedProps, type TestbedProps } from './props.js';

export interface MeshRegionStackProps extends StackProps {
  /** This region's CIDR. */
  cidr: string;
  /** Every mesh region's CIDR, this one's included: the only sources the probe ports admit. */
  meshCidrs: readonly string[];
  instanceType: string;
  agentPath: string;
  pipelineBucketName?: string;
}

/**
 * At most this many regions: each VPC peers with every other one and routes to each, and the
 * default quotas are 50 active peering connections per VPC and 50 routes per route table (one
 * is the internet route).
 */
export const MESH_MAX_REGIONS = 50;

/** One region of the mesh testbed: VPC, public subnet, one host, the TestbedMeshHost output. */
export class MeshRegionStack extends Stack {
  readonly vpc: ec2.CfnVPC;
  readonly routeTable: ec2.CfnRouteTable;
  readonly probeSecurityGroup: ec2.CfnSecurityGroup;
  readonly host: ec2.CfnInstance;
  /** The peering connections this region requested, by the other region. */
  readonly peerings = new Map<string, ec2.CfnVPCPeeringConnection>();

  constructor(scope: Construct, id: string, props: MeshRegionStackProps) {
    super(scope, id, props);
    const region = this.region;
    const tag = (name: string) => [{ key: 'Name', value: `pathbench-mesh-${region}-${name}` }];
    this.vpc = new ec2.CfnVPC(this, 'Vpc', {
      cidrBlock: props.cidr,
      enableDnsSupport: true,
      enableDnsHostnames: true,
      tags: tag('vpc'),
    });
    const igw = new ec2.CfnInternetGateway(this, 'Igw', { tags: tag('igw') });
    const attach = new ec2.CfnVPCGatewayAttachment(this, 'IgwAttachment', {
      vpcId: this.vpc.ref,
      internetGatewayId: igw.ref,
    });
    this.routeTable = new ec2.CfnRouteTable(this, 'RouteTable', {
      vpcId: this.vpc.ref,
      tags: [...tag('rt'), MANAGED_TAG],
    });
    const toInternet = new ec2.CfnRoute(this, 'DefaultRoute', {
      routeTableId: this.routeTable.ref,
      destinationCidrBlock: '0.0.0.0/0',
      gatewayId: igw.ref,
    });
    toInternet.addDependency(attach);
    const subnet = new ec2.CfnSubnet(this, 'Subnet', {
      vpcId: this.vpc.ref,
      cidrBlock: props.cidr.replace(/\.0\.0\/16$/, '.0.0/24'),
      availabilityZone: Fn.select(0, Fn.getAzs()),
      // The host's outbound HTTPS to SSM and S3 leaves through the internet gateway.
      mapPublicIpOnLaunch: true,
      tags: tag('subnet'),
    });
    new ec2.CfnSubnetRouteTableAssociation(this, 'SubnetRt', {
      subnetId: subnet.ref,
      routeTableId: this.routeTable.ref,
    });
    this.probeSecurityGroup = new ec2.CfnSecurityGroup(this, 'ProbeSg', {
      vpcId: this.vpc.ref,
      groupDescription: 'pathbench mesh: probe ports from the mesh instances only',
      securityGroupIngress: probeRules([...props.meshCidrs]),
      securityGroupEgress: [
        ...probeRules([...props.meshCidrs]),
        { ipProtocol: 'tcp', fromPort: 443, toPort: 443, cidrIp: '0.0.0.0/0', description: 'HTTPS to SSM and S3' },
      ],
      tags: tag('sg-probe'),
    });
    const fleet = new HostFleet(this, 'Hosts', {
      instanceType: props.instanceType,
      agentPath: props.agentPath,
      pipelineBucketName: props.pipelineBucketName,
    });
    this.host = fleet.host('Host', `mesh-${region}`, subnet, this.probeSecurityGroup);
    acknowledgeTestbedFindings(
      this.vpc,
      'a measurement testbed torn down after the run; flow logs would add cost and no finding',
      fleet,
    );
    new CfnOutput(this, MESH_HOST_OUTPUT, {
      value: this.toJsonString({ region, instanceId: this.host.ref, ip: this.host.attrPrivateIp, cidr: props.cidr }),
      description: 'this region’s mesh host (JSON): pathbench plan from-testbed --outputs FILE',
    });
  }

  /**
   * Request peering with `other` (a later region of the list) and route its CIDR through it; the
   * route back is `other`'s routes stack's.
   */
  peerWith(other: MeshRegionStack, otherCidr: string): ec2.CfnVPCPeeringConnection {
    // Inter-region VPC peering in one account: CloudFormation accepts it itself.
    const peering = new ec2.CfnVPCPeeringConnection(this, `Peering-${other.region}`, {
      vpcId: this.vpc.ref,
      peerVpcId: other.vpc.ref,
      peerRegion: other.region,
      tags: [{ key: 'Name', value: `pathbench-mesh-${this.region}--${other.region}` }],
    });
    new ec2.CfnRoute(this, `RouteTo-${other.region}`, {
      routeTableId: this.routeTable.ref,
      destinationCidrBlock: otherCidr,
      vpcPeeringConnectionId: peering.ref,
    });
    this.peerings.set(other.region, peering);
    return peering;
  }
}

export interface MeshRoutesStackProps extends StackProps {
  /** This region's stack. */
  self: MeshRegionStack;
  /** The earlier regions of the list, with their CIDRs: each requested a peering with this one. */
  earlier: readonly { stack: MeshRegionStack; cidr: string }[];
}

/** A later region's routes back to every earlier region, through the peering each requested. */
export class MeshRoutesStack extends Stack {
  constructor(scope: Construct, id: string, props: MeshRoutesStackProps) {
    super(scope, id, props);
    for (const { stack, cidr } of props.earlier) {
      const peering = stack.peerings.get(props.self.region);
      if (!peering) throw new Error(`mesh testbed: ${stack.region} has no peering with ${props.self.region}`);
      new ec2.CfnRoute(this, `RouteTo-${stack.region}`, {
        routeTableId: props.self.routeTable.ref,
        destinationCidrBlock: cidr,
        vpcPeeringConnectionId: peering.ref,
      });
    }
  }
}

/** The mesh testbed's stacks: one per region, and the routes stacks of every region but the first. */
export interface MeshTestbed {
  regions: MeshRegionStack[];
  routes: MeshRoutesStack[];
}

/**
 * Add one mesh region stack per region of context meshRegions (at least two, at most
 * MESH_MAX_REGIONS), every pair peered, and the routes stacks.
 */
export function addMeshTestbed(
  app: App,
  regionsText: string | undefined,
  props: Partial<TestbedProps> = {},
): MeshTestbed {
  const regions = parseMeshRegions(regionsText, 'none');
  if (regions.length < 2) {
    throw new Error(`testbed=mesh: expected at least two regions in -c meshRegions=…, got ${regions.length}`);
  }
  if (regions.length > MESH_MAX_REGIONS) {
    throw new Error(
      `testbed=mesh: ${regions.length} regions in -c meshRegions=…; at most ${MESH_MAX_REGIONS} (every VPC peers with every other: the default quotas are 50 peering connections per VPC and 50 routes per route table)`,
    );
  }
  for (const r of regions) {
    if (!regionByCode(r)) throw new Error(`testbed=mesh: unknown region ${r} (core/regions.ts)`);
  }
  const tb = resolveTestbedProps(app, props);
  // The seed-000 default (c6i.large) is no small instance: the mesh has its own unless asked.
  const instanceType =
    props.instanceType ??
    (app.node.tryGetContext('testbedInstanceType') ? tb.instanceType : MESH_DEFAULT_INSTANCE_TYPE);
  const cidrs = regions.map((_, i) => meshCidr(i));
  const stacks = regions.map(
    (region, i) =>
      new MeshRegionStack(app, `${MESH_STACK_PREFIX}-${region}`, {
        env: { account: tb.account, region },
        crossRegionReferences: true,
        description: `pathbench mesh testbed: one small host in ${region} (${cidrs[i]}), peered with every other mesh region`,
        cidr: cidrs[i],
        meshCidrs: cidrs,
        instanceType,
        agentPath: tb.agentPath,
        pipelineBucketName: tb.pipelineBucketName,
      }),
  );
  stacks.forEach((s, i) => {
    for (let j = i + 1; j < stacks.length; j++) s.peerWith(stacks[j], cidrs[j]);
  });
  const routes = stacks.slice(1).map(
    (self, k) =>
      new MeshRoutesStack(app, `${MESH_STACK_PREFIX}-${self.region}-Routes`, {
        env: { account: tb.account, region: self.region },
        crossRegionReferences: true,
        description: `pathbench mesh testbed: routes in ${self.region} back to the ${k + 1} earlier mesh regions`,
        self,
        earlier: stacks.slice(0, k + 1).map((stack, i) => ({ stack, cidr: cidrs[i] })),
      }),
  );
  return { regions: stacks, routes };
}
