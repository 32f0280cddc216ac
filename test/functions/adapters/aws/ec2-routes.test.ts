/** Ec2Routes against a mocked EC2 client: read/point/verify/remove and their error mappings. */
import {
  CreateRouteCommand,
  DeleteRouteCommand,
  DescribeRouteTablesCommand,
  EC2Client,
  ReplaceRouteCommand,
} from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { RouteSwapError } from '../../../../core/errors.js';
import { Ec2Routes, parseRouteTarget } from '../../../../functions/adapters/aws/ec2-routes.js';
import { ec2Err } from '../../../helpers/aws.js';

const ec2 = mockClient(EC2Client);
const regions: string[] = [];
const routes = new Ec2Routes((region) => {
  regions.push(region);
  return new EC2Client({ region });
});
const key = { region: 'ap-northeast-3', routeTableId: 'rtb-1', destination: '10.1.0.0/16' };

function table(...r: Record<string, unknown>[]) {
  return { RouteTables: [{ RouteTableId: 'rtb-1', Routes: r }] } as never;
}

beforeEach(() => {
  ec2.reset();
  regions.length = 0;
});

describe('Ec2Routes', () => {
  it('reads the current target as kind:id, or none', async () => {
    ec2
      .on(DescribeRouteTablesCommand)
      .resolvesOnce(table({ DestinationCidrBlock: '10.1.0.0/16', VpcPeeringConnectionId: 'pcx-1', State: 'active' }))
      .resolvesOnce(table({ DestinationCidrBlock: '10.1.0.0/16', TransitGatewayId: 'tgw-9', State: 'active' }))
      .resolvesOnce(table({ DestinationCidrBlock: '10.2.0.0/16', TransitGatewayId: 'tgw-9', State: 'active' }));
    expect(await routes.read(key)).toBe('vpcPeeringConnectionId:pcx-1');
    expect(await routes.read(key)).toBe('transitGatewayId:tgw-9');
    expect(await routes.read(key)).toBe('none');
    expect(ec2.commandCalls(DescribeRouteTablesCommand)[0].args[0].input).toEqual({ RouteTableIds: ['rtb-1'] });
    expect(new Set(regions)).toEqual(new Set(['ap-northeast-3']));
  });

  it('replaces the route, and creates it when it does not exist', async () => {
    ec2
      .on(DescribeRouteTablesCommand)
      .resolves(table({ DestinationCidrBlock: '10.1.0.0/16', VpcPeeringConnectionId: 'pcx-1', State: 'active' }));
    ec2.on(ReplaceRouteCommand).rejectsOnce(ec2Err('InvalidRoute.NotFound')).resolves({});
    ec2.on(CreateRouteCommand).resolves({ Return: true });
    await routes.point(key, 'transitGatewayId:tgw-9');
    const expected = { RouteTableId: 'rtb-1', DestinationCidrBlock: '10.1.0.0/16', TransitGatewayId: 'tgw-9' };
    expect(ec2.commandCalls(ReplaceRouteCommand)[0].args[0].input).toEqual(expected);
    expect(ec2.commandCalls(CreateRouteCommand)[0].args[0].input).toEqual(expected);
    await routes.point(key, 'vpcPeeringConnectionId:pcx-1');
    expect(ec2.commandCalls(ReplaceRouteCommand)[1].args[0].input).toEqual({
      RouteTableId: 'rtb-1',
      DestinationCidrBlock: '10.1.0.0/16',
      VpcPeeringConnectionId: 'pcx-1',
    });
    expect(ec2.commandCalls(CreateRouteCommand)).toHaveLength(1);
  });

  // What EC2 answers today for ReplaceRoute on a destination with no route (checked against AWS
  // by moto's maintainers, getmoto/moto#6425): InvalidParameterValue, not InvalidRoute.NotFound.
  const noRoute = (cidr: string) =>
    ec2Err(
      'InvalidParameterValue',
      `There is no route defined for '${cidr}' in the route table. Use CreateRoute instead.`,
    );

  it('creates the route when ReplaceRoute answers InvalidParameterValue naming the missing route', async () => {
    ec2.on(DescribeRouteTablesCommand).resolves(table({ DestinationCidrBlock: '10.0.0.0/16', GatewayId: 'local' }));
    ec2.on(ReplaceRouteCommand).rejects(noRoute('10.1.0.0/16'));
    ec2.on(CreateRouteCommand).resolves({ Return: true });
    await routes.point(key, 'transitGatewayId:tgw-9');
    expect(ec2.commandCalls(CreateRouteCommand)[0].args[0].input).toEqual({
      RouteTableId: 'rtb-1',
      DestinationCidrBlock: '10.1.0.0/16',
      TransitGatewayId: 'tgw-9',
    });
  });

  it('does not create a route for any other InvalidParameterValue (another destination, another reason)', async () => {
    ec2.on(DescribeRouteTablesCommand).resolves(table({ DestinationCidrBlock: '10.0.0.0/16', GatewayId: 'local' }));
    ec2.on(CreateRouteCommand).resolves({ Return: true });
    ec2.on(ReplaceRouteCommand).rejects(noRoute('10.9.0.0/16'));
    await expect(routes.point(key, 'transitGatewayId:tgw-9')).rejects.toMatchObject({ name: 'InvalidParameterValue' });
    ec2
      .on(ReplaceRouteCommand)
      .rejects(
        ec2Err(
          'InvalidParameterValue',
          'Route target is not supported. This route only supports interface and instance targets.',
        ),
      );
    await expect(routes.point(key, 'transitGatewayId:tgw-9')).rejects.toMatchObject({ name: 'InvalidParameterValue' });
    expect(ec2.commandCalls(CreateRouteCommand)).toHaveLength(0);
  });

  it('propagates other ReplaceRoute errors', async () => {
    ec2
      .on(DescribeRouteTablesCommand)
      .resolves(table({ DestinationCidrBlock: '10.1.0.0/16', VpcPeeringConnectionId: 'pcx-1', State: 'active' }));
    ec2.on(ReplaceRouteCommand).rejects(ec2Err('UnauthorizedOperation'));
    await expect(routes.point(key, 'transitGatewayId:tgw-9')).rejects.toMatchObject({ name: 'UnauthorizedOperation' });
    expect(ec2.commandCalls(CreateRouteCommand)).toHaveLength(0);
  });

  it('rejects lab next hops and malformed targets with a clear error', async () => {
    await expect(routes.point(key, 'labNextHop:peering')).rejects.toThrow(/local-lab next hop/);
    expect(() => parseRouteTarget('vpcPeeringConnectionId:pcx-1; rm -rf /')).toThrow(RouteSwapError);
    expect(() => parseRouteTarget('futureGatewayId:fgw-1')).toThrow(RouteSwapError);
    expect(() => parseRouteTarget('coreNetworkArn:arn:aws:networkmanager::1:core-network/x; rm')).toThrow(
      RouteSwapError,
    );
    expect(ec2.commandCalls(ReplaceRouteCommand)).toHaveLength(0);
  });

  it('verifies target AND active state (blackhole is not usable)', async () => {
    ec2
      .on(DescribeRouteTablesCommand)
      .resolvesOnce(table({ DestinationCidrBlock: '10.1.0.0/16', TransitGatewayId: 'tgw-9', State: 'active' }))
      .resolvesOnce(table({ DestinationCidrBlock: '10.1.0.0/16', TransitGatewayId: 'tgw-9', State: 'blackhole' }))
      .resolvesOnce(table({ DestinationCidrBlock: '10.1.0.0/16', VpcPeeringConnectionId: 'pcx-1', State: 'active' }));
    expect(await routes.verify(key, 'transitGatewayId:tgw-9')).toBe(true);
    expect(await routes.verify(key, 'transitGatewayId:tgw-9')).toBe(false);
    expect(await routes.verify(key, 'transitGatewayId:tgw-9')).toBe(false);
  });

  it('removes routes idempotently, and point(none) removes', async () => {
    ec2.on(DeleteRouteCommand).resolvesOnce({}).rejectsOnce(ec2Err('InvalidRoute.NotFound'));
    await routes.remove(key);
    await routes.point(key, 'none');
    expect(ec2.commandCalls(DeleteRouteCommand).map((c) => c.args[0].input)).toEqual([
      { RouteTableId: 'rtb-1', DestinationCidrBlock: '10.1.0.0/16' },
      { RouteTableId: 'rtb-1', DestinationCidrBlock: '10.1.0.0/16' },
    ]);
  });

  it('fails clearly when the route table does not exist', async () => {
    ec2.on(DescribeRouteTablesCommand).resolves({ RouteTables: [] });
    await expect(routes.read(key)).rejects.toThrow(/route table rtb-1 not found in ap-northeast-3/);
  });
});

