/** The operator's route allow-list: parsing (errors name the entry and field) and the check. */
import { describe, expect, it } from 'vitest';
import { parseAllowedRoutes, routeRefusal } from '../../core/route-policy.js';

const entry = {
  region: 'ap-northeast-1',
  routeTableId: 'rtb-0abc',
  destination: '10.1.0.0/16',
  targets: ['transitGatewayId:tgw-1'],
};

describe('parseAllowedRoutes', () => {
  it('reads a list; absent or empty allows nothing', () => {
    expect(parseAllowedRoutes(JSON.stringify([entry]), 'allowedRoutes')).toEqual([entry]);
    expect(parseAllowedRoutes(undefined, 'allowedRoutes')).toEqual([]);
    expect(parseAllowedRoutes('  ', 'allowedRoutes')).toEqual([]);
  });

  it('names the entry and field of a bad value', () => {
    expect(() => parseAllowedRoutes('{', 'PATHBENCH_ALLOWED_ROUTES')).toThrow(/PATHBENCH_ALLOWED_ROUTES: not JSON/);
    expect(() =>
      parseAllowedRoutes(JSON.stringify([{ ...entry, destination: '10.1.0.0/33' }]), 'allowedRoutes'),
    ).toThrow(/allowedRoutes\[0\]\.destination/);
    expect(() => parseAllowedRoutes(JSON.stringify([entry, { ...entry, targets: [] }]), 'allowedRoutes')).toThrow(
      /allowedRoutes\[1\]\.targets: expected at least one target/,
    );
    expect(() => parseAllowedRoutes(JSON.stringify([{ ...entry, extra: 1 }]), 'allowedRoutes')).toThrow(
      /allowedRoutes\[0\]/,
    );
  });
});

describe('routeRefusal', () => {
  const r = { region: 'ap-northeast-1', routeTableId: 'rtb-0abc', destination: '10.1.0.0/16' };
  it('allows listed route and target; refuses others with the reason', () => {
    expect(routeRefusal([entry], r, 'transitGatewayId:tgw-1')).toBeUndefined();
    expect(routeRefusal([entry], r, 'gatewayId:igw-1')).toMatch(
      /may not point at gatewayId:igw-1 \(allowed targets: transitGatewayId:tgw-1\)/,
    );
    expect(routeRefusal([entry], { ...r, destination: '0.0.0.0/0' }, 'transitGatewayId:tgw-1')).toMatch(
      /not in the stack's allowedRoutes/,
    );
    expect(routeRefusal([entry], { ...r, region: 'us-east-1' }, 'transitGatewayId:tgw-1')).toMatch(/not in/);
  });
  it('undefined list: no restriction (local runs)', () => {
    expect(routeRefusal(undefined, r, 'anything:x')).toBeUndefined();
  });
});
