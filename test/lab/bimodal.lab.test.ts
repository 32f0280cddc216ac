/**
 * A bimodal lab path through the pipeline (needs root): path F of the seed-000 profile mixes
 * two delays in the NFQUEUE helper (70 % of round trips at 2 ms, 30 % at 6 ms), and the run's
 * summary must report exactly two modes near them with shares near the mix, a multimodal path
 * note, and the histogram and CDF of the distribution. Own prefix; nothing left afterwards.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Summary } from '../../core/run-summary.js';
import { silentLogger } from '../../functions/log.js';
import { createLabPorts } from '../../lab/index.js';
import { labAvailable, labDown, labUp } from '../../lab/lab.js';
import { seed000Profile } from '../../lab/profiles/seed-000-profile.js';
import { listNamespaces } from '../../lab/sys.js';
import { runLocal } from '../../local/local-driver.js';
import { ROOT } from '../helpers/repo.js';

const P = 'pb-tm-';
const OPTS = { prefix: P };
const f = seed000Profile().paths.find((p) => p.id === 'F')!;
let dir: string;

beforeAll(async () => {
  const a = await labAvailable();
  expect(a, a.reason).toEqual({ ok: true });
  await labDown(OPTS);
  // Calibration tunes p50s (the 2 ms mode here); the start values already put F's two delays
  // within the bare topology's ~0.1 ms of 2 and 6 ms, which is what this test is about.
  await labUp({ ...OPTS, calibrate: false, delay: 'nfqueue' });
  dir = await mkdtemp(join(tmpdir(), 'pathbench-lab-bimodal-'));
}, 240_000);

afterAll(async () => {
  await labDown(OPTS);
  await rm(dir, { recursive: true, force: true });
  expect((await listNamespaces()).filter((n) => n.startsWith(P))).toEqual([]);
});

describe('a bimodal lab path', () => {
  it('reports two modes near the two delays, with shares near the mix', async () => {
    // plans/lab-bimodal.json, on this test's own namespaces and with a shorter probe
    const plan = JSON.parse(await readFile(join(ROOT, 'plans', 'lab-bimodal.json'), 'utf8'));
    plan.defaults.client.instanceId = `${P}client`;
    plan.defaults.probes[0].count = 400;
    expect(plan.paths[0].target.host).toBe(f.targetIp);
    const ports = await createLabPorts(OPTS);
    const r = await runLocal({
      plan,
      dataDir: dir,
      runId: 'bimodal',
      log: silentLogger,
      fleet: ports.fleet,
      routes: ports.routes,
      wrap: ports.wrap,
    });
    expect(r.execution.status).toBe('SUCCEEDED');
    const s = r.summary as Summary;
    const path = s.paths[0];
    const result = path.results.find((x) => x.metric === 'connect_rtt_ms')!;
    expect(result.n).toBeGreaterThanOrEqual(390);
    const modes = result.modes ?? [];
    expect(modes.length, JSON.stringify(modes)).toBe(2);
    const [fast, slow] = modes;
    // near 2 and 6 ms: the bins are ~6 % wide, the bare topology adds ~0.1 ms
    expect(fast.at).toBeGreaterThan(f.rttMs * 0.9);
    expect(fast.at).toBeLessThan(f.rttMs * 1.15);
    expect(slow.at).toBeGreaterThan(f.mix!.rttMs * 0.9);
    expect(slow.at).toBeLessThan(f.mix!.rttMs * 1.1);
    // shares near the mix: 400 draws of a 30 % coin have a standard deviation of 2.3 points
    expect(slow.share).toBeGreaterThan(f.mix!.share - 0.08);
    expect(slow.share).toBeLessThan(f.mix!.share + 0.08);
    expect(fast.share + slow.share).toBeCloseTo(1, 9);
    expect(path.notes).toEqual(
      expect.arrayContaining([expect.stringMatching(/^tcp-connect connect_rtt_ms is multimodal: 2 modes at /)]),
    );
    const d = s.distributions?.find((x) => x.path === 'F' && x.metric === 'connect_rtt_ms');
    expect(d?.bins.reduce((a, b) => a + b.count, 0)).toBe(result.n);
    expect(d?.cdf.length).toBe(100);
    // the p50 sits in the fast mode, the p95 in the slow one
    expect(result.p50).toBeLessThan(f.rttMs * 1.15);
    expect(result.p95).toBeGreaterThan(f.mix!.rttMs * 0.9);
    console.log(
      `bimodal lab path F: n ${result.n}, modes ${modes.map((m) => `${m.at.toFixed(3)} ms (${(m.share * 100).toFixed(1)} %)`).join(', ')}; p50 ${result.p50} p95 ${result.p95}; notes: ${JSON.stringify(path.notes)}`,
    );
  }, 240_000);
});
