/**
 * The namespace lab as README.md and docs/lab.md type it (root): `lab up`, the seed's plan,
 * `lab status`, `lab down`, `lab up --profile seed-002`, and the seed-004 AZ-pair flow (`lab up
 * --profile seed-004`, its plan, report, trend, `lab down`). Each run's figures come from `report --local RUN_ID --json`;
 * the seed-004 run's AZ-pair table (modes of the mixed paths, the lab's applied delay) from the
 * summary the run stored. Nothing of the lab is left afterwards.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Summary } from '../../core/run-summary.js';
import { DEFAULT_PREFIX } from '../../lab/namespace-names.js';
import { ALL_ROLES } from '../../lab/profiles/profile-by-name.js';
import { SEED004_ROUTES } from '../../lab/profiles/seed-004-profile.js';
import { azPairRows } from '../../report/report-az.js';
import { renderCsv } from '../../report/report-csv.js';
import { renderMarkdown } from '../../report/report-markdown.js';
import { cleanTree } from '../helpers/clean-tree.js';
import { expectHonestComparisons } from '../helpers/honest-comparisons.js';
import { docCommand } from './claims.js';
import { type Ran, say, sh } from './shell.js';

let tree: ReturnType<typeof cleanTree>;
beforeAll(async () => {
  tree = cleanTree('lab');
  // A lab someone left up would be reused as it is: start from none, as a new user does.
  const down = await sh('npx pathbench lab down', tree.dir);
  expect(down.code, down.stderr).toBe(0);
});
afterAll(async () => {
  if (tree) await sh('npx pathbench lab down', tree.dir);
  tree?.remove();
});

const run = (command: string) => sh(command, tree.dir, 420_000);

/** The default lab's namespaces still present (other prefixes are other runs' labs). */
async function labNamespaces(): Promise<string[]> {
  const mine = new Set(ALL_ROLES.map((r) => `${DEFAULT_PREFIX}${r}`));
  const list = await run('ip netns list');
  return list.stdout
    .split('\n')
    .map((l) => l.split(' ')[0])
    .filter((n) => mine.has(n));
}

/** The run id a table run printed (`run <id>: <status>`). */
function runIdOf(r: Ran): string {
  const id = /^run (\S+): /m.exec(r.stdout)?.[1];
  expect(id, r.stdout.slice(0, 500)).toBeDefined();
  return id as string;
}

function routesOf(from: string, to: string): [number, number][] | undefined {
  return SEED004_ROUTES[`${from}|${to}`] ?? SEED004_ROUTES[`${to}|${from}`];
}

/**
 * Seed 004's AZ-pair table on the lab twin: every path of the plan with the AZ pair it was planned
 * for, one-way and round trip, the p99/p50 ratio; the mixed paths show as many modes as they have
 * routes (Osaka az2↔az3: three; az1↔az2: two, the mean in the valley), single-route pairs one; each
 * cross-AZ p50 at or above what the lab applied on the path's fastest route; no dishonest comparison.
 */
function expectSeed004Pairs(s: Summary, plan: { paths: { id: string; az: unknown }[] }): void {
  expectHonestComparisons(s);
  const rows = azPairRows(s);
  expect(rows.map((x) => x.path).sort()).toEqual(plan.paths.map((p) => p.id).sort());
  for (const row of rows) {
    expect(row.az).toEqual(plan.paths.find((p) => p.id === row.path)?.az);
    expect(row.n, row.path).toBeGreaterThan(200);
    expect(row.oneWay.p50).toBeCloseTo(row.rtt.p50! / 2, 9);
    expect(row.oneWay.p999).toBeCloseTo(row.rtt.p999! / 2, 9);
    expect(row.ratio).toBeGreaterThanOrEqual(1);
    if (!routesOf(row.az.from.azId, row.az.to.azId)) {
      // same AZ: no added delay, far below every cross-AZ pair's 220 µs or more
      expect(row.rtt.p50!, row.path).toBeLessThan(200);
      continue;
    }
    // At or above the delay the helper applied on the fastest route (its 10th percentile: the
    // fastest route carries at least 45 % of every mixed path's packets). Not the route's target:
    // the lab takes the bare topology's round trip off its delays as calibrated with tcp-connect,
    // and sockperf's own bare round trip is shorter.
    const truth = s.paths.find((p) => p.id === row.path)?.lab;
    expect(truth, `${row.path}: the lab's applied delay`).toBeDefined();
    expect(row.rtt.p50!, row.path).toBeGreaterThan(truth!.appliedP10P90Ms![0] * 1000 * 0.97);
  }
  const byPair = (a: string, b: string) =>
    rows.filter((x) => routesOf(x.az.from.azId, x.az.to.azId) === routesOf(a, b));
  for (const row of byPair('apne3-az2', 'apne3-az3')) expect(row.modes.length, JSON.stringify(row.modes)).toBe(3);
  for (const row of byPair('apne3-az1', 'apne3-az2')) {
    expect(row.modes.length, JSON.stringify(row.modes)).toBe(2);
    expect(row.valleyMeanRtt, row.path).toBeDefined();
    expect(row.ratio!).toBeGreaterThan(1.4);
  }
  for (const row of [...byPair('apne1-az1', 'apne1-az4'), ...byPair('apne3-az1', 'apne3-az3')])
    expect(row.modes.length, `${row.path} ${JSON.stringify(row.modes)}`).toBeLessThanOrEqual(1);
  // the table reaches every rendering
  expect(renderMarkdown(s)).toContain('## AZ pairs');
  expect(renderCsv(s)).toContain('one_way_p50_us');
}

