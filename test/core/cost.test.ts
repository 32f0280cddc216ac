/** The cost guard's estimate (bytes × $/GB per link, instance-hours) and budget rule. */
import { describe, expect, it } from 'vitest';
import {
  applicableBudget,
  enforceBudget,
  estimateRun,
  formatEstimate,
  PATH_OVERHEAD_SECONDS,
  pathLink,
} from '../../core/cost.js';
import { OverBudgetError } from '../../core/errors.js';
import { parsePlan } from '../../core/plan.js';
import { priceTableSchema, shippedPrices } from '../../core/prices.js';
import { expectOk, expectProblems } from '../helpers/plans.js';

const iperf10s = { kind: 'iperf3', durationSeconds: 10 };

function plan(paths: unknown[], extra: Record<string, unknown> = {}) {
  return expectOk(
    parsePlan({
      name: 'cost',
      defaults: { client: { instanceId: 'i-0aaa', region: 'ap-northeast-1' }, probes: [iperf10s] },
      paths,
      ...extra,
    }),
  );
}

describe('price table', () => {
  it('is dated, sourced and valid', () => {
    const t = shippedPrices();
    expect(t.asOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(t.source).toMatch(/AWS/);
    expect(t.interRegionOutPerGb.default).toBeGreaterThan(0);
  });

  it('refuses a table without a default rate', () => {
    const bad = { ...shippedPrices(), natProcessingPerGb: { 'us-east-1': 0.045 } };
    expect(priceTableSchema.safeParse(bad).success).toBe(false);
  });
});

describe('estimateRun', () => {
  it('prices an inter-region mesh pair at the source region rate: 10 s iperf3 at 12.5 Gbps = 15.625 GB', () => {
    const p = plan([
      {
        id: 'tokyo-osaka',
        target: { host: '10.3.0.10', port: 5201 },
        mesh: { from: 'ap-northeast-1', to: 'ap-northeast-3', distanceKm: 397, round: 0 },
      },
    ]);
    const est = estimateRun(p);
    const [path] = est.paths;
    expect(path).toMatchObject({ from: 'ap-northeast-1', to: 'ap-northeast-3', link: 'inter-region', perGb: 0.09 });
    expect(path.bytes).toBe(15.625e9);
    expect(path.usd).toBeCloseTo(1.40625, 6);
    // Instance-hours: one client for 10 s of iperf3 + 1 s setup + the per-path overhead, c6i.large in Tokyo.
    const hours = (10 + 1 + PATH_OVERHEAD_SECONDS) / 3600;
    expect(est.instances).toMatchObject({ count: 1, type: 'c6i.large', perHour: 0.107, priced: true });
    expect(est.instances.usd).toBeCloseTo(0.107 * hours, 9);
    expect(est.totalUsd).toBeCloseTo(1.40625 + 0.107 * hours, 9);
  });

  it('uses a pair rate where the pair differs from its source region', () => {
    const p = plan([
      {
        id: 'va-oh',
        client: { instanceId: 'i-0bbb', region: 'us-east-1' },
        target: { host: '10.2.0.10', port: 5201 },
        mesh: { from: 'us-east-1', to: 'us-east-2', distanceKm: 500, round: 1 },
      },
      {
        id: 'va-or',
        client: { instanceId: 'i-0bbb', region: 'us-east-1' },
        target: { host: '10.4.0.10', port: 5201 },
        mesh: { from: 'us-east-1', to: 'us-west-2', distanceKm: 3800, round: 2 },
      },
    ]);
    const [a, b] = estimateRun(p).paths;
    expect(a.perGb).toBe(0.01);
    expect(b.perGb).toBe(0.02);
  });

  it('bills a mesh plan for its rounds (each lasts its slowest pair), not for its pairs one after another', () => {
    // Two rounds of two pairs each (a region in one test a round), four clients; round 1's
    // second pair probes 30 s instead of 10.
    const client: Record<string, string> = {
      'us-east-1': 'i-0aaa',
      'us-east-2': 'i-0bbb',
      'us-west-1': 'i-0ccc',
      'us-west-2': 'i-0ddd',
    };
    const pair = (id: string, region: string, to: string, round: number, seconds = 10) => ({
      id,
      client: { instanceId: client[region], region },
      target: { host: '10.9.0.10', port: 5201 },
      probes: [{ kind: 'iperf3', durationSeconds: seconds }],
      mesh: { from: region, to, distanceKm: 500, round },
    });
    const pairs = [
      pair('va-oh', 'us-east-1', 'us-east-2', 0),
      pair('ca-or', 'us-west-1', 'us-west-2', 0),
      pair('oh-va', 'us-east-2', 'us-east-1', 1),
      pair('or-ca', 'us-west-2', 'us-west-1', 1, 30),
    ];
    const mesh = plan(pairs);
    const est = estimateRun(mesh);
    const per = (s: number) => s + 1 + PATH_OVERHEAD_SECONDS;
    const hours = (per(10) + per(30)) / 3600;
    expect(est.instances.count).toBe(4);
    expect(est.instances.hours).toBeCloseTo(hours, 12);
    expect(est.assumptions.join('; ')).toMatch(/mesh pairs in rounds/);
    // The same paths without mesh facts run one after another.
    const sequential = estimateRun(plan(pairs.map(({ mesh: _m, ...p }) => p)));
    const allHours = (3 * per(10) + per(30)) / 3600;
    expect(sequential.instances.hours).toBeCloseTo(allHours, 12);
    expect(sequential.instances.usd / est.instances.usd).toBeCloseTo(allHours / hours, 9);
    expect(sequential.assumptions.join('; ')).toMatch(/paths one after another/);
  });

  it('sizes each probe kind: iperf3 UDP at its bitrate, http count × body, tcp-connect small', () => {
    const p = plan([
      {
        id: 'mix',
        target: { host: '10.0.0.10', port: 80 },
        probes: [
          { kind: 'iperf3', mode: 'udp', bitrate: '100M', durationSeconds: 8, repeats: 2 },
          { kind: 'http', count: 1000, payloadBytes: 1_000_000, trials: 2 },
          { kind: 'tcp-connect', count: 300 },
        ],
      },
    ]);
    const [path] = estimateRun(p).paths;
    const udp = (0.1e9 * 16) / 8;
    const http = 2000 * (1_000_000 + 400);
    const tcp = 300 * 400;
    expect(path.bytes).toBe(udp + http + tcp);
    // Same region, no routes elsewhere: priced as cross-AZ, both directions.
    expect(path).toMatchObject({ link: 'cross-az', perGb: 0.02 });
  });

  it('follows routes: another region, a NAT gateway, an internet gateway; a public target is egress', () => {
    const route = (region: string, via: Record<string, string>) => ({
      region,
      routeTableId: 'rtb-1',
      destination: '10.9.0.0/16',
      via,
    });
    const p = plan([
      {
        id: 'peer',
        target: { host: '10.9.0.10', port: 1 },
        routes: [route('ap-northeast-3', { transitGatewayId: 'tgw-1' })],
      },
      {
        id: 'nat',
        target: { host: '10.9.0.10', port: 1 },
        routes: [route('ap-northeast-1', { natGatewayId: 'nat-1' })],
      },
      { id: 'igw', target: { host: '10.9.0.10', port: 1 }, routes: [route('ap-northeast-1', { gatewayId: 'igw-1' })] },
      { id: 'public', target: { host: '203.0.113.7', port: 1 } },
      { id: 'privatelink', target: { host: 'vpce-0a1-1a2.vpce-svc-0123.ap-northeast-3.vpce.amazonaws.com', port: 1 } },
    ]);
    const t = shippedPrices();
    const links = p.paths.map((x) => pathLink(x, t));
    expect(links[0]).toMatchObject({ link: 'inter-region', to: 'ap-northeast-3', perGb: 0.09 });
    expect(links[1]).toMatchObject({ link: 'nat', perGb: 0.062 + 0.114 });
    expect(links[2]).toMatchObject({ link: 'internet', perGb: 0.114 });
    expect(links[3]).toMatchObject({ link: 'internet', perGb: 0.114 });
    expect(links[4]).toMatchObject({ link: 'inter-region', to: 'ap-northeast-3', perGb: 0.09 });
  });

  it('costs nothing for the lab and the local driver', () => {
    const p = plan([
      { id: 'lab', client: { instanceId: 'lab-client', region: 'lab' }, target: { host: '10.0.1.2', port: 5201 } },
    ]);
    const est = estimateRun(p);
    expect(est.paths[0]).toMatchObject({ link: 'not-aws', usd: 0 });
    expect(est.instances.count).toBe(0);
    expect(est.totalUsd).toBe(0);
  });

  it('takes the bandwidth bound from the instance type, or the one given', () => {
    const p = plan([{ id: 'x', target: { host: '10.0.0.1', port: 1 } }]);
    expect(estimateRun(p, { instanceType: 't3.micro' }).bandwidthGbps).toBe(5);
    expect(estimateRun(p, { bandwidthGbps: 1 }).paths[0].bytes).toBe(1.25e9);
    const unknown = estimateRun(p, { instanceType: 'x9.huge' });
    expect(unknown.instances.priced).toBe(false);
    expect(unknown.assumptions.join(' ')).toMatch(/x9\.huge is not in the price table/);
  });
});

describe('budget', () => {
  const p = plan(
    [
      {
        id: 'pair',
        target: { host: '10.3.0.10', port: 5201 },
        mesh: { from: 'ap-northeast-1', to: 'ap-northeast-3', distanceKm: 397, round: 0 },
      },
    ],
    { budgetUsd: 1 },
  );

  it('accepts budgetUsd on the plan and refuses a non-positive one', () => {
    expect(p.budgetUsd).toBe(1);
    expect(
      expectProblems(
        parsePlan({
          name: 'x',
          budgetUsd: 0,
          defaults: { client: { instanceId: 'i', region: 'r' }, probes: [iperf10s] },
          paths: [{ id: 'a', target: { host: '10.0.0.1', port: 1 } }],
        }),
      ),
    ).toEqual(['budgetUsd: expected a positive amount in USD']);
  });

  it("the plan's budget wins over the stack default", () => {
    expect(applicableBudget(p, 50)).toEqual({ usd: 1, source: 'plan' });
    expect(applicableBudget({ ...p, budgetUsd: undefined }, 50)).toEqual({ usd: 50, source: 'stack' });
    expect(applicableBudget({ ...p, budgetUsd: undefined })).toBeUndefined();
  });

  it('refuses over budget in one line naming estimate and budget', () => {
    const est = estimateRun(p);
    let err: unknown;
    try {
      enforceBudget(est, applicableBudget(p), false);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(OverBudgetError);
    const msg = (err as Error).message;
    expect(msg).not.toContain('\n');
    expect(msg).toMatch(/^estimated cost \$1\.41 is over the budget of \$1\.00 \(the plan's budgetUsd\)/);
  });

  it('records an override with the estimate', () => {
    const est = estimateRun(p);
    const rec = enforceBudget(est, applicableBudget(p), true);
    expect(rec).toMatchObject({ overBudget: true, overridden: true, budgetUsd: 1, budgetSource: 'plan' });
    expect(rec.estimateUsd).toBeCloseTo(est.totalUsd, 6);
    expect(rec.transferBytes).toBe(15.625e9);
  });

  it('prints a table: path, link, bytes, $/GB, $, then instances, total and the budget', () => {
    const text = formatEstimate(estimateRun(p), applicableBudget(p));
    expect(text).toMatch(/path\s+link\s+bytes\s+\$\/GB\s+\$/);
    expect(text).toMatch(/pair\s+ap-northeast-1→ap-northeast-3 inter-region\s+15\.6 GB\s+\$0\.0900\s+\$1\.41/);
    expect(text).toMatch(/budget: \$1\.00 \(plan budgetUsd\) — OVER/);
  });

  it('prices unbounded UDP at the client bandwidth, like TCP', () => {
    const at = (probes: unknown[]) =>
      estimateRun(plan([{ id: 'A', target: { host: '10.0.0.1', port: 1 }, probes }])).paths[0].bytes;
    const tcp = at([{ kind: 'iperf3', durationSeconds: 10 }]);
    expect(at([{ kind: 'iperf3', mode: 'udp', bitrate: 'unbounded', durationSeconds: 10 }])).toBeCloseTo(tcp, 0);
    expect(at([{ kind: 'iperf3', mode: 'udp', bitrate: '1G', durationSeconds: 10 }])).toBeLessThan(tcp);
  });

  it('counts every trial of sockperf and pingpong', () => {
    const at = (probes: unknown[]) =>
      estimateRun(plan([{ id: 'A', target: { host: '10.0.0.1', port: 1 }, probes }])).paths[0];
    const once = at([{ kind: 'sockperf', durationSeconds: 60 }]);
    const twice = at([{ kind: 'sockperf', durationSeconds: 60, trials: 2 }]);
    expect(twice.bytes).toBeCloseTo(2 * once.bytes, 6);
    const pp = at([{ kind: 'pingpong', count: 1000, durationSeconds: 0 }]);
    const pp3 = at([{ kind: 'pingpong', count: 1000, durationSeconds: 0, trials: 3 }]);
    expect(pp3.bytes).toBeCloseTo(3 * pp.bytes, 6);
  });

  it('lists the dearest paths and sums the rest when there are many', () => {
    const many = plan(Array.from({ length: 30 }, (_, i) => ({ id: `p${i}`, target: { host: '10.0.0.1', port: 1 } })));
    const text = formatEstimate(estimateRun(many), undefined, 10);
    expect(text).toMatch(/… 21 more/);
  });
});
