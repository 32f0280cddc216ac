import { describe, expect, it } from 'vitest';
import { meshLayout, meshRoundLowerBound, meshSchedule, roundRobin } from '../../core/mesh-schedule.js';
import { COMMERCIAL_REGIONS, fibreRttMs, greatCircleKm, REGIONS, regionByCode } from '../../core/regions.js';

describe('meshSchedule', () => {
  for (let n = 2; n <= 46; n++) {
    it(`n = ${n}: the lower bound, no site twice in a round, every directed pair once`, () => {
      const rounds = meshSchedule(n);
      expect(rounds.length).toBe(meshRoundLowerBound(n));
      expect(rounds.length).toBe(n % 2 === 0 ? 2 * (n - 1) : 2 * n);
      const seen = new Set<string>();
      for (const round of rounds) {
        expect(round.length).toBe(Math.floor(n / 2));
        const busy = new Set<number>();
        for (const [a, b] of round) {
          expect(a).not.toBe(b);
          expect(busy.has(a) || busy.has(b)).toBe(false);
          busy.add(a);
          busy.add(b);
          const key = `${a}>${b}`;
          expect(seen.has(key)).toBe(false);
          seen.add(key);
        }
      }
      expect(seen.size).toBe(n * (n - 1));
    });
  }

  it('has nothing to schedule below two sites and refuses a bad count', () => {
    expect(meshSchedule(0)).toEqual([]);
    expect(meshSchedule(1)).toEqual([]);
    expect(() => roundRobin(2.5)).toThrow(/expected a site count, got 2.5/);
  });
});

describe('regions', () => {
  it('lists each region once, with coordinates on the globe', () => {
    expect(new Set(REGIONS.map((r) => r.code)).size).toBe(REGIONS.length);
    for (const r of REGIONS) {
      expect(Math.abs(r.lat)).toBeLessThanOrEqual(90);
      expect(Math.abs(r.lon)).toBeLessThanOrEqual(180);
    }
    expect(COMMERCIAL_REGIONS.length).toBeGreaterThanOrEqual(34);
  });

  it('measures great circles as published city-to-city distances (±1 %)', () => {
    const km = (a: string, b: string) => greatCircleKm(regionByCode(a)!, regionByCode(b)!);
    // London–Paris ≈ 344 km, Frankfurt–Dublin ≈ 1,087 km, Sydney–Singapore ≈ 6,300 km.
    expect(km('eu-west-2', 'eu-west-3')).toBeCloseTo(344, -1);
    expect(Math.abs(km('eu-central-1', 'eu-west-1') / 1087 - 1)).toBeLessThan(0.01);
    expect(Math.abs(km('ap-southeast-2', 'ap-southeast-1') / 6300 - 1)).toBeLessThan(0.01);
    expect(km('us-east-1', 'us-east-1')).toBe(0);
  });

  it('turns distance into a fibre round trip: 1,000 km at route factor 1.5 ≈ 14.7 ms', () => {
    expect(fibreRttMs(1000)).toBeCloseTo(14.71, 1);
    expect(fibreRttMs(1000, 1)).toBeCloseTo(9.81, 1);
  });
});

describe('meshLayout', () => {
  const sites = COMMERCIAL_REGIONS.slice(0, 8);

  it('gives every directed pair its distance and round', () => {
    const m = meshLayout(sites);
    expect(m.pairs).toHaveLength(56);
    expect(m.rounds).toBe(14);
    expect(m.lowerBound).toBe(14);
    const p = m.pairs.find((x) => x.from === 'us-east-1' && x.to === 'us-west-2')!;
    expect(p.distanceKm).toBeCloseTo(greatCircleKm(sites[0], sites[3]), 0);
  });

  it('filters by distance and region count, keeping rounds consecutive and conflict-free', () => {
    const m = meshLayout(COMMERCIAL_REGIONS, { minKm: 1000, maxKm: 6000, maxRegions: 12 });
    expect(m.sites).toHaveLength(12);
    expect(m.pairs.every((p) => p.distanceKm >= 1000 && p.distanceKm <= 6000)).toBe(true);
    const rounds = new Set(m.pairs.map((p) => p.round));
    expect([...rounds].sort((a, b) => a - b)).toEqual(Array.from({ length: m.rounds }, (_, i) => i));
    for (const r of rounds) {
      const busy = m.pairs.filter((p) => p.round === r).flatMap((p) => [p.from, p.to]);
      expect(new Set(busy).size).toBe(busy.length);
    }
    expect(m.rounds).toBeGreaterThanOrEqual(m.lowerBound);
  });
});
