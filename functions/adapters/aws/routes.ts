/**
 * Routes adapter on EC2 route tables: read the current target of a destination, point it at
 * another target (ReplaceRoute, or CreateRoute when the route does not exist), verify that it is
 * active, and remove routes a run created. Peering and TGW cannot both hold the same CIDR
 * (seed 000), so a swap is always a replace of the one entry.
 */
import {
  CreateRouteCommand,
  DeleteRouteCommand,
  DescribeRouteTablesCommand,
  type EC2Client,
  ReplaceRouteCommand,
  type Route,
} from '@aws-sdk/client-ec2';
import { RouteSwapError } from '../../core/errors.js';
import type { RouteEntry, RouteTarget } from '../../core/model.js';
import { VIA_KEYS, type ViaKey } from '../../core/plan.js';
import type { Routes } from '../../ports.js';
import { isAwsError } from './util.js';

type RouteKey = Omit<RouteEntry, 'via'>;

/** Target kinds EC2 understands, in the order a route's fields are checked. */
type TargetKind = Exclude<ViaKey, 'labNextHop'>;
/** The plan's route target keys minus the lab's own (core/plan.ts VIA_KEYS). */
export const ROUTE_TARGET_KINDS: readonly TargetKind[] = VIA_KEYS.filter((k): k is TargetKind => k !== 'labNextHop');

const INPUT_FIELD: Record<TargetKind, string> = {
  vpcPeeringConnectionId: 'VpcPeeringConnectionId',
  transitGatewayId: 'TransitGatewayId',
  gatewayId: 'GatewayId',
  natGatewayId: 'NatGatewayId',
  networkInterfaceId: 'NetworkInterfaceId',
  vpcEndpointId: 'VpcEndpointId',
};

/** Split "kind:id"; rejects the lab-only kind and unknown kinds with a one-line reason. */
export function parseRouteTarget(target: RouteTarget): { kind: TargetKind; id: string } {
  const i = target.indexOf(':');
  const kind = i > 0 ? target.slice(0, i) : target;
  const id = i > 0 ? target.slice(i + 1) : '';
  if (kind === 'labNextHop') {
    throw new RouteSwapError(`route target ${target} is a local-lab next hop; it cannot be used on AWS`);
  }
  if (!(ROUTE_TARGET_KINDS as readonly string[]).includes(kind) || !/^[a-z]+-[0-9a-zA-Z]+$/.test(id)) {
    throw new RouteSwapError(
      `unknown route target ${JSON.stringify(target)} (expected kind:id, kind one of ${ROUTE_TARGET_KINDS.join(', ')})`,
    );
  }
  return { kind: kind as TargetKind, id };
}

/** The destination field of a route entry: IPv4 CIDR, IPv6 CIDR or prefix list. */
function destinationField(destination: string): {
  DestinationCidrBlock?: string;
  DestinationIpv6CidrBlock?: string;
  DestinationPrefixListId?: string;
} {
  if (destination.startsWith('pl-')) return { DestinationPrefixListId: destination };
  if (destination.includes(':')) return { DestinationIpv6CidrBlock: destination };
  return { DestinationCidrBlock: destination };
}

function targetOf(route: Route): RouteTarget {
  if (route.VpcPeeringConnectionId) return `vpcPeeringConnectionId:${route.VpcPeeringConnectionId}`;
  if (route.TransitGatewayId) return `transitGatewayId:${route.TransitGatewayId}`;
  if (route.NatGatewayId) return `natGatewayId:${route.NatGatewayId}`;
  if (route.GatewayId?.startsWith('vpce-')) return `vpcEndpointId:${route.GatewayId}`;
  if (route.GatewayId) return `gatewayId:${route.GatewayId}`;
  if (route.NetworkInterfaceId) return `networkInterfaceId:${route.NetworkInterfaceId}`;
  return 'none';
}

export class Ec2Routes implements Routes {
  constructor(private readonly ec2For: (region: string) => EC2Client) {}

  async read(route: RouteKey): Promise<RouteTarget> {
    const found = await this.find(route);
    return found ? targetOf(found) : 'none';
  }

  async point(route: RouteKey, target: RouteTarget): Promise<void> {
    // Restoring a route that did not exist before the run means removing it.
    if (target === 'none') return this.remove(route);
    const { kind, id } = parseRouteTarget(target);
    const input = { RouteTableId: route.routeTableId, ...destinationField(route.destination), [INPUT_FIELD[kind]]: id };
    const ec2 = this.ec2For(route.region);
    try {
      await ec2.send(new ReplaceRouteCommand(input));
    } catch (e) {
      if (!isAwsError(e, 'InvalidRoute.NotFound')) throw e;
      await ec2.send(new CreateRouteCommand(input));
    }
  }

  async verify(route: RouteKey, target: RouteTarget): Promise<boolean> {
    const found = await this.find(route);
    if (target === 'none') return found === undefined;
    return found !== undefined && targetOf(found) === target && found.State === 'active';
  }

  async remove(route: RouteKey): Promise<void> {
    try {
      await this.ec2For(route.region).send(
        new DeleteRouteCommand({ RouteTableId: route.routeTableId, ...destinationField(route.destination) }),
      );
    } catch (e) {
      // Already gone is the state we want.
      if (!isAwsError(e, 'InvalidRoute.NotFound')) throw e;
    }
  }

  private async find(route: RouteKey): Promise<Route | undefined> {
    const out = await this.ec2For(route.region).send(
      new DescribeRouteTablesCommand({ RouteTableIds: [route.routeTableId] }),
    );
    const table = out.RouteTables?.find((t) => t.RouteTableId === route.routeTableId);
    if (!table) throw new RouteSwapError(`route table ${route.routeTableId} not found in ${route.region}`);
    const field = destinationField(route.destination);
    return table.Routes?.find(
      (r) =>
        (field.DestinationCidrBlock !== undefined && r.DestinationCidrBlock === field.DestinationCidrBlock) ||
        (field.DestinationIpv6CidrBlock !== undefined &&
          r.DestinationIpv6CidrBlock === field.DestinationIpv6CidrBlock) ||
        (field.DestinationPrefixListId !== undefined && r.DestinationPrefixListId === field.DestinationPrefixListId),
    );
  }
}
