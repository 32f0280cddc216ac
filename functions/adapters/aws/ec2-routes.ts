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
  EC2Client,
  ReplaceRouteCommand,
  type Route,
} from '@aws-sdk/client-ec2';
import { RouteSwapError } from '../../../core/errors.js';
import type { RouteEntry, RouteTarget } from '../../../core/resolved-plan.js';
import { VIA_KEYS, type ViaKey } from '../../../core/resolved-plan.js';
import type { Routes } from '../../ports.js';
import type { AwsPort } from './aws-deps.js';
import { isAwsError } from './sdk-errors.js';

type RouteKey = Omit<RouteEntry, 'via'>;

/**
 * Every target kind of EC2's Route shape (DescribeRouteTables), in the order a route's fields
 * are checked, with the ReplaceRoute/CreateRoute input field that puts it back. A plan may swap
 * a route only to the kinds of core/plan.ts VIA_KEYS; an original of any kind here is recorded
 * and restored as it was (a kind read as "none" would be deleted on restore).
 */
const KINDS = {
  vpcPeeringConnectionId: { input: 'VpcPeeringConnectionId', id: /^pcx-[0-9a-f]+$/i },
  transitGatewayId: { input: 'TransitGatewayId', id: /^tgw-[0-9a-zA-Z]+$/ },
  natGatewayId: { input: 'NatGatewayId', id: /^nat-[0-9a-f]+$/i },
  vpcEndpointId: { input: 'VpcEndpointId', id: /^vpce-[0-9a-f]+$/i },
  gatewayId: { input: 'GatewayId', id: /^(igw|vgw)-[0-9a-zA-Z]+$/ },
  localGatewayId: { input: 'LocalGatewayId', id: /^lgw-[0-9a-zA-Z]+$/ },
  carrierGatewayId: { input: 'CarrierGatewayId', id: /^cagw-[0-9a-zA-Z]+$/ },
  egressOnlyInternetGatewayId: { input: 'EgressOnlyInternetGatewayId', id: /^eigw-[0-9a-f]+$/i },
  coreNetworkArn: {
    input: 'CoreNetworkArn',
    id: /^arn:aws[a-z-]*:networkmanager::\d{12}:core-network\/[A-Za-z0-9-]+$/,
  },
  // A NAT instance's route also names its interface; the interface is the precise target.
  networkInterfaceId: { input: 'NetworkInterfaceId', id: /^eni-[0-9a-f]+$/i },
  instanceId: { input: 'InstanceId', id: /^i-[0-9a-f]+$/i },
} as const;
type TargetKind = keyof typeof KINDS;

/** Every kind a route's original may be recorded as (a superset of what a plan may swap to). */
export const ROUTE_TARGET_KINDS = Object.keys(KINDS) as TargetKind[];
/** The plan's route target keys minus the lab's own (core/plan.ts VIA_KEYS). */
export const PLAN_TARGET_KINDS: readonly ViaKey[] = VIA_KEYS.filter((k) => k !== 'labNextHop');

/** The VPC's own route ("local"): it can be neither replaced by a plan nor restored by one. */
export const LOCAL_TARGET = 'local';

/** Split "kind:id"; rejects the lab-only kind, unknown kinds and malformed ids with a one-line reason. */
export function parseRouteTarget(target: RouteTarget): { kind: TargetKind; id: string } {
  const i = target.indexOf(':');
  const kind = i > 0 ? target.slice(0, i) : target;
  const id = i > 0 ? target.slice(i + 1) : '';
  if (kind === 'labNextHop') {
    throw new RouteSwapError(`route target ${target} is a local-lab next hop; it cannot be used on AWS`);
  }
  const spec = (KINDS as Record<string, { id: RegExp }>)[kind];
  if (!spec?.id.test(id)) {
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

/** Route fields that are not a target (DescribeRouteTables' Route shape). */
const NOT_TARGET = new Set([
  'DestinationCidrBlock',
  'DestinationIpv6CidrBlock',
  'DestinationPrefixListId',
  'InstanceOwnerId',
  'Origin',
  'State',
]);

/**
 * The route's target as "kind:id"; "local" for the VPC's own route; "unknown:<fields>" for a
 * target field this code does not know (never "none": that would delete the route on restore).
 */
export function targetOf(route: Route): RouteTarget {
  const fields = route as Record<string, unknown>;
  if (route.GatewayId === LOCAL_TARGET) return LOCAL_TARGET;
  if (route.GatewayId?.startsWith('vpce-')) return `vpcEndpointId:${route.GatewayId}`;
  for (const kind of ROUTE_TARGET_KINDS) {
    if (kind === 'vpcEndpointId') continue;
    const v = fields[KINDS[kind].input];
    if (typeof v === 'string' && v) return `${kind}:${v}`;
  }
  const other = Object.keys(fields).filter((k) => !NOT_TARGET.has(k) && fields[k] !== undefined);
  return `unknown:${other.sort().join('+') || 'no target field'}`;
}

/**
 * EC2 answers ReplaceRoute on a destination with no route with InvalidParameterValue
 * ("There is no route defined for '<cidr>' in the route table. Use CreateRoute instead.", as
 * checked against AWS for moto, getmoto/moto#6425), not InvalidRoute.NotFound. Only that
 * message, naming this destination, means "create it"; any other InvalidParameterValue is a refusal.
 */
function namesMissingRoute(e: unknown, destination: string): boolean {
  if (!isAwsError(e, 'InvalidParameterValue')) return false;
  const message = (e as { message?: unknown }).message;
  return typeof message === 'string' && message.includes(`There is no route defined for '${destination}'`);
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
    const current = await this.find(route);
    if (current && targetOf(current) === LOCAL_TARGET) {
      throw new RouteSwapError(
        `${route.region} ${route.routeTableId} ${route.destination} is the VPC's local route: it cannot be replaced`,
      );
    }
    const input = { RouteTableId: route.routeTableId, ...destinationField(route.destination), [KINDS[kind].input]: id };
    const ec2 = this.ec2For(route.region);
    try {
      await ec2.send(new ReplaceRouteCommand(input));
    } catch (e) {
      if (!isAwsError(e, 'InvalidRoute.NotFound') && !namesMissingRoute(e, route.destination)) throw e;
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

/** The routes port of a Lambda: an EC2 client per route table's region, made on first use. */
export const ec2Routes: AwsPort<'routes'> = () => {
  const clients = new Map<string, EC2Client>();
  return new Ec2Routes((region) => {
    let c = clients.get(region);
    if (!c) {
      c = new EC2Client({ region });
      clients.set(region, c);
    }
    return c;
  });
};
