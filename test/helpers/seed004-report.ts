/**
 * What a run of `plans/lab-seed-004.json` on the seed-004 lab profile must report: every AZ pair
 * in the AZ-pair table with one-way and round trip and the p99/p50 ratio, each cross-AZ p50 at or
 * above the delay the lab applied, and the mixed paths with as many modes as they have routes
 * (Osaka az2↔az3: three; Osaka az1↔az2: two with the mean in the valley), single-route pairs one.
 * The acceptance suite checks the run `npx pathbench run --local --plan plans/lab-seed-004.json`
 * made, through `report --json`.
 */
import { expect } from 'vitest';
import type { Summary } from '../../core/run-summary.js';
import { SEED004_ROUTES } from '../../lab/profiles/seed-004-profile.js';
import { azPairRows } from '../../report/report-az.js';
import { renderCsv } from '../../report/report-csv.js';
import { renderMarkdown } from '../../report/report-markdown.js';
import { expectHonestComparisons } from './honest-comparisons.js';

/** Routes of the AZ pair a path crosses (either direction), or undefined for a same-AZ pair. */
function routesOf(from: string, to: string): [number, number][] | undefined {
  return SEED004_ROUTES[`${from}|${to}`] ?? SEED004_ROUTES[`${to}|${from}`];
}

interface PlannedPath {
  id: string;
  az: unknown;
}

export function expectSeed004Report(s: Summary, plan: { paths: PlannedPath[] }): void {
  expectHonestComparisons(s);
  const rows = azPairRows(s);
  // every path of the plan, with the AZ pair it was planned for
  expect(rows.map((x) => x.path).sort()).toEqual(plan.paths.map((p) => p.id).sort());
  for (const row of rows) {
    const planned = plan.paths.find((p) => p.id === row.path);
    expect(row.az).toEqual(planned?.az);
    expect(row.n, row.path).toBeGreaterThan(200);
    expect(row.oneWay.p50).toBeCloseTo(row.rtt.p50! / 2, 9);
    expect(row.oneWay.p999).toBeCloseTo(row.rtt.p999! / 2, 9);
    expect(row.ratio).toBeGreaterThanOrEqual(1);
    const routes = routesOf(row.az.from.azId, row.az.to.azId);
    if (!routes) {
      // same AZ: no added delay, far below every cross-AZ pair's 220 µs or more
      expect(row.rtt.p50!, row.path).toBeLessThan(200);
      continue;
    }
    // The p50 sits at or above the delay the helper applied on the fastest route (its 10th
    // percentile: the fastest route carries at least 45 % of every mixed path's packets). Not
    // the route's target: the lab takes the bare topology's round trip off its delays as
    // calibrated with tcp-connect, and sockperf's own bare round trip is shorter.
    const truth = s.paths.find((p) => p.id === row.path)?.lab;
    expect(truth, `${row.path}: the lab's applied delay`).toBeDefined();
    expect(row.rtt.p50!, row.path).toBeGreaterThan(truth!.appliedP10P90Ms![0] * 1000 * 0.97);
  }
  const byPair = (a: string, b: string) =>
    rows.filter((x) => routesOf(x.az.from.azId, x.az.to.azId) === routesOf(a, b));
  // three routes in Osaka az2↔az3 (seed: ≈ 300 / 370 / 450 µs one-way), both directions
  for (const row of byPair('apne3-az2', 'apne3-az3')) expect(row.modes.length, JSON.stringify(row.modes)).toBe(3);
  // two in Osaka az1↔az2, with the mean in the valley between them
  for (const row of byPair('apne3-az1', 'apne3-az2')) {
    expect(row.modes.length, JSON.stringify(row.modes)).toBe(2);
    expect(row.valleyMeanRtt, row.path).toBeDefined();
    expect(row.ratio!).toBeGreaterThan(1.4);
  }
  // single-route pairs: one mode
  for (const row of [...byPair('apne1-az1', 'apne1-az4'), ...byPair('apne3-az1', 'apne3-az3')])
    expect(row.modes.length, `${row.path} ${JSON.stringify(row.modes)}`).toBeLessThanOrEqual(1);
  // the table reaches every rendering
  expect(renderMarkdown(s)).toContain('## AZ pairs');
  expect(renderCsv(s)).toContain('one_way_p50_us');
}
