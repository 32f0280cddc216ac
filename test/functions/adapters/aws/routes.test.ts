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
import { Ec2Routes, parseRouteTarget } from '../../../../functions/adapters/aws/routes.js';
import { RouteSwapError } from '../../../../functions/core/errors.js';
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

  it('propagates other ReplaceRoute errors', async () => {
    ec2.on(ReplaceRouteCommand).rejects(ec2Err('UnauthorizedOperation'));
    await expect(routes.point(key, 'transitGatewayId:tgw-9')).rejects.toMatchObject({ name: 'UnauthorizedOperation' });
    expect(ec2.commandCalls(CreateRouteCommand)).toHaveLength(0);
  });

  it('rejects lab next hops and malformed targets with a clear error', async () => {
    await expect(routes.point(key, 'labNextHop:peering')).rejects.toThrow(/local-lab next hop/);
    expect(() => parseRouteTarget('vpcPeeringConnectionId:pcx-1; rm -rf /')).toThrow(RouteSwapError);
    expect(() => parseRouteTarget('carrierGatewayId:cagw-1')).toThrow(RouteSwapError);
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
