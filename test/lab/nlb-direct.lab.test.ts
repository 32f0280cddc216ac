/**
 * The lab's seed-000-nlb profile (needs root), one lab for two plans through the real ASL, agent
 * and adapters:
 * - Seed 000 §6.2: plans/lab-seed-000-nlb.json measures C and D to the Osaka instance and to the
 *   NLB in front of it (C-NLB, D-NLB: the lab's NLB is a second Osaka address with its own delay
 *   on each hop), and E, the cross-region PrivateLink endpoint. The report separates the NLB's
 *   cost from PrivateLink's own: C-NLB − C, D-NLB − D and E − D-NLB are each `slower` (also in a
 *   lab so steady that every connect around both p50s read the same microsecond), and each p50
 *   difference is the difference of what the lab applied to the two paths, within 50 µs.
 * - ICMP: plans/lab-ping.json pings A–E and C-NLB (iputils ping in the client namespace) beside a
 *   TCP connect. Where ICMP passes, ping's p50 is the path's round trip: within max(3 %, 75 µs)
 *   of the tcp-connect p50 and of what the lab applied. Through PrivateLink (E) and the NLB
 *   (C-NLB) no echo comes back, as seed 000 found: loss 1, not a failure, and TCP still measures.
 * Own prefix; nothing left afterwards.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labAvailable, labDown, labUp } from '../../lab/lab.js';
import { listNamespaces } from '../../lab/sys.js';
import { runOnLab } from '../helpers/lab-run.js';
import { ROOT } from '../helpers/repo.js';

const P = 'pb-nl-';
const OPTS = { prefix: P };
let dir: string;

beforeAll(async () => {
  const a = await labAvailable();
  expect(a, a.reason).toEqual({ ok: true });
  await labDown(OPTS);
  await labUp({ ...OPTS, profile: 'seed-000-nlb', delay: 'nfqueue' });
  dir = await mkdtemp(join(tmpdir(), 'pathbench-lab-nlb-'));
}, 300_000);

afterAll(async () => {
  await labDown(OPTS);
  await rm(dir, { recursive: true, force: true });
  expect((await listNamespaces()).filter((n) => n.startsWith(P))).toEqual([]);
});

/** A shipped plan on this test's lab (test/helpers/lab-run.ts). */
const runPlan = async (file: string) => runOnLab(OPTS, { plan: await labPlan(file), dataDir: dir });

/** A shipped plan, on this test's namespaces. */
async function labPlan(file: string) {
  const plan = JSON.parse(await readFile(join(ROOT, 'plans', file), 'utf8'));
  plan.defaults.client.instanceId = `${P}client`;
  for (const p of plan.paths) for (const r of p.routes ?? []) r.routeTableId = r.routeTableId.replace(/^pb-/, P);
  return plan;
}

/** Seed 000 §6.2's own differences at p50, ms (C-NLB and D-NLB were measured in another session than 6.1). */
const SEED = { 'C-NLB − C': 1.21, 'D-NLB − D': 0.71, 'E − D-NLB': 13.32 - 11.59 };

