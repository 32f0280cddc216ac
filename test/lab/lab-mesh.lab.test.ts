/**
 * The lab mesh through the whole pipeline (needs root): six region namespaces (lab profile
 * `mesh`, lab/lab-mesh.ts), each pair's round trip the fibre one between the real cities, and
 * `plans/lab-mesh.json` (30 directed pairs in 10 rounds) on the mesh state machine with the local
 * runner's Distributed Map emulation. Checks every pair's TCP-connect p50 against its emulated
 * round trip (±5 %), the latency-vs-distance fit (r ≥ 0.9), and that no namespace was in two
 * tests at once. Short probes (60 connects, 1 s iperf3 a pair); own prefix; nothing left afterwards.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Summary } from '../../core/run-summary.js';
import { labAvailable, labDown, labUp } from '../../lab/lab.js';
import { LAB_MESH_REGIONS } from '../../lab/lab-mesh.js';
import { listNamespaces } from '../../lab/sys.js';
import { runLabMesh } from '../../scripts/bench/lab-mesh.bench.js';
import { overlaps } from '../../scripts/bench/mesh.bench.js';

const P = 'pb-tm-';
const OPTS = { prefix: P };
let dir: string;

beforeAll(async () => {
  const a = await labAvailable();
  expect(a, a.reason).toEqual({ ok: true });
  await labDown(OPTS);
  await labUp({ ...OPTS, profile: 'mesh', delay: 'nfqueue' });
  dir = await mkdtemp(join(tmpdir(), 'pathbench-lab-mesh-'));
}, 240_000);

afterAll(async () => {
  await labDown(OPTS);
  if (dir) await rm(dir, { recursive: true, force: true });
  expect((await listNamespaces()).filter((n) => n.startsWith(P))).toEqual([]);
});

describe('the lab mesh', () => {
  it('recovers every pair’s emulated round trip within 5 % and latency linear in distance', async () => {
    const run = await runLabMesh({ prefix: P, dataDir: dir });
    // The pairs' child executions (the summary's queries are children of SummaryQueries).
    const pairs = run.result.execution.children.filter((c) => c.state === 'MeasureRound');
    console.log(run.lines.join('\n'));
    const s = run.result.summary as Summary;
    const failed = (s?.paths ?? []).filter((p) => p.status !== 'succeeded');
    expect(run.result.execution.status, JSON.stringify({ error: run.result.execution.error, failed })).toBe(
      'SUCCEEDED',
    );
    // rounds ran as Distributed Map child executions, one per directed pair
    expect(pairs.length).toBe(30);
    expect(run.mesh?.regions).toEqual([...LAB_MESH_REGIONS].sort());
    expect(run.rows.length).toBe(30);
    for (const r of run.rows) {
      expect(r.measuredMs, r.path).not.toBeNull();
      expect(Math.abs(r.error!), `${r.path}: measured ${r.measuredMs} ms, emulated ${r.emulatedMs} ms`).toBeLessThan(
        0.05,
      );
    }
    const fit = run.mesh!.latencyVsDistance!;
    expect(fit.n).toBe(30);
    expect(fit.r).toBeGreaterThanOrEqual(0.9);
    // every pair measured throughput too (the throughput-vs-RTT fit has its points)
    expect(run.mesh!.throughputVsInverseRtt?.n).toBe(30);
    // no namespace in two tests at once, from the event log
    const byPath = new Map(run.mesh!.pairs.map((p) => [p.path, p]));
    const sitesOf = (c: (typeof pairs)[number]) => {
      const begin = c.events.find((e) => e.type === 'StateEntered') as unknown as {
        state?: { input?: { path?: { id?: string } } };
      };
      const p = byPath.get(begin?.state?.input?.path?.id ?? '');
      return p ? [p.from, p.to] : [];
    };
    expect(pairs.every((c) => sitesOf(c).length === 2)).toBe(true);
    expect(overlaps(pairs, sitesOf)).toBe(0);
  }, 300_000);
});
