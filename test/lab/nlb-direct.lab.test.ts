/**
 * Seed 000 §6.2 in the lab (needs root): plans/lab-seed-000-nlb.json measures C and D to the
 * Osaka instance and to the NLB in front of it (C-NLB, D-NLB: the lab's NLB is a second Osaka
 * address with its own delay on each hop), and E, the cross-region PrivateLink endpoint, through
 * the real ASL, agent and adapters. The report separates the NLB's cost from PrivateLink's own:
 * C-NLB − C, D-NLB − D and E − D-NLB are each `slower`, and each p50 difference is the difference
 * of what the lab applied to the two paths (its truth), within 50 µs. Own prefix; nothing left.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Summary } from '../../core/run-summary.js';
import { silentLogger } from '../../functions/log.js';
import { createLabPorts } from '../../lab/index.js';
import { labAvailable, labDown, labUp } from '../../lab/lab.js';
import { listNamespaces } from '../../lab/sys.js';
import { runLocal } from '../../local/local-driver.js';
import { ROOT } from '../helpers/repo.js';

const P = 'pb-nl-';
const OPTS = { prefix: P };
let dir: string;

beforeAll(async () => {
  const a = await labAvailable();
  expect(a, a.reason).toEqual({ ok: true });
  await labDown(OPTS);
  await labUp({ ...OPTS, delay: 'nfqueue' });
  dir = await mkdtemp(join(tmpdir(), 'pathbench-lab-nlb-'));
}, 300_000);

afterAll(async () => {
  await labDown(OPTS);
  await rm(dir, { recursive: true, force: true });
  expect((await listNamespaces()).filter((n) => n.startsWith(P))).toEqual([]);
});

/** The shipped plan, on this test's namespaces. */
async function labPlan() {
  const plan = JSON.parse(await readFile(join(ROOT, 'plans', 'lab-seed-000-nlb.json'), 'utf8'));
  plan.defaults.client.instanceId = `${P}client`;
  for (const p of plan.paths) for (const r of p.routes ?? []) r.routeTableId = r.routeTableId.replace(/^pb-/, P);
  return plan;
}

/** Seed 000 §6.2's own differences at p50, ms (C-NLB and D-NLB were measured in another session than 6.1). */
const SEED = { 'C-NLB − C': 1.21, 'D-NLB − D': 0.71, 'E − D-NLB': 13.32 - 11.59 };

describe('seed 000 §6.2: the NLB’s cost apart from PrivateLink’s', () => {
  it('reports C-NLB − C, D-NLB − D and E − D-NLB as slower, each the difference the lab applied', {
    timeout: 240_000,
  }, async () => {
    const ports = await createLabPorts(OPTS);
    const r = await runLocal({
      plan: await labPlan(),
      dataDir: dir,
      log: silentLogger,
      fleet: ports.fleet,
      routes: ports.routes,
      wrap: ports.wrap,
      labTruth: ports.truth,
      waitTimeOverrides: { WaitForProbe: 250 },
    });
    expect(r.execution.status).toBe('SUCCEEDED');
    const s = r.summary as Summary;
    expect(s.paths.map((p) => [p.id, p.status])).toEqual(
      ['C', 'C-NLB', 'D', 'D-NLB', 'E'].map((id) => [id, 'succeeded']),
    );
    const achieved = new Map(s.paths.map((p) => [p.id, p.lab?.achievedRttMs]));
    const rows = (s.comparisons ?? [])
      .filter((c) => c.probe === 'tcp-connect' && c.metric === 'connect_rtt_ms')
      .map((c) => {
        const applied = (achieved.get(c.path) ?? Number.NaN) - (achieved.get(c.baseline) ?? Number.NaN);
        return { name: `${c.path} − ${c.baseline}`, diff: c.p50.diff, verdict: c.p50.verdict, applied };
      });
    console.log('comparison   p50 diff  applied  seed 000');
    for (const x of rows)
      console.log(
        `${x.name.padEnd(11)} ${x.diff.toFixed(3).padStart(9)} ${x.applied.toFixed(3).padStart(8)} ${SEED[x.name as keyof typeof SEED].toFixed(2).padStart(9)}  ${x.verdict}`,
      );
    expect(rows.map((x) => x.name)).toEqual(Object.keys(SEED));
    for (const x of rows) {
      expect(x.verdict, x.name).toBe('slower');
      expect(
        Math.abs(x.diff - x.applied),
        `${x.name}: probe ${x.diff} ms, applied ${x.applied} ms`,
      ).toBeLessThanOrEqual(0.05);
    }
    // the report says it in words too
    const md = await readFile(join(dir, 'reports', `run=${r.runId}`, 'summary.md'), 'utf8');
    expect(md).toContain('E − D-NLB');
  });
});
