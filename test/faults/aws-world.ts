/**
 * EC2 route tables, one client instance and its SSM agent, in memory, behind the real SDK
 * clients with aws-sdk-client-mock: the AWS Routes adapter (functions/adapters/aws/ec2-routes.ts)
 * and the AWS Fleet adapter (fleet.ts) run unchanged against it. Responses follow EC2's
 * documented shapes: DescribeRouteTables routes carry exactly one target field, `Origin` and
 * `State` ('active' | 'blackhole'); ReplaceRoute on a missing destination answers
 * InvalidParameterValue (what EC2 returns, not InvalidRoute.NotFound), DeleteRoute on a missing
 * one InvalidRoute.NotFound, CreateRoute on an existing one RouteAlreadyExists, and the `local`
 * route can be neither deleted nor created (InvalidParameterValue).
 */
import {
  CreateRouteCommand,
  DeleteRouteCommand,
  DescribeInstancesCommand,
  DescribeInstanceTypesCommand,
  DescribeRouteTablesCommand,
  EC2Client,
  ReplaceRouteCommand,
  type Route,
  StartInstancesCommand,
  StopInstancesCommand,
} from '@aws-sdk/client-ec2';
import { DescribeInstanceInformationCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { Ec2SsmFleet } from '../../functions/adapters/aws/ec2-fleet.js';
import { Ec2Routes } from '../../functions/adapters/aws/ec2-routes.js';
import { awsError } from './inject.js';

/** Every target field a DescribeRouteTables route can carry. */
export const EC2_TARGET_FIELDS = [
  'GatewayId',
  'NatGatewayId',
  'TransitGatewayId',
  'VpcPeeringConnectionId',
  'NetworkInterfaceId',
  'InstanceId',
  'EgressOnlyInternetGatewayId',
  'LocalGatewayId',
  'CarrierGatewayId',
  'CoreNetworkArn',
] as const;
type TargetField = (typeof EC2_TARGET_FIELDS)[number];

export type WorldRoute = Pick<Route, 'DestinationCidrBlock' | TargetField | 'State' | 'Origin'>;

/** What a test can break about the instance and its agent. */
export interface InstanceFaults {
  /** StartInstances answers InsufficientInstanceCapacity (the instance stays stopped). */
  noCapacity?: boolean;
  /** The SSM agent never comes back online (PingStatus ConnectionLost). */
  agentOffline?: boolean;
}

export class AwsWorld {
  readonly tables = new Map<string, WorldRoute[]>();
  instance: { id: string; state: 'running' | 'stopped' | 'pending' | 'stopping'; pingAt: Date } = {
    id: 'i-0fa017000000000001',
    state: 'running',
    pingAt: new Date(),
  };
  faults: InstanceFaults = {};
  /** StartInstances calls still to answer InsufficientInstanceCapacity (capacity comes back after). */
  capacityFailures = 0;
  // The world's own client instances, mocked one by one: cases can run side by side.
  private readonly ec2Client = new EC2Client({ region: 'ap-northeast-1' });
  private readonly ssmClient = new SSMClient({ region: 'ap-northeast-1' });
  readonly ec2 = mockClient(this.ec2Client);
  readonly ssm = mockClient(this.ssmClient);
  readonly ec2Calls: string[] = [];
  /** Targets that exist but cannot forward (a detached ENI, a failed NAT gateway): routes to them are blackholes. */
  readonly deadTargets = new Set<string>();

  constructor() {
    this.reset();
  }

  private reset(): void {
    this.ec2.on(DescribeRouteTablesCommand).callsFake((i) => {
      const id = i.RouteTableIds?.[0] as string;
      const routes = this.tables.get(id);
      if (!routes) throw awsError('InvalidRouteTableID.NotFound', `The routeTable ID '${id}' does not exist`, 400);
      return { RouteTables: [{ RouteTableId: id, VpcId: 'vpc-0fa017', Routes: structuredClone(routes) }] };
    });
    this.ec2.on(ReplaceRouteCommand).callsFake((i) => this.replace(i));
    this.ec2.on(CreateRouteCommand).callsFake((i) => this.create(i));
    this.ec2.on(DeleteRouteCommand).callsFake((i) => this.delete(i));
    this.ec2.on(DescribeInstancesCommand).callsFake(() => ({
      Reservations: [
        {
          Instances: [
            {
              InstanceId: this.instance.id,
              InstanceType: 'c6in.large',
              State: { Name: this.settle() },
              Placement: { AvailabilityZone: 'ap-northeast-1a', AvailabilityZoneId: 'apne1-az4' },
            },
          ],
        },
      ],
    }));
    this.ec2.on(DescribeInstanceTypesCommand).resolves({
      InstanceTypes: [
        {
          InstanceType: 'c6in.large',
          NetworkInfo: {
            DefaultNetworkCardIndex: 0,
            NetworkCards: [{ NetworkCardIndex: 0, BaselineBandwidthInGbps: 3.125, PeakBandwidthInGbps: 25 }],
          },
        },
      ],
    });
    this.ec2.on(StopInstancesCommand).callsFake(() => {
      const prev = this.instance.state;
      this.instance.state = 'stopping';
      return {
        StoppingInstances: [
          { InstanceId: this.instance.id, CurrentState: { Name: 'stopping' }, PreviousState: { Name: prev } },
        ],
      };
    });
    this.ec2.on(StartInstancesCommand).callsFake(() => {
      if (this.faults.noCapacity || this.capacityFailures > 0) {
        this.capacityFailures--;
        throw awsError(
          'InsufficientInstanceCapacity',
          'We currently do not have sufficient c6in.large capacity in the Availability Zone you requested (ap-northeast-1a).',
          500,
        );
      }
      const prev = this.instance.state;
      this.instance.state = 'pending';
      return {
        StartingInstances: [
          { InstanceId: this.instance.id, CurrentState: { Name: 'pending' }, PreviousState: { Name: prev } },
        ],
      };
    });
    this.ssm.on(DescribeInstanceInformationCommand).callsFake(() => ({
      InstanceInformationList:
        this.instance.state === 'running'
          ? [
              {
                InstanceId: this.instance.id,
                PingStatus: this.faults.agentOffline ? 'ConnectionLost' : 'Online',
                LastPingDateTime: this.instance.pingAt,
              },
            ]
          : [],
    }));
  }

  /** One describe moves a transition along (stopping → stopped, pending → running). */
  private settle(): string {
    const s = this.instance.state;
    if (s === 'stopping') this.instance.state = 'stopped';
    if (s === 'pending') {
      this.instance.state = 'running';
      this.instance.pingAt = new Date(Date.now() + 1);
    }
    return s;
  }

  /** Whether SSM would deliver a command to the client now. */
  commandReady(): boolean {
    return this.instance.state === 'running' && !this.faults.agentOffline;
  }

  routes(): Ec2Routes {
    return new Ec2Routes(() => this.ec2Client);
  }

  fleet(): Ec2SsmFleet {
    return new Ec2SsmFleet(() => ({ ec2: this.ec2Client, ssm: this.ssmClient }), { pollSeconds: 1 });
  }

  /** A deep copy of every table, to compare before and after. */
  snapshot(): Record<string, WorldRoute[]> {
    return Object.fromEntries([...this.tables].map(([k, v]) => [k, structuredClone(v)]));
  }

  private table(id: string): WorldRoute[] {
    const t = this.tables.get(id);
    if (!t) throw awsError('InvalidRouteTableID.NotFound', `The routeTable ID '${id}' does not exist`, 400);
    return t;
  }

  private targetOf(i: Record<string, unknown>): Partial<Record<TargetField, string>> {
    const fields = [...EC2_TARGET_FIELDS, 'VpcEndpointId'].filter((f) => typeof i[f] === 'string');
    if (fields.length !== 1) {
      throw awsError(
        'InvalidParameterCombination',
        'The request must contain exactly one of gatewayId, natGatewayId, networkInterfaceId, vpcPeeringConnectionId, egressOnlyInternetGatewayId, transitGatewayId, localGatewayId, carrierGatewayId, coreNetworkArn or vpcEndpointId',
        400,
      );
    }
    const f = fields[0];
    // A gateway endpoint route is reported in GatewayId (vpce-…).
    return f === 'VpcEndpointId' ? { GatewayId: i[f] as string } : { [f]: i[f] as string };
  }

  private stateFor(t: Partial<Record<TargetField, string>>): 'active' | 'blackhole' {
    return Object.values(t).some((id) => id && this.deadTargets.has(id)) ? 'blackhole' : 'active';
  }

  private find(i: { RouteTableId?: string; DestinationCidrBlock?: string }): WorldRoute | undefined {
    return this.table(i.RouteTableId as string).find((r) => r.DestinationCidrBlock === i.DestinationCidrBlock);
  }

  private replace(i: Record<string, unknown> & { RouteTableId?: string; DestinationCidrBlock?: string }) {
    this.ec2Calls.push(`replace ${i.RouteTableId} ${i.DestinationCidrBlock}`);
    const r = this.find(i);
    if (!r) {
      throw awsError(
        'InvalidParameterValue',
        `There is no route defined for '${i.DestinationCidrBlock}' in the route table. Use CreateRoute instead.`,
        400,
      );
    }
    if (r.Origin === 'CreateRouteTable' && !('NetworkInterfaceId' in i || i.LocalTarget === true)) {
      throw awsError(
        'InvalidParameterValue',
        'The local route can only be pointed at a network interface or back at local',
        400,
      );
    }
    for (const f of EC2_TARGET_FIELDS) delete r[f];
    // LocalTarget: true resets a local route to its default target (ReplaceRoute's own parameter).
    const t = i.LocalTarget === true && r.Origin === 'CreateRouteTable' ? { GatewayId: 'local' } : this.targetOf(i);
    Object.assign(r, t, {
      State: this.stateFor(t),
      Origin: r.Origin === 'CreateRouteTable' ? r.Origin : 'CreateRoute',
    });
    return {};
  }

  private create(i: Record<string, unknown> & { RouteTableId?: string; DestinationCidrBlock?: string }) {
    this.ec2Calls.push(`create ${i.RouteTableId} ${i.DestinationCidrBlock}`);
    if (this.find(i)) {
      throw awsError('RouteAlreadyExists', `The route identified by ${i.DestinationCidrBlock} already exists.`, 400);
    }
    const t = this.targetOf(i);
    this.table(i.RouteTableId as string).push({
      DestinationCidrBlock: i.DestinationCidrBlock,
      ...t,
      State: this.stateFor(t),
      Origin: 'CreateRoute',
    });
    return { Return: true };
  }

  private delete(i: { RouteTableId?: string; DestinationCidrBlock?: string }) {
    this.ec2Calls.push(`delete ${i.RouteTableId} ${i.DestinationCidrBlock}`);
    const t = this.table(i.RouteTableId as string);
    const at = t.findIndex((r) => r.DestinationCidrBlock === i.DestinationCidrBlock);
    if (at < 0) {
      throw awsError('InvalidRoute.NotFound', `The route identified by ${i.DestinationCidrBlock} was not found`, 400);
    }
    if (t[at].Origin === 'CreateRouteTable') {
      throw awsError('InvalidParameterValue', `cannot remove local route ${i.DestinationCidrBlock}`, 400);
    }
    t.splice(at, 1);
    return {};
  }
}