// Every target kind of DescribeRouteTables' Route shape is read and put back as it was.
describe('Ec2Routes: every original target kind', () => {
  const coreArn = 'arn:aws:networkmanager::123456789012:core-network/core-network-0123456789abcdef0';
  // [Route fields as DescribeRouteTables returns them, recorded target, ReplaceRoute input field]
  const kinds: [Record<string, string>, string, Record<string, string>][] = [
    [{ GatewayId: 'igw-0c0a1e2f' }, 'gatewayId:igw-0c0a1e2f', { GatewayId: 'igw-0c0a1e2f' }],
    [{ GatewayId: 'vgw-9a4cacf3' }, 'gatewayId:vgw-9a4cacf3', { GatewayId: 'vgw-9a4cacf3' }],
    [{ GatewayId: 'vpce-0abc1234' }, 'vpcEndpointId:vpce-0abc1234', { VpcEndpointId: 'vpce-0abc1234' }],
    [
      { NatGatewayId: 'nat-0a34a8efd5e420945' },
      'natGatewayId:nat-0a34a8efd5e420945',
      { NatGatewayId: 'nat-0a34a8efd5e420945' },
    ],
    [
      { TransitGatewayId: 'tgw-0262a0e521EXAMPLE' },
      'transitGatewayId:tgw-0262a0e521EXAMPLE',
      { TransitGatewayId: 'tgw-0262a0e521EXAMPLE' },
    ],
    [
      { VpcPeeringConnectionId: 'pcx-1a2b3c4d' },
      'vpcPeeringConnectionId:pcx-1a2b3c4d',
      { VpcPeeringConnectionId: 'pcx-1a2b3c4d' },
    ],
    [{ NetworkInterfaceId: 'eni-0123abcd' }, 'networkInterfaceId:eni-0123abcd', { NetworkInterfaceId: 'eni-0123abcd' }],
    // A NAT-instance route lists the instance, its owner and its interface: the interface is put back.
    [
      { InstanceId: 'i-1234567890abcdef0', InstanceOwnerId: '123456789012', NetworkInterfaceId: 'eni-0fedcba9' },
      'networkInterfaceId:eni-0fedcba9',
      { NetworkInterfaceId: 'eni-0fedcba9' },
    ],
    [{ InstanceId: 'i-1234567890abcdef0' }, 'instanceId:i-1234567890abcdef0', { InstanceId: 'i-1234567890abcdef0' }],
    [
      { LocalGatewayId: 'lgw-09b493aa7cEXAMPLE' },
      'localGatewayId:lgw-09b493aa7cEXAMPLE',
      { LocalGatewayId: 'lgw-09b493aa7cEXAMPLE' },
    ],
    [
      { CarrierGatewayId: 'cagw-0465EXAMPLE' },
      'carrierGatewayId:cagw-0465EXAMPLE',
      { CarrierGatewayId: 'cagw-0465EXAMPLE' },
    ],
    [{ CoreNetworkArn: coreArn }, `coreNetworkArn:${coreArn}`, { CoreNetworkArn: coreArn }],
    [
      { EgressOnlyInternetGatewayId: 'eigw-015e0e244e24dfe8a' },
      'egressOnlyInternetGatewayId:eigw-015e0e244e24dfe8a',
      { EgressOnlyInternetGatewayId: 'eigw-015e0e244e24dfe8a' },
    ],
  ];

  for (const [fields, target, input] of kinds) {
    it(`records ${Object.keys(fields).join('+')} as ${target.split(':')[0]} and puts it back with ReplaceRoute`, async () => {
      ec2
        .on(DescribeRouteTablesCommand)
        .resolves(table({ DestinationCidrBlock: '10.1.0.0/16', ...fields, Origin: 'CreateRoute', State: 'active' }));
      ec2.on(ReplaceRouteCommand).resolves({});
      expect(await routes.read(key)).toBe(target);
      await routes.point(key, target);
      expect(ec2.commandCalls(ReplaceRouteCommand)[0].args[0].input).toEqual({
        RouteTableId: 'rtb-1',
        DestinationCidrBlock: '10.1.0.0/16',
        ...input,
      });
      expect(ec2.commandCalls(DeleteRouteCommand)).toHaveLength(0);
      expect(await routes.verify(key, target)).toBe(true);
    });
  }

  it('reads a route with a target kind it does not know as unknown, never as none, and refuses to point at it', async () => {
    ec2
      .on(DescribeRouteTablesCommand)
      .resolves(table({ DestinationCidrBlock: '10.1.0.0/16', SomeFutureGatewayId: 'fgw-1', State: 'active' }));
    const t = await routes.read(key);
    expect(t).not.toBe('none');
    expect(t.startsWith('unknown')).toBe(true);
    await expect(routes.point(key, t)).rejects.toThrow(RouteSwapError);
    expect(ec2.commandCalls(DeleteRouteCommand)).toHaveLength(0);
  });

  it('reads the VPC local route as local and refuses to change it, naming the route', async () => {
    ec2
      .on(DescribeRouteTablesCommand)
      .resolves(
        table({ DestinationCidrBlock: '10.1.0.0/16', GatewayId: 'local', Origin: 'CreateRouteTable', State: 'active' }),
      );
    expect(await routes.read(key)).toBe('local');
    await expect(routes.point(key, 'transitGatewayId:tgw-9')).rejects.toThrow(/10\.1\.0\.0\/16.*local route/);
    expect(ec2.commandCalls(ReplaceRouteCommand)).toHaveLength(0);
  });
});
