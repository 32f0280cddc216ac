/**
 * Regression detection on the lab (needs root): the seed-000 lab plan (paths A–C, short probes)
 * run several times through the real ASL, agent and adapters, one data directory for all of
 * them, so each run's summary step judges it against the earlier ones. Path B fails in one
 * clean run (the agent runs, then its command exits non-zero: samples arrive, status failed).
 * Then 2 ms are added to path C's emulated round trip (its p50 is ~9 ms: +22 %, well beyond the
 * ±5 % band a busy machine gives it), without telling the pipeline: the next run must flag C's
 * p50 as a regression and no other path as one (an improvement reported elsewhere is printed,
 * not an alarm: a busy CI run once read B 6.5 % faster); over the clean runs before it nothing is flagged; the
 * failed run of B is not in B's baseline; C's p99 (300 samples: a thin tail) is not judged, for
 * that reason alone. The plan's regression floor (0.1 ms, every lab plan's: sub-ms lab
 * paths share two CPUs with everything else, their medians move by up to ~0.05 ms between runs)
 * travels from the plan to the judgement. Own prefix; nothing left afterwards.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientRef } from '../../core/resolved-plan.js';
import type { Summary, TrendSeries } from '../../core/run-summary.js';
import { readTrendPoints, type TrendPoint } from '../../core/trend-point.js';
import { describeRegression, judge, REGRESSION_RULE } from '../../functions/pipeline/regressions.js';
import { labAvailable, labDown, labShiftDelay, labUp } from '../../lab/lab.js';
import { listNamespaces } from '../../lab/sys.js';
import { DirStore } from '../../local/dir-store.js';
import { runOnLab } from '../helpers/lab-run.js';
import { ROOT } from '../helpers/repo.js';

const P = 'pb-tr-';
const OPTS = { prefix: P };
const CLEAN_RUNS = 6;
/** The clean run in which path B fails (1-based); runs 6.. are judged (5 clean runs before them). */
const B_FAILS_IN = 3;
let dir: string;

beforeAll(async () => {
  const a = await labAvailable();
  expect(a, a.reason).toEqual({ ok: true });
  await labDown(OPTS);
  // The delays as seeded are what a "real" path has here; calibration is lab.test's business.
  await labUp({ ...OPTS, calibrate: false });
  dir = await mkdtemp(join(tmpdir(), 'pathbench-lab-regressions-'));
}, 240_000);

afterAll(async () => {
  await labDown(OPTS);
  await rm(dir, { recursive: true, force: true });
  expect((await listNamespaces()).filter((n) => n.startsWith(P))).toEqual([]);
});

/**
 * plans/lab-seed-000-no-reboot.json on this test's namespaces, paths A–C only (A a quiet same-AZ
 * path, B the one that fails, C the one shifted: D and E would add only run time), with short
 * latency probes only.
 */
async function labPlan() {
  const plan = JSON.parse(await readFile(join(ROOT, 'plans', 'lab-seed-000-no-reboot.json'), 'utf8'));
  plan.name = 'lab-regressions';
  const kept = ['A', 'B', 'C'];
  plan.paths = plan.paths.filter((p: { id: string }) => kept.includes(p.id));
  plan.compare = (plan.compare ?? []).filter(
    (c: { path: string; baseline?: string }) => kept.includes(c.path) && (!c.baseline || kept.includes(c.baseline)),
  );
  plan.defaults.client.instanceId = `${P}client`;
  // 300 connects, no pause: p50 is judged; p99 has 3 samples beyond it (a thin tail), so it is
  // not. The figure is the kernel's tcpi_rtt, so the shared machine's load does not move it.
  plan.defaults.probes = [{ kind: 'tcp-connect', count: 300, intervalMs: 0, timeoutMs: 1000 }];
  for (const p of plan.paths) for (const r of p.routes ?? []) r.routeTableId = r.routeTableId.replace(/^pb-/, P);
  return plan;
}

