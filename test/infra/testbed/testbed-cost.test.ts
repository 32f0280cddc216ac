/** Cost figures against the seed's own numbers (seed 000 §3.6 and the digest). */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parsePlan } from '../../../core/plan.js';
import { planFromTestbedOutputs } from '../../../infra/testbed/plan-from-outputs.js';
import {
  bitrateGbps,
  bytesAt,
  DEFAULT_TESTBED_INVENTORY,
  fixedMonthlyCost,
  formatCostNote,
  INTER_REGION_PER_GB,
  runTransferCost,
  TESTBED_INTER_REGION_RATES,
} from '../../../infra/testbed/testbed-cost.js';

const FIXTURE = fileURLToPath(new URL('../../fixtures/testbed-outputs.json', import.meta.url));

function testbedPlan() {
  const r = parsePlan(planFromTestbedOutputs(JSON.parse(readFileSync(FIXTURE, 'utf8'))));
  if (!r.ok) throw new Error(r.problems.join('\n'));
  return r.plan;
}

describe('fixed monthly cost', () => {
  it('reproduces the seed’s ≈ $204/month for 4 TGW attachments', () => {
    const tgw = fixedMonthlyCost().lines.find((l) => l.item === 'Transit Gateway attachments')!;
    expect(tgw.monthly).toBeCloseTo(204.4, 1);
  });

  it('reproduces the seed’s ≈ $38/month PrivateLink (1 NLB + 2 endpoint-AZs)', () => {
    const pl = fixedMonthlyCost({
      ...DEFAULT_TESTBED_INVENTORY,
      interfaceEndpointAzs: 2,
      tgwAttachments: 0,
      instances: 0,
    });
    expect(pl.monthly).toBeCloseTo(17.74 + 20.44, 1);
    expect(Math.round(pl.monthly)).toBe(38);
  });

  it('adds up the testbed and says what stopping the instances saves', () => {
    const f = fixedMonthlyCost();
    // 204.4 TGW + 7 × 0.014 × 730 endpoints + 17.74 NLB + 4 × 0.107 × 730 instances
    expect(f.monthly).toBeCloseTo(204.4 + 71.54 + 17.739 + 312.44, 1);
    expect(f.monthlyWithoutInstances).toBeCloseTo(f.monthly - 312.44, 1);
  });

  it('does not guess an unknown instance price', () => {
    const f = fixedMonthlyCost({ ...DEFAULT_TESTBED_INVENTORY, instanceType: 'x9z.huge' });
    const line = f.lines.find((l) => l.item === 'Instances')!;
    expect(line.monthly).toBe(0);
    expect(line.detail).toContain('price unknown');
  });
});

describe('data transfer of one run', () => {
  it('matches the seed: a 10 Gbps iperf3 run moves ~37 GB per 30 s, ≈ $3.3–3.4', () => {
    const bytes = bytesAt(10, 30);
    expect(bytes / 1e9).toBeCloseTo(37.5, 5);
    const dollars = (bytes / 1e9) * INTER_REGION_PER_GB;
    expect(dollars).toBeGreaterThanOrEqual(3.3);
    expect(dollars).toBeLessThan(3.4);
  });

  it('parses iperf3 bitrates', () => {
    expect(bitrateGbps('1G')).toBe(1);
    expect(bitrateGbps('500M')).toBeCloseTo(0.5, 9);
    expect(bitrateGbps('100K')).toBeCloseTo(1e-4, 12);
    expect(() => bitrateGbps('fast')).toThrow(/not an iperf3 bitrate/);
  });

  it('counts only inter-region paths, iperf3 at full bandwidth and UDP at its bitrate', () => {
    const run = runTransferCost(testbedPlan(), { interRegion: TESTBED_INTER_REGION_RATES, bandwidthGbps: 12.5 });
    expect(run.paths.map((p) => p.pathId)).toEqual(['C', 'C-NLB', 'D', 'D-NLB', 'E']);
    const tcp = 2 * bytesAt(12.5, 30) * 3; // P1 and P4, 30 s × 3
    const udp = bytesAt(1, 30) * 3;
    const http = 1000 * 3 * 1024;
    const [c, cn, d, dn, e] = run.paths;
    expect(c.bytes).toBe(tcp + udp + http);
    expect(d.bytes).toBe(tcp + udp + http);
    expect(e.bytes).toBe(tcp + http); // UDP skipped on PrivateLink
    // the NLB-direct paths: TCP listeners only, over C's and D's routes and rates
    expect(cn.bytes).toBe(tcp + http);
    expect(dn.bytes).toBe(tcp + http);
    expect(c.cost).toBeCloseTo((c.bytes / 1e9) * 0.09, 6);
    expect(cn.cost).toBeCloseTo((cn.bytes / 1e9) * 0.09, 6);
    expect(d.cost).toBeCloseTo((d.bytes / 1e9) * 0.11, 6);
    expect(dn.cost).toBeCloseTo((dn.bytes / 1e9) * 0.11, 6);
    expect(run.cost).toBeCloseTo(c.cost + cn.cost + d.cost + dn.cost + e.cost, 9);
  });

  it('prints a short cost note', () => {
    const note = formatCostNote(
      fixedMonthlyCost(),
      runTransferCost(testbedPlan(), { interRegion: TESTBED_INTER_REGION_RATES, bandwidthGbps: 12.5 }),
    );
    expect(note).toContain('Transit Gateway attachments');
    expect(note).toMatch(/4 × \$0\.07\/h × 730 h\s+\$204\.40/);
    expect(note).toMatch(/total\s+\d+\.\d GB\s+\$\d+\.\d\d/);
    expect(note.split('\n').length).toBeLessThan(25);
  });
});
