import { describe, expect, it } from 'vitest';
import { parseIpRoute, sameDestination } from '../../lab/ip-route.js';

describe('parseIpRoute', () => {
  it('reads the gateway and device of a unicast route', () => {
    const [r] = parseIpRoute('10.1.0.0/16 via 10.255.1.2 dev p0 \n');
    expect(r).toEqual({ type: 'unicast', destination: '10.1.0.0/16', via: '10.255.1.2', dev: 'p0', flags: [] });
  });

  it('handles default routes, proto/scope/src/metric values and flags', () => {
    const out = parseIpRoute(
      [
        'default via 10.0.1.1 dev eth0 proto static metric 100 onlink',
        '10.0.1.0/24 dev eth0 proto kernel scope link src 10.0.1.10 linkdown',
        '',
      ].join('\n'),
    );
    expect(out).toHaveLength(2);
    expect(out[0]).toMatchObject({ destination: '0.0.0.0/0', via: '10.0.1.1', dev: 'eth0', flags: ['onlink'] });
    expect(out[1]).toMatchObject({ destination: '10.0.1.0/24', dev: 'eth0', flags: ['linkdown'] });
    expect(out[1].via).toBeUndefined();
  });

  it('recognizes non-unicast route types', () => {
    expect(parseIpRoute('blackhole 10.1.0.0/16 proto static')[0]).toMatchObject({
      type: 'blackhole',
      destination: '10.1.0.0/16',
    });
    expect(parseIpRoute('unreachable 10.9.0.0/16')[0].type).toBe('unreachable');
  });

  it('returns nothing for empty output (no route)', () => {
    expect(parseIpRoute('')).toEqual([]);
    expect(parseIpRoute('\n  \n')).toEqual([]);
  });

  it('skips multipath nexthop continuation lines', () => {
    const out = parseIpRoute(
      '10.1.0.0/16 proto static\n\tnexthop via 10.255.1.2 dev p0 weight 1\n\tnexthop via 10.255.2.2 dev t0 weight 1\n',
    );
    expect(out).toHaveLength(1);
    expect(out[0].destination).toBe('10.1.0.0/16');
  });

  it('compares destinations with implicit /32 and "default"', () => {
    expect(sameDestination('10.1.1.10', '10.1.1.10/32')).toBe(true);
    expect(sameDestination('default', '0.0.0.0/0')).toBe(true);
    expect(sameDestination('10.1.0.0/16', '10.0.0.0/16')).toBe(false);
  });
});
