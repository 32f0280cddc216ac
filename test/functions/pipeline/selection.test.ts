import { describe, expect, it } from 'vitest';
import { methodCost, pathMethod } from '../../../core/cost.js';
import { parsePlan } from '../../../core/plan.js';
import { shippedPrices } from '../../../core/prices.js';
import type { ResultRow, SummaryPath } from '../../../core/run-summary.js';
import { latencyResult, selectionTable } from '../../../functions/pipeline/selection.js';
import { expectOk } from '../../helpers/plans.js';

const client = { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' };
const plan = expectOk(
  parsePlan({
    name: 'selection',
    defaults: { client, probes: [{ kind: 'tcp-connect' }] },
    paths: [
      {
        id: 'C',
        target: { host: '10.1.0.10', port: 7000 },
        routes: [
          {
            region: 'ap-northeast-1',
            routeTableId: 'rtb-1',
            destination: '10.1.0.0/16',
            via: { vpcPeeringConnectionId: 'pcx-1' },
          },
          {
            region: 'ap-northeast-3',
            routeTableId: 'rtb-2',
            destination: '10.0.0.0/16',
            via: { vpcPeeringConnectionId: 'pcx-1' },
          },
        ],
      },
      {
        id: 'D',
        target: { host: '10.1.0.10', port: 7000 },
        routes: [
          {
            region: 'ap-northeast-3',
            routeTableId: 'rtb-2',
            destination: '10.0.0.0/16',
            via: { transitGatewayId: 'tgw-1' },
          },
        ],
      },
      { id: 'E', target: { host: 'vpce-0abc-1234.vpce-svc-0def.ap-northeast-3.vpce.amazonaws.com', port: 7000 } },
      { id: 'G', method: 'nlb', target: { host: '10.0.4.10', port: 7000 } },
      { id: 'X', target: { host: '10.0.0.5', port: 7000 } },
    ],
  }),
);

const row = (probe: string, metric: string, unit: string, p50: number, p99: number, n = 100): ResultRow => ({
  probe,
  metric,
  unit,
  n,
  loss: 0.01,
  p50,
  p95: p99,
  p99,
  p999: p99,
  max: p99,
  flags: [],
  ci95: { p50: [p50 * 0.9, p50 * 1.1], p95: [p99 * 0.9, p99 * 1.1], p99: [p99 * 0.9, p99 * 1.1] },
});

describe('the selection table', () => {
  it('infers each method from routes, the target name, or the plan', () => {
    expect(plan.paths.map(pathMethod)).toEqual(['vpc-peering', 'transit-gateway', 'privatelink', 'nlb', 'direct']);
  });

  it('prices a method: fixed $/month from the hourly table × 730 and $/GB as transfer plus processing', () => {
    const t = shippedPrices();
    const [c, d, e, g, x] = plan.paths.map((p) => methodCost(p, t));
    expect(c).toEqual({ method: 'vpc-peering', link: 'inter-region', fixedUsdPerMonth: 0, usdPerGb: 0.09 });
    expect(d.fixedUsdPerMonth).toBeCloseTo(0.14 * 730, 6);
    expect(d.usdPerGb).toBeCloseTo(0.09 + 0.02, 9);
    expect(e.fixedUsdPerMonth).toBeCloseTo(0.0523 * 730, 6);
    expect(e.link).toBe('inter-region');
    expect(g).toMatchObject({ method: 'nlb', link: 'cross-az' });
    expect(g.fixedUsdPerMonth).toBeCloseTo(0.0243 * 730, 6);
    expect(x).toEqual({ method: 'direct', link: 'cross-az', fixedUsdPerMonth: 0, usdPerGb: 0.02 });
    // A table without method prices: the fixed bill is unknown, not 0.
    const { methodPerHour: _h, methodPerGb: _g, ...older } = t;
    expect(methodCost(plan.paths[1], older).fixedUsdPerMonth).toBeNull();
  });

  it('takes the most direct latency probe, the best throughput and the MTU', () => {
    const results = [
      row('http', 'http_latency_ms', 'ms', 5, 9),
      row('tcp-connect', 'connect_rtt_ms', 'ms', 1, 2),
      row('iperf3', 'throughput_bps', 'bit/s', 4e9, 5e9),
      row('iperf3-4', 'throughput_bps', 'bit/s', 9e9, 9.5e9),
      row('mtu', 'mtu_bytes', 'bytes', 8973, 8973),
    ];
    expect(latencyResult(results)?.probe).toBe('tcp-connect');
    expect(latencyResult([row('tcp-connect', 'connect_rtt_ms', 'ms', 1, 2, 0)])).toBeUndefined();
    const paths: SummaryPath[] = [
      { id: 'D', label: 'TGW', status: 'succeeded', steps: [], results },
      { id: 'Q', label: 'not in plan', status: 'failed', steps: [], results: [] },
    ];
    const [d, q] = selectionTable(paths, plan);
    expect(d).toMatchObject({
      path: 'D',
      method: 'transit-gateway',
      latency: { probe: 'tcp-connect', p50: 1, p99: 2, p50_ci95: [0.9, 1.1], loss: 0.01 },
      throughputBps: 9e9,
      mtuBytes: 8973,
      link: 'inter-region',
    });
    expect(q).toMatchObject({ path: 'Q', method: 'unknown', latency: null, fixedUsdPerMonth: null, usdPerGb: null });
  });
});
