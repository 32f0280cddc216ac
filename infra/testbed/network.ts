/**
 * One testbed VPC with L1 resources, because the L2 Vpc cannot pin subnets by AZ ID: subnets per
 * AZ ID, one route table (tagged for the pipeline's route swaps), no internet gateway, SSM
 * interface endpoints and an S3 gateway endpoint, and the probe security group.
 */
import { type CfnTag, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';
import { TESTBED_PORTS } from './plan-from-outputs.js';
import { subnetCidr } from './props.js';

/** The tag the pipeline's IAM conditions expect on instances and route tables it may touch. */
export const MANAGED_TAG: CfnTag = { key: 'pathbench:managed', value: 'true' };

export interface TestbedNetworkProps {
  /** Short name for Name tags ("client", "peer"). */
  name: string;
  cidr: string;
  peerCidr: string;
  /** Subnets, one per AZ ID, in this order. */
  azIds: string[];
  /** AZ IDs whose subnets host the SSM endpoints (one is enough: endpoints are reachable from every AZ). */
  endpointAzIds: string[];
}

export class TestbedNetwork extends Construct {
  readonly vpc: ec2.CfnVPC;
  readonly subnets: Map<string, ec2.CfnSubnet>;
  readonly routeTable: ec2.CfnRouteTable;
  readonly probeSecurityGroup: ec2.CfnSecurityGroup;
  readonly cidr: string;

  constructor(scope: Construct, id: string, props: TestbedNetworkProps) {
    super(scope, id);
    const region = Stack.of(this).region;
    const tag = (name: string): CfnTag[] => [{ key: 'Name', value: `pathbench-${props.name}-${name}` }];
    this.cidr = props.cidr;

    this.vpc = new ec2.CfnVPC(this, 'Vpc', {
      cidrBlock: props.cidr,
      // Interface endpoints with private DNS need both.
      enableDnsSupport: true,
      enableDnsHostnames: true,
      tags: tag('vpc'),
    });
    this.routeTable = new ec2.CfnRouteTable(this, 'RouteTable', {
      vpcId: this.vpc.ref,
      tags: [...tag('rt'), MANAGED_TAG],
    });
    this.subnets = new Map();
    props.azIds.forEach((azId, i) => {
      const subnet = new ec2.CfnSubnet(this, `Subnet${i}`, {
        vpcId: this.vpc.ref,
        availabilityZoneId: azId,
        cidrBlock: subnetCidr(props.cidr, i),
        tags: tag(azId),
      });
      new ec2.CfnSubnetRouteTableAssociation(this, `Subnet${i}Rt`, {
        subnetId: subnet.ref,
        routeTableId: this.routeTable.ref,
      });
      this.subnets.set(azId, subnet);
    });

    new ec2.CfnVPCEndpoint(this, 'S3Gateway', {
      vpcId: this.vpc.ref,
      serviceName: `com.amazonaws.${region}.s3`,
      vpcEndpointType: 'Gateway',
      routeTableIds: [this.routeTable.ref],
    });

    const endpointSg = new ec2.CfnSecurityGroup(this, 'EndpointSg', {
      vpcId: this.vpc.ref,
      groupDescription: 'HTTPS from this VPC to the SSM interface endpoints',
      securityGroupIngress: [
        { ipProtocol: 'tcp', fromPort: 443, toPort: 443, cidrIp: props.cidr, description: 'HTTPS from this VPC' },
      ],
      securityGroupEgress: [
        { ipProtocol: 'tcp', fromPort: 443, toPort: 443, cidrIp: props.cidr, description: 'responses stay in VPC' },
      ],
      tags: tag('sg-endpoints'),
    });
    for (const service of ['ssm', 'ssmmessages', 'ec2messages']) {
      new ec2.CfnVPCEndpoint(this, `Endpoint-${service}`, {
        vpcId: this.vpc.ref,
        serviceName: `com.amazonaws.${region}.${service}`,
        vpcEndpointType: 'Interface',
        privateDnsEnabled: true,
        subnetIds: props.endpointAzIds.map((az) => this.subnet(az).ref),
        securityGroupIds: [endpointSg.attrGroupId],
      });
    }

    this.probeSecurityGroup = new ec2.CfnSecurityGroup(this, 'ProbeSg', {
      vpcId: this.vpc.ref,
      groupDescription: 'pathbench probe ports between the two testbed VPCs',
      securityGroupIngress: probeRules([props.cidr, props.peerCidr]),
      securityGroupEgress: [
        ...probeRules([props.cidr, props.peerCidr]),
        // No internet gateway or NAT exists, so 0.0.0.0/0 on 443 reaches only the VPC endpoints
        // and the S3 gateway endpoint (whose prefix list ID would need a lookup).
        { ipProtocol: 'tcp', fromPort: 443, toPort: 443, cidrIp: '0.0.0.0/0', description: 'HTTPS to endpoints' },
      ],
      tags: tag('sg-probe'),
    });
  }

  /** The subnet in an AZ ID; throws for an AZ this VPC has no subnet in. */
  subnet(azId: string): ec2.CfnSubnet {
    const s = this.subnets.get(azId);
    if (!s) throw new Error(`testbed ${this.node.id}: no subnet in ${azId}`);
    return s;
  }
}

/** Probe ports (tcp-connect/agent, HTTP, iperf3, sockperf, pingpong) and ICMP (MTU), per CIDR. */
export function probeRules(cidrs: string[]): ec2.CfnSecurityGroup.IngressProperty[] {
  const { tcp, http, iperf3, sockperf, pingpong } = TESTBED_PORTS;
  const ports: [string, number, string][] = [
    ['tcp', tcp, 'agent TCP'],
    ['tcp', http, 'agent HTTP'],
    ['tcp', iperf3, 'iperf3 TCP'],
    ['udp', iperf3, 'iperf3 UDP'],
    ['tcp', sockperf, 'sockperf TCP'],
    ['udp', sockperf, 'sockperf UDP'],
    ['tcp', pingpong, 'pingpong TCP'],
    ['udp', pingpong, 'pingpong UDP'],
  ];
  const rules: ec2.CfnSecurityGroup.IngressProperty[] = [];
  for (const cidrIp of cidrs) {
    for (const [ipProtocol, port, what] of ports)
      rules.push({ ipProtocol, fromPort: port, toPort: port, cidrIp, description: `${what} ${cidrIp}` });
    rules.push({ ipProtocol: 'icmp', fromPort: -1, toPort: -1, cidrIp, description: `ICMP (MTU) ${cidrIp}` });
  }
  return rules;
}
