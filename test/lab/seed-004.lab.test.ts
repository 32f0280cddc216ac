/**
 * The seed-004 lab twin through the whole pipeline (needs root): the full 16-path AZ matrix of
 * seed 004 (every ordered AZ pair of Tokyo az1/az2/az4 and Osaka az1/az2/az3, and the same-AZ
 * references both ways; `azMatrixPlan` over the lab's hosts, as `pathbench plan az-matrix` writes
 * it) in one run and one execution of the run's machine, on the seed-004 profile, each path
 * measured from its own source namespace with sockperf ping-pong. (`plans/lab-seed-004.json`, the
 * shipped plan, has each pair one way only: the lab's delays are symmetric.)
 * Checks that every AZ pair is in the report's AZ-pair table with one-way and round trip and the
 * p99/p50 ratio, and that the mixed paths show as many modes as they have routes (Osaka az2↔az3:
 * three, Osaka az1↔az2: two with the mean in the valley), single-route pairs one. Short probes
 * (3 s per path: sockperf drops its first and last ~0.45 s as warm-up and cool-down, and with
 * --full-log more of a 1 s run; 3 s leave ~2 s of exchanges); own prefix; nothing left afterwards.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Summary } from '../../core/run-summary.js';
import { silentLogger } from '../../functions/log.js';
import { azMatrixPlan } from '../../infra/testbed/az-matrix.js';
import { createLabPorts } from '../../lab/index.js';
import { labAvailable, labDown, labUp } from '../../lab/lab.js';
import { DEFAULT_PREFIX } from '../../lab/namespace-names.js';
import { SEED004_HOSTS, SEED004_ROUTES } from '../../lab/profiles/seed-004-profile.js';
import { listNamespaces, run } from '../../lab/sys.js';
import { runLocal } from '../../local/local-driver.js';
import { azPairRows } from '../../report/report-az.js';
import { renderCsv } from '../../report/report-csv.js';
import { renderMarkdown } from '../../report/report-markdown.js';
import { renderTable } from '../../report/report-text.js';
import { expectHonestComparisons } from '../helpers/honest-comparisons.js';
import { ROOT } from '../helpers/repo.js';

const P = 'pb-t4-';
const OPTS = { prefix: P };
let dir: string;
let haveSockperf = false;

beforeAll(async () => {
  const a = await labAvailable();
  expect(a, a.reason).toEqual({ ok: true });
  haveSockperf = await run(['sh', '-c', 'command -v sockperf']).then(
    () => true,
    () => false,
  );
  expect(haveSockperf, 'sockperf is needed on the lab targets (apt-get install sockperf)').toBe(true);
  await labDown(OPTS);
  await labUp({ ...OPTS, profile: 'seed-004', delay: 'nfqueue' });
  dir = await mkdtemp(join(tmpdir(), 'pathbench-lab-seed004-'));
}, 240_000);

afterAll(async () => {
  await labDown(OPTS);
  if (dir) await rm(dir, { recursive: true, force: true });
  expect((await listNamespaces()).filter((n) => n.startsWith(P))).toEqual([]);
});

/** Routes of the AZ pair a path crosses (either direction), or undefined for a same-AZ pair. */
function routesOf(from: string, to: string): [number, number][] | undefined {
  return SEED004_ROUTES[`${from}|${to}`] ?? SEED004_ROUTES[`${to}|${from}`];
}

describe('the seed-004 lab twin', () => {
  it('reports every AZ pair one-way and round trip, with the modes of the mixed paths', async () => {
    const shipped = JSON.parse(await readFile(join(ROOT, 'plans', 'lab-seed-004.json'), 'utf8'));
    const plan = azMatrixPlan(
      SEED004_HOSTS.map((h) => ({ region: h.region, azId: h.azId, instanceId: `${P}${h.role}`, ip: h.ip })),
      { name: shipped.name, probe: 'sockperf', durationSeconds: 3, mode: 'tcp' },
    );
    expect(plan.paths).toHaveLength(16);
    // The shipped plan's paths are the matrix's one-way half, with the same clients and targets.
    for (const p of shipped.paths) {
      const same = plan.paths.find((q) => q.id === p.id);
      expect(same?.target, p.id).toEqual(p.target);
      expect(same?.client.instanceId, p.id).toBe(p.client.instanceId.replace(DEFAULT_PREFIX, P));
    }
    const ports = await createLabPorts(OPTS);
    const r = await runLocal({
      plan: { ...plan, defaults: { ...plan.defaults, reboot: false, creditWaitSeconds: 0 } },
      dataDir: dir,
      runId: 'seed004',
      log: silentLogger,
      fleet: ports.fleet,
      routes: ports.routes,
      wrap: ports.wrap,
      labTruth: ports.truth,
    });
    const s = r.summary as Summary;
    const failed = (s?.paths ?? []).filter((p) => p.status !== 'succeeded');
    expect(r.execution.status, JSON.stringify({ execution: r.execution, failed })).toBe('SUCCEEDED');
    // One execution of the run's machine: one chunk, each path its own execution under it.
    expect(r.execution.children.filter((c) => c.state === 'MeasureChunk')).toHaveLength(1);
    expect(r.execution.children.filter((c) => c.state === 'MeasurePath')).toHaveLength(16);
    console.log(renderTable(s));
    expectHonestComparisons(s);
    const rows = azPairRows(s);
    // every path of the plan, with the AZ pair it was planned for
    expect(rows.map((x) => x.path).sort()).toEqual(plan.paths.map((p: { id: string }) => p.id).sort());
    for (const row of rows) {
      const planned = plan.paths.find((p: { id: string }) => p.id === row.path);
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
  }, 480_000);
});