describe('seed 000 §6.2: the NLB’s cost apart from PrivateLink’s', () => {
  it('reports C-NLB − C, D-NLB − D and E − D-NLB, each the difference the lab applied', {
    timeout: 240_000,
  }, async () => {
    const { runId, summary: s } = await runPlan('lab-seed-000-nlb.json');
    expect(s.paths.map((p) => [p.id, p.status])).toEqual(
      ['C', 'C-NLB', 'D', 'D-NLB', 'E'].map((id) => [id, 'succeeded']),
    );
    const achieved = new Map(s.paths.map((p) => [p.id, p.lab?.achievedRttMs]));
    const rows = (s.comparisons ?? [])
      .filter((c) => c.probe === 'tcp-connect' && c.metric === 'connect_rtt_ms')
      .map((c) => {
        const applied = (achieved.get(c.path) ?? Number.NaN) - (achieved.get(c.baseline) ?? Number.NaN);
        const verdict = `${c.p50.verdict}${c.p50.why ? `: ${c.p50.why}` : ''}`;
        return { name: `${c.path} − ${c.baseline}`, diff: c.p50.diff, verdict, applied };
      });
    console.log('comparison   p50 diff  applied  seed 000');
    for (const x of rows)
      console.log(
        `${x.name.padEnd(11)} ${x.diff.toFixed(3).padStart(9)} ${x.applied.toFixed(3).padStart(8)} ${SEED[x.name as keyof typeof SEED].toFixed(2).padStart(9)}  ${x.verdict}`,
      );
    expect(rows.map((x) => x.name)).toEqual(Object.keys(SEED));
    for (const x of rows) {
      // `slower`, also when the lab is so steady that every connect around both p50s read the same
      // microsecond (the kernel's RTT is in µs): a figure is known to ± half of one (atResolution)
      expect(x.verdict, x.name).toBe('slower');
      // Within 50 µs or 10 % of it: the client's own link (outside the helper's view) can move a
      // whole path's 3 s of connects on a shared host — once, D read 61 µs above what the helper
      // applied while C, D-NLB and E agreed within 13 µs (D-NLB − D: 0.620 against 0.681 ms).
      expect(
        Math.abs(x.diff - x.applied),
        `${x.name}: probe ${x.diff} ms, applied ${x.applied} ms`,
      ).toBeLessThanOrEqual(Math.max(0.05, 0.1 * x.applied));
    }
    // the report says it in words too
    const md = await readFile(join(dir, 'reports', `run=${runId}`, 'summary.md'), 'utf8');
    expect(md).toContain('E − D-NLB');
  });
});

describe('the ping probe in the lab', () => {
  it('measures each path’s round trip where ICMP passes, and 100 % loss through PrivateLink and the NLB', {
    timeout: 240_000,
  }, async () => {
    const { summary: s } = await runPlan('lab-ping.json');
    const rows = s.paths.map((p) => {
      const ping = p.results.find((x) => x.probe === 'ping');
      const tcp = p.results.find((x) => x.probe === 'tcp-connect');
      return { id: p.id, status: p.status, ping, tcp, achieved: p.lab?.achievedRttMs };
    });
    console.log('path   ping p50  loss   tcp p50  applied');
    for (const x of rows)
      console.log(
        `${x.id.padEnd(6)} ${String(x.ping?.p50?.toFixed(3) ?? '—').padStart(8)}  ${String(x.ping?.loss ?? '—').padStart(4)}  ${x.tcp?.p50?.toFixed(3).padStart(8)}  ${x.achieved?.toFixed(3)}`,
      );
    expect(rows.map((x) => x.id)).toEqual(['A', 'B', 'C', 'C-NLB', 'D', 'E']);
    for (const x of rows) {
      expect(x.status, x.id).toBe('succeeded');
      expect(x.tcp?.p50, `${x.id} tcp-connect`).toBeGreaterThan(0);
      if (x.id === 'E' || x.id === 'C-NLB') {
        // no echo crosses an NLB or PrivateLink: every request lost, none measured
        expect(x.ping?.loss, x.id).toBe(1);
        expect(x.ping?.p50 ?? null, x.id).toBeNull();
        continue;
      }
      expect(x.ping?.loss, x.id).toBe(0);
      const p50 = x.ping?.p50 as number;
      const tcp = x.tcp?.p50 as number;
      // ping's own host part (ICMP through the kernel, iputils' stamps) moves a sub-ms round trip by
      // tens of µs either way (A: −26 to +32 µs over four runs here): 75 µs, or 3 %
      const near = (a: number, b: number) => Math.abs(a - b) <= Math.max(0.03 * b, 0.075);
      expect(near(p50, tcp), `${x.id}: ping ${p50} ms, tcp-connect ${tcp} ms`).toBe(true);
      if (x.achieved !== undefined)
        expect(near(p50, x.achieved), `${x.id}: ping ${p50} ms, applied ${x.achieved} ms`).toBe(true);
    }
  });
});