/** The lab's own wrap, and for `failPath` the agent's command exits 3 after the agent has run. */
function wrapper(labWrap: (argv: string[], c: ClientRef) => string[], failPath?: string) {
  return (argv: string[], client: ClientRef) => {
    const inner = labWrap(argv, client);
    const spec = JSON.parse(readFileSync(argv[argv.indexOf('--spec') + 1], 'utf8')) as { pathId: string };
    return spec.pathId === failPath ? ['sh', '-c', '"$@"; exit 3', 'sh', ...inner] : inner;
  };
}

async function run(runId: string, failPath?: string): Promise<Summary> {
  // test/helpers/lab-run.ts: the lab's truth (the shift is checked against it), 0.25 s polls
  const wrap = (labWrap: Parameters<typeof wrapper>[0]) => wrapper(labWrap, failPath);
  return (await runOnLab(OPTS, { plan: await labPlan(), dataDir: dir, runId, wrap })).summary;
}

const series = (s: Summary, path: string, probe: string, pct: 'p50' | 'p99') =>
  s.trend?.find((t) => t.path === path && t.probe === probe && t.percentile === pct) as TrendSeries;

describe('regression detection over repeated lab runs', () => {
  const clean: Summary[] = [];

  it(`flags nothing over ${CLEAN_RUNS} clean runs; a failed path enters no baseline`, {
    timeout: 240_000,
  }, async () => {
    for (let i = 1; i <= CLEAN_RUNS; i++) {
      const s = await run(`clean-${i}`, i === B_FAILS_IN ? 'B' : undefined);
      clean.push(s);
      const b = s.paths.find((p) => p.id === 'B')!;
      if (i === B_FAILS_IN) {
        // the failed path's samples arrived (it measured, then its command failed) ...
        expect(b.status).toBe('failed');
        expect(b.results.find((r) => r.probe === 'tcp-connect')?.n).toBeGreaterThan(0);
      } else expect(b.status).toBe('succeeded');
      // ... and no run before the shift raises a flag (printed for the closing note)
      console.log(
        `clean run ${i}: ${s.regressions?.length ?? 0} flags ${JSON.stringify(s.regressions?.map(describeRegression))}`,
      );
    }
    // the plan's floor reached the summary step and the trend points
    expect(clean.map((s) => s.regressionSettings)).toEqual(clean.map(() => ({ minAbsoluteMs: 0.1 })));
    const alarms = clean.flatMap((s) => s.regressions ?? []);
    expect(alarms.map(describeRegression)).toEqual([]);
    // runs from the 6th on were judged: every path but B has a band in run 6, B only once it has 5 clean runs
    const judged = clean[REGRESSION_RULE.minRuns];
    for (const id of ['A', 'C']) expect(series(judged, id, 'tcp-connect', 'p50').band, id).toBeDefined();
    expect(series(judged, 'B', 'tcp-connect', 'p50').band).toBeUndefined();
    const last = clean[CLEAN_RUNS - 1];
    const bSeries = series(last, 'B', 'tcp-connect', 'p50');
    const failedPoint = bSeries.points.find((p) => p.runId === `clean-${B_FAILS_IN}`);
    expect(failedPoint?.excluded).toBe('path failed');
    expect(failedPoint?.value).not.toBeNull();
    // The failed run is in no band of B's: judging the next run with or without it gives B the same band.
    const points = await readTrendPoints(new DirStore(dir), 'lab-regressions');
    const next = points.find((t) => t.runId === `clean-${CLEAN_RUNS}`)!;
    const before = points.filter((t) => t.runId !== next.runId);
    const bandOfB = (history: TrendPoint[]) =>
      judge(next, history).trend.find((t) => t.path === 'B' && t.probe === 'tcp-connect' && t.percentile === 'p50')
        ?.band;
    expect(bandOfB(before.filter((t) => t.runId !== `clean-${B_FAILS_IN}`))).toEqual(bandOfB(before));
    const cleanB = bSeries.points.slice(0, -1).filter((p) => !p.excluded);
    expect(cleanB).toHaveLength(CLEAN_RUNS - 2);
  });

  it('after +2 ms on path C, the next run flags C at p50 and no other path', { timeout: 90_000 }, async () => {
    expect(clean).toHaveLength(CLEAN_RUNS);
    await labShiftDelay(OPTS, 'C', 2000);
    const s = await run('shifted');
    const all = s.regressions ?? [];
    console.log(`shifted run: ${all.map(describeRegression).join('; ')}`);
    const flags = all.filter((g) => g.direction === 'regression');
    expect(flags.map((g) => [g.path, g.probe, g.percentile, g.direction])).toEqual([
      ['C', 'tcp-connect', 'p50', 'regression'],
    ]);
    // C's own report is the regression, not an improvement beside it
    expect(all.filter((g) => g.path === 'C').map((g) => g.direction)).toEqual(['regression']);
    const [p50] = flags;
    expect(p50.runsInBaseline).toBe(CLEAN_RUNS);
    // C's p50 moved as the lab moved it: by the change of its helper's achieved round trip (this
    // run against the clean runs' median), not by the 2 ms asked for (a loaded machine moves the
    // helper's release; CI once read +0.55 ms against the 1 ms asked). The judgement may also take
    // out a whole-run shift of 5 % or more (runShift_pct), so the raw move of C's p50 is compared.
    const medianOf = (v: number[]) => {
      const x = [...v].sort((a, b) => a - b);
      return x.length % 2 ? x[(x.length - 1) / 2] : (x[x.length / 2 - 1] + x[x.length / 2]) / 2;
    };
    const ofC = (x: Summary) => x.paths.find((p) => p.id === 'C')!;
    const p50C = (x: Summary) =>
      ofC(x).results.find((r) => r.probe === 'tcp-connect' && r.metric === 'connect_rtt_ms')?.p50 ?? Number.NaN;
    const achievedC = (x: Summary) => ofC(x).lab?.achievedRttMs ?? Number.NaN;
    const applied = achievedC(s) - medianOf(clean.map(achievedC));
    const measured = p50C(s) - medianOf(clean.map(p50C));
    console.log(
      `C: p50 moved ${measured.toFixed(3)} ms, the lab applied ${applied.toFixed(3)} ms, judged ${(p50.value - p50.baseline).toFixed(3)} ms above its baseline${p50.runShift_pct === undefined ? '' : ` after a run shift of ${p50.runShift_pct.toFixed(1)} %`}`,
    );
    expect(applied, 'the lab moved C by enough to be judged').toBeGreaterThan(0.3);
    expect(Math.abs(measured - applied)).toBeLessThan(0.1);
    // and with no whole-run shift taken out (none this large happens here), the judgement says as much
    if (p50.runShift_pct === undefined) expect(Math.abs(p50.value - p50.baseline - applied)).toBeLessThan(0.15);
    // C's p99 moved by as much, but 300 samples leave a thin tail there: not judged ...
    const c = s.paths.find((p) => p.id === 'C')!.results[0];
    expect(c.flags).toContain('thin-tail:p99');
    expect(series(s, 'C', 'tcp-connect', 'p99').points.at(-1)?.excluded).toBe('thin tail');
    expect(series(s, 'C', 'tcp-connect', 'p99').band).toBeUndefined();
    // ... and the thin tail is the only reason: the same points without it would be flagged at p99
    const points = await readTrendPoints(new DirStore(dir), 'lab-regressions');
    const strip = (t: TrendPoint): TrendPoint => ({
      ...t,
      paths: t.paths.map((p) => ({
        ...p,
        results: p.results.map((r) => ({ ...r, flags: r.flags.filter((f) => f !== 'thin-tail:p99') })),
      })),
    });
    // (judged, that is: with a band and this run's point in it. Whether a 300-sample p99 would then
    // be flagged is up to its noise, the reason it is not judged: asserting a flag here was flaky.)
    const now = strip(points.find((t) => t.runId === 'shifted')!);
    const unthinned = judge(now, points.filter((t) => t.runId !== 'shifted').map(strip)).trend.find(
      (t) => t.path === 'C' && t.probe === 'tcp-connect' && t.percentile === 'p99',
    );
    expect(unthinned?.band).toBeDefined();
    expect(unthinned?.points.at(-1)).toMatchObject({ runId: 'shifted' });
    expect(unthinned?.points.at(-1)?.excluded).toBeUndefined();
    // the report shows it
    const md = await readFile(join(dir, 'reports', 'run=shifted', 'summary.md'), 'utf8');
    expect(md).toMatch(/## Regressions/);
  });
});
