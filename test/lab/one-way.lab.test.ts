/**
 * One-way delay against the lab's ground truth (needs root): the one-way profile holds each
 * direction of its FWD and REV paths on a queue of its own (80 % of FWD's added delay on the way
 * out, 90 % of REV's on the way back, A symmetric), and the NFQUEUE helper logs the delay it
 * applied to every packet. plans/lab-one-way.json's pingpong runs through the pipeline; every
 * path's one-way figures must carry no clock error (one kernel), match the asymmetry the helper
 * applied within 25 µs, and exceed each direction's applied delay by no more than the bare
 * topology's one-way part. Own prefix; nothing left afterwards.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Summary } from '../../core/run-summary.js';
import { median } from '../../core/stats.js';
import { silentLogger } from '../../functions/log.js';
import { appliedLogPath, readAppliedWindow } from '../../lab/applied-delay.js';
import { createLabPorts } from '../../lab/index.js';
import { labAvailable, labDown, labUp } from '../../lab/lab.js';
import { defaultStateDir } from '../../lab/lab-state.js';
import { oneWayProfile } from '../../lab/profiles/one-way-profile.js';
import { listNamespaces } from '../../lab/sys.js';
import { runLocal } from '../../local/local-driver.js';
import { ROOT } from '../helpers/repo.js';

const P = 'pb-ow-';
const OPTS = { prefix: P };
const profile = oneWayProfile();
let dir: string;

beforeAll(async () => {
  const a = await labAvailable();
  expect(a, a.reason).toEqual({ ok: true });
  await labDown(OPTS);
  await labUp({ ...OPTS, profile: 'one-way' });
  dir = await mkdtemp(join(tmpdir(), 'pathbench-lab-one-way-'));
}, 240_000);

afterAll(async () => {
  await labDown(OPTS);
  await rm(dir, { recursive: true, force: true });
  expect((await listNamespaces()).filter((n) => n.startsWith(P))).toEqual([]);
});

describe('one-way delay in the lab', () => {
  it("reads each direction's delay as the helper applied it, with no clock error", async () => {
    // plans/lab-one-way.json on this test's own namespaces, with a shorter series
    const plan = JSON.parse(await readFile(join(ROOT, 'plans', 'lab-one-way.json'), 'utf8'));
    plan.defaults.client.instanceId = `${P}client`;
    plan.defaults.probes[0].count = 600;
    const ports = await createLabPorts(OPTS);
    const from = Date.now();
    const r = await runLocal({
      plan,
      dataDir: dir,
      runId: 'one-way',
      log: silentLogger,
      fleet: ports.fleet,
      routes: ports.routes,
      wrap: ports.wrap,
    });
    expect(r.execution.status).toBe('SUCCEEDED');
    const records = readAppliedWindow(appliedLogPath(defaultStateDir(P), 'router'), from, Date.now());
    const clientEnd = profile.links.flatMap((l) => [l.a, l.b]).find((end) => end.role === 'client');
    const client = clientEnd!.addr.split('/')[0];
    const s = r.summary as Summary;
    const lines: string[] = [];
    for (const def of profile.paths) {
      // The truth: the median delay the helper applied to this path's packets, each way.
      const appliedUs = (src: string, dst: string) =>
        median(records.filter((x) => x.src === src && x.dst === dst).map((x) => x.appliedNs / 1000));
      const truth = { fwd: appliedUs(client, def.targetIp), rev: appliedUs(def.targetIp, client) };
      const result = s.paths.find((p) => p.id === def.id)?.results.find((x) => x.metric === 'rtt_us');
      const ow = result?.oneWay;
      expect(ow, def.id).toBeDefined();
      expect(ow?.clock_error_us).toBe(0);
      expect(ow?.n).toBeGreaterThanOrEqual(590);
      const [fwd, rev] = [ow?.fwd_p50_us as number, ow?.rev_p50_us as number];
      lines.push(
        `${def.id}: fwd ${fwd.toFixed(1)} µs (applied ${truth.fwd.toFixed(1)}), rev ${rev.toFixed(1)} µs (applied ${truth.rev.toFixed(1)})`,
      );
      // The asymmetry, which no symmetric split of a round trip can show (a split would miss it
      // by all of it, 1150 µs on FWD): within 25 µs. The bare topology's part differs by
      // direction (the way back also holds the server's send path); 3–4 µs on a quiet host,
      // 12 µs measured on a busy one.
      expect(Math.abs(fwd - rev - (truth.fwd - truth.rev)), lines.at(-1)).toBeLessThanOrEqual(25);
      // Each way: the applied delay plus the bare topology's part (veths, forwarding; the way
      // back also the server's send path), never less, and tens of µs at most.
      for (const [got, want] of [
        [fwd, truth.fwd],
        [rev, truth.rev],
      ]) {
        expect(got - want, lines.at(-1)).toBeGreaterThanOrEqual(0);
        expect(got - want, lines.at(-1)).toBeLessThan(40);
      }
    }
    // The profile's shares, as the helper applied them (80 % out on FWD, 90 % back on REV).
    const fwdPath = s.paths.find((p) => p.id === 'FWD')?.results.find((x) => x.metric === 'rtt_us')?.oneWay;
    const revPath = s.paths.find((p) => p.id === 'REV')?.results.find((x) => x.metric === 'rtt_us')?.oneWay;
    expect(fwdPath!.fwd_p50_us!).toBeGreaterThan(3 * fwdPath!.rev_p50_us!);
    expect(revPath!.rev_p50_us!).toBeGreaterThan(5 * revPath!.fwd_p50_us!);
    console.log(`one-way lab: ${lines.join('; ')}`);
  }, 240_000);
});