/** The run's figures through `report --local RUN_ID --json`: every path n > 0. */
async function everyPathMeasured(runId: string): Promise<string> {
  const r = await run(`npx pathbench report --local ${runId} --json`);
  expect(r.code, r.stderr).toBe(0);
  const s = JSON.parse(r.stdout) as Summary;
  for (const p of s.paths) {
    const n = Math.max(0, ...p.results.map((x) => x.n));
    expect(n, `path ${p.id}: ${p.error ?? ''}`).toBeGreaterThan(0);
  }
  const figure = s.paths.map((p) => `${p.id} n=${Math.max(0, ...p.results.map((x) => x.n))}`).join(', ');
  say(r, figure);
  return figure;
}

describe.sequential('README.md and docs/lab.md, the namespace lab', () => {
  it('brings the seed-000 lab up, runs its plan and measures every path', async () => {
    docCommand(
      'docs/lab.md',
      'npx pathbench lab up [--profile seed-000|seed-002|seed-004|mesh] [--prefix pb-] [--no-calibrate]',
    );
    docCommand('docs/lab.md', 'npx pathbench run --local --plan plans/lab-seed-000.json');
    const c = docCommand(
      'README.md',
      'npx pathbench lab up && npx pathbench run --local --plan plans/lab-seed-000.json',
    );
    const r = await run(c);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(r.stdout).toMatch(/^run \S+: succeeded$/m);
    say(r, `run ${runIdOf(r)} succeeded`);
    await everyPathMeasured(runIdOf(r));
  });

  it('says the lab is up and healthy, as text and as JSON', async () => {
    const c = docCommand('docs/lab.md', 'npx pathbench lab status [--json]');
    const t = await run(c.replace(' [--json]', ''));
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toMatch(/seed-000 .* healthy/);
    say(t, t.stdout.split('\n')[0]);
    const j = await run(c.replace(' [--json]', ' --json'));
    expect(j.code, j.stderr).toBe(0);
    const st = JSON.parse(j.stdout) as { healthy: boolean; profile: string };
    expect(st).toMatchObject({ healthy: true, profile: 'seed-000' });
    say(j, `healthy ${st.healthy}, profile ${st.profile}`);
  });

  it('takes it down, leaving no namespace', async () => {
    const c = docCommand('docs/lab.md', 'npx pathbench lab down');
    const r = await run(c);
    expect(r.code, r.stderr).toBe(0);
    expect(await labNamespaces()).toEqual([]);
    const st = await run('npx pathbench lab status');
    expect(st.stdout).toMatch(/is down/);
    say(r, st.stdout.trim());
  });

  it('brings up the seed-002 profile (its real proxies) and takes it down', async () => {
    docCommand('README.md', 'npx pathbench lab up --profile seed-002');
    const up = await run(docCommand('docs/lab.md', 'npx pathbench lab up --profile seed-002'));
    expect(up.code, up.stderr.slice(-2000)).toBe(0);
    const st = await run('npx pathbench lab status --json');
    expect(JSON.parse(st.stdout)).toMatchObject({ healthy: true, profile: 'seed-002' });
    say(up, 'healthy, profile seed-002');
    const down = await run('npx pathbench lab down');
    expect(down.code, down.stderr).toBe(0);
  });

  it('runs the seed-004 AZ pairs: every path measured by sockperf, each AZ pair with its modes; report, trend, lab down', async () => {
    const up = await run('npx pathbench lab up --profile seed-004');
    expect(up.code, up.stderr.slice(-2000)).toBe(0);
    say(up, up.stdout.trim().split('\n').at(-1) ?? '');
    const r = await run('npx pathbench run --local --plan plans/lab-seed-004.json');
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    say(r, `run ${runIdOf(r)}: ${/^run \S+: (\S+)$/m.exec(r.stdout)?.[1]}`);
    await everyPathMeasured(runIdOf(r));
    // The run's stored summary (with what the lab applied per path): the seed's AZ-pair table.
    const stored = JSON.parse(
      readFileSync(join(tree.dir, '.pathbench', 'reports', `run=${runIdOf(r)}`, 'summary.json'), 'utf8'),
    ) as Summary;
    const plan = JSON.parse(readFileSync(join(tree.dir, 'plans', 'lab-seed-004.json'), 'utf8'));
    expectSeed004Pairs(stored, plan);
    const t = await run('npx pathbench trend --plan lab-seed-004 --runs 1');
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toContain(runIdOf(r));
    say(t, `${t.stdout.trim().split('\n').length} lines`);
    const down = await run('npx pathbench lab down');
    expect(down.code, down.stderr).toBe(0);
    expect(await labNamespaces()).toEqual([]);
  });
});
