/**
 * Regression detection across runs of one plan: the run's common shift taken out, each path's
 * band learned from its own past, the run's own interval wholly outside it, persistence, and
 * what never enters a baseline (failed path, credit-flagged result, thin-tail percentile, a path
 * measured differently).
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { keys } from '../../../core/keys.js';
import type { ResolvedPlan } from '../../../core/resolved-plan.js';
import type { Summary } from '../../../core/run-summary.js';
import { readTrendPoints, type TrendPoint, type TrendResult } from '../../../core/trend-point.js';
import {
  addRegressions,
  describeRegression,
  exclusion,
  judge,
  judgedPercentiles,
  mad,
  median,
  planFingerprint,
  REGRESSION_RULE,
  ruleFor,
} from '../../../functions/pipeline/regressions.js';
import { DirStore } from '../../../local/dir-store.js';
import { HTTP_PAIR_METRIC } from '../../../probes/http/http.schema.js';
import { raised, replayShifts } from '../../../scripts/bench/regressions.bench.js';
import { prng, tempDataDir } from '../../helpers/samples.js';

const rtt = (p50: number, over: Partial<TrendResult> = {}): TrendResult => ({
  probe: 'tcp-connect',
  metric: 'connect_rtt_ms',
  unit: 'ms',
  n: 2000,
  p50,
  p99: p50 * 1.5,
  ci95: { p50: [p50 - 0.02, p50 + 0.03], p99: [p50 * 1.5 - 0.1, p50 * 1.5 + 0.2] },
  flags: [],
  ...over,
});
const tput = (p50: number, flags: string[] = []): TrendResult => ({
  probe: 'iperf3',
  metric: 'throughput_bps',
  unit: 'bit/s',
  n: 20,
  p50,
  p99: p50,
  ci95: { p50: [p50 * 0.99, p50 * 1.01], p99: [p50 * 0.98, p50 * 1.02] },
  flags: ['thin-tail:p99', ...flags],
});

/** A run of paths A (0.2 ms), B (1.6 ms), C (8.9 ms), each figure ±1 % noise (seeded). */
function run(i: number, rand: () => number, over: (id: string, r: TrendResult) => TrendResult = (_, r) => r) {
  const noise = () => 1 + (rand() - 0.5) * 0.02;
  const base: Record<string, number> = { A: 0.2, B: 1.6, C: 8.9 };
  return {
    runId: `run-${String(i).padStart(2, '0')}`,
    planName: 'lab',
    startedAt: new Date(Date.UTC(2026, 0, 1, i)).toISOString(),
    paths: Object.entries(base).map(([id, ms]) => ({
      id,
      status: 'succeeded',
      results: [over(id, rtt(ms * noise())), over(id, tput(9e9 * noise()))],
    })),
  } satisfies TrendPoint;
}

describe('median and MAD', () => {
  it('are the middle value and the middle absolute deviation', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(mad([1, 1, 2, 2, 4, 6, 9])).toBe(1);
  });
});

/** Every figure of a run's result scaled by `k` (a whole-run or path shift), intervals too. */
const scaled = (r: TrendResult, k: number): TrendResult => ({
  ...r,
  p50: (r.p50 as number) * k,
  p99: (r.p99 as number) * k,
  ci95: {
    p50: [r.ci95!.p50![0] * k, r.ci95!.p50![1] * k],
    p99: [r.ci95!.p99![0] * k, r.ci95!.p99![1] * k],
  },
});
const latency = (r: TrendResult) => r.metric === 'connect_rtt_ms';
/** A result's p50 and p99 (and their intervals) moved by `ms`. */
const shiftedBy = (r: TrendResult, ms: number): Partial<TrendResult> => ({
  p50: (r.p50 as number) + ms,
  p99: (r.p99 as number) + ms,
  ci95: {
    p50: [r.ci95!.p50![0] + ms, r.ci95!.p50![1] + ms],
    p99: [r.ci95!.p99![0] + ms, r.ci95!.p99![1] + ms],
  },
});

describe('judge', () => {
  const rand = prng(14);
  const clean = Array.from({ length: 8 }, (_, i) => run(i, rand));

  it('flags nothing over clean runs, and judges from the fifth clean run on', () => {
    for (let i = 0; i < clean.length; i++) {
      const j = judge(clean[i], clean.slice(0, i));
      expect(j.regressions, clean[i].runId).toEqual([]);
      expect(j.runShifts, clean[i].runId).toEqual([]);
      const bands = j.trend.filter((t) => t.band).length;
      expect(bands > 0, clean[i].runId).toBe(i >= REGRESSION_RULE.minRuns);
    }
  });

  it('flags only C at p50 after +1 ms on C, with the figures', () => {
    const shifted = run(9, rand, (id, r) =>
      id === 'C' && latency(r)
        ? rtt((r.p50 as number) + 1, { p99: r.p99, ci95: { p50: [r.p50! + 0.98, r.p50! + 1.03], p99: r.ci95!.p99 } })
        : r,
    );
    const { regressions, trend, runShifts } = judge(shifted, clean);
    expect(runShifts).toEqual([]);
    expect(regressions).toHaveLength(1);
    const [g] = regressions;
    expect(g).toMatchObject({ path: 'C', probe: 'tcp-connect', metric: 'connect_rtt_ms', percentile: 'p50' });
    expect(g.direction).toBe('regression');
    expect(g.runsInBaseline).toBe(8);
    expect(g.value - g.baseline).toBeGreaterThan(0.9);
    expect(g.change_pct).toBeGreaterThan(10);
    expect(g.ci95[0]).toBeGreaterThan(g.band[1]);
    expect(describeRegression(g)).toMatch(
      /^C tcp-connect connect_rtt_ms p50 \d+\.\d{3} ms vs 8\.\d{3} \[.*\] over 8 runs \(\+1\d\.\d %, regression\)$/,
    );
    // the trend: the 8 earlier runs and this one, oldest first, with the band
    const c = trend.find((t) => t.path === 'C' && t.metric === 'connect_rtt_ms' && t.percentile === 'p50');
    expect(c?.points.map((p) => p.runId)).toEqual([...clean.map((x) => x.runId), 'run-09']);
    expect(c?.band).toEqual(g.band);
  });

  it("does not take a quiet path's jitter below the plan's share out of the others as a run shift", () => {
    // CI once read C's +1 ms as +0.55: A had read 3 % high, and the median of three deviations
    // (A +3 %, B ±0, C +11 %) made that the run's shift, taken out of C's 9 ms.
    const shifted = run(9, rand, (id, r) =>
      !latency(r)
        ? r
        : id === 'A'
          ? scaled(r, 1.03)
          : id === 'B'
            ? scaled(r, 1.025)
            : rtt((r.p50 as number) + 1, {
                p99: r.p99,
                ci95: { p50: [r.p50! + 0.98, r.p50! + 1.03], p99: r.ci95!.p99 },
              }),
    );
    const { regressions, runShifts } = judge(shifted, clean);
    expect(runShifts).toEqual([]);
    const c = regressions.find((g) => g.path === 'C' && g.percentile === 'p50');
    expect(c?.runShift_pct).toBeUndefined();
    expect(c!.value - c!.baseline).toBeGreaterThan(0.9);
    // a shift at the plan's share or above is still taken out (the next two cases)
  });

  it('reads a run where every path moved together as one run shift, said once, not as path changes', () => {
    const busy = run(9, rand, (_, r) => scaled(r, latency(r) ? 1.3 : 0.8));
    const { regressions, runShifts } = judge(busy, clean);
    expect(regressions).toEqual([]);
    const p50 = runShifts.find((x) => x.metric === 'connect_rtt_ms' && x.percentile === 'p50');
    expect(p50?.shift_pct).toBeGreaterThan(27);
    expect(p50?.shift_pct).toBeLessThan(33);
    expect(p50?.paths).toBe(3);
    expect(p50?.usual_pct[1]).toBeLessThan(10);
    expect(runShifts.find((x) => x.metric === 'throughput_bps')?.shift_pct).toBeLessThan(-15);
  });

  it('still finds the path that moved on top of a whole-run shift, judged after the shift', () => {
    const busy = run(9, rand, (id, r) => scaled(r, latency(r) ? (id === 'C' ? 1.3 * 1.12 : 1.3) : 1));
    const { regressions } = judge(busy, clean);
    expect(regressions.map((g) => [g.path, g.percentile, g.direction])).toEqual([
      ['C', 'p50', 'regression'],
      ['C', 'p99', 'regression'],
    ]);
    expect(regressions[0].runShift_pct).toBeGreaterThan(25);
    expect(regressions[0].change_pct).toBeGreaterThan(8);
    expect(regressions[0].change_pct).toBeLessThan(16);
  });

  it('reads a busy host as the same milliseconds on every path, and still finds a +10 % change of the middle path', () => {
    // The regressions bench's plan on a loaded host: A 0.4, B 1.25, C 3.3 ms, each run 0–0.25 ms
    // slower on every path (CPU hogs delay every round trip by about the same time) and ±0.5 %
    // of its own. Read as shares, A moved most and C least in every run, so the median of three
    // was always B's own deviation, and B's change was taken out as the run's shift (0 of 3).
    const r = prng(31);
    const base: Record<string, number> = { A: 0.4, B: 1.25, C: 3.3 };
    const busyRun = (i: number, extraB = 0): TrendPoint => {
      const host = r() * 0.25;
      return {
        runId: `host-${String(i).padStart(2, '0')}`,
        planName: 'busy',
        startedAt: new Date(Date.UTC(2026, 0, 2, i)).toISOString(),
        paths: Object.entries(base).map(([id, ms]) => {
          const v = (ms + host) * (1 + (r() - 0.5) * 0.01) + (id === 'B' ? extraB : 0);
          return {
            id,
            status: 'succeeded',
            results: [rtt(v, { ci95: { p50: [v - 0.01, v + 0.01], p99: [v, 2 * v] } })],
          };
        }),
      };
    };
    const history = Array.from({ length: 20 }, (_, i) => busyRun(i));
    for (let i = 0; i < 3; i++) {
      const shifted = judge(busyRun(30 + i, 0.125), history);
      expect(shifted.regressions.filter((g) => g.percentile === 'p50').map((g) => [g.path, g.direction])).toEqual([
        ['B', 'regression'],
      ]);
    }
    // a clean run on a busier host than ever: said once as the host's milliseconds, no path flagged
    const h = busyRun(40);
    const busier: TrendPoint = {
      ...h,
      paths: h.paths.map((p) => ({ ...p, results: p.results.map((x) => ({ ...x, ...shiftedBy(x, 0.6) })) })),
    };
    const j = judge(busier, history);
    expect(j.regressions.filter((g) => g.direction === 'regression')).toEqual([]);
    const shift = j.runShifts.find((x) => x.percentile === 'p50');
    expect(shift).toMatchObject({ model: 'additive', paths: 3 });
    expect(shift?.shift).toBeGreaterThan(0.55);
  });

  it("takes the run's shift from the plan's reference path when it names one", () => {
    // A (the reference) +30 %: every other path is judged after that shift, so B and C,
    // which did not move, read as faster than expected (improvements), and A is not judged.
    const refMoved = run(9, rand, (id, r) => (id === 'A' && latency(r) ? scaled(r, 1.3) : r));
    const j = judge({ ...refMoved, settings: { reference: 'A' } }, clean);
    expect(j.runShifts.find((x) => x.metric === 'connect_rtt_ms' && x.percentile === 'p50')).toMatchObject({
      reference: 'A',
    });
    expect(
      j.regressions.every((g) => g.path !== 'A' && (g.metric !== 'connect_rtt_ms' || g.direction === 'improvement')),
    ).toBe(true);
    // without a reference the median of three is the shift: only A moved, so A is the change
    expect(judge(refMoved, clean).regressions.map((g) => [g.path, g.direction])).toContainEqual(['A', 'regression']);
  });

  it('with two paths the shift cannot be told from a change: each path is judged on its own', () => {
    const two = (p: TrendPoint): TrendPoint => ({ ...p, paths: p.paths.filter((x) => x.id !== 'C') });
    const busy = two(run(9, rand, (_, r) => (latency(r) ? scaled(r, 1.3) : r)));
    const j = judge(busy, clean.map(two));
    expect(j.runShifts).toEqual([]);
    expect(j.regressions.filter((g) => g.percentile === 'p50').map((g) => g.path)).toEqual(['A', 'B']);
  });

  it('with persistence 2, reports a regression only the second run in a row it is seen; improvements at once', () => {
    const cShift = (i: number) =>
      run(i, rand, (id, r) =>
        id === 'C' && latency(r) ? scaled(r, 1.2) : id === 'A' && latency(r) ? scaled(r, 0.7) : r,
      );
    const settings = { persistence: 2 };
    const first = cShift(9);
    const j1 = judge({ ...first, settings }, clean);
    expect(j1.regressions.filter((g) => g.direction === 'regression')).toEqual([]);
    expect(j1.regressions.some((g) => g.path === 'A' && g.direction === 'improvement')).toBe(true);
    const second = cShift(10);
    const j2 = judge({ ...second, settings }, [...clean, { ...first, settings }]);
    expect(j2.regressions.filter((g) => g.direction === 'regression').map((g) => g.path)).toContain('C');
    expect(ruleFor({ persistence: 2 }).persistence).toBe(2);
  });

  it("applies the run's own settings (its plan's regression floor) over the rule", () => {
    const shifted = run(9, rand, (id, r) =>
      id === 'C' && latency(r)
        ? rtt((r.p50 as number) + 1, { p99: r.p99, ci95: { p50: [r.p50! + 0.98, r.p50! + 1.03], p99: r.ci95!.p99 } })
        : r,
    );
    expect(judge(shifted, clean).regressions).toHaveLength(1);
    // a 1.5 ms floor: the +1 ms shift is within the plan's noise, not a regression
    const floored = judge({ ...shifted, settings: { minAbsoluteMs: 1.5 } }, clean);
    expect(floored.regressions).toEqual([]);
    expect(floored.trend.find((t) => t.path === 'C' && t.percentile === 'p50')?.band?.[1]).toBeGreaterThan(9.4);
    expect(ruleFor({ minRelative: 0.2 })).toEqual({ ...REGRESSION_RULE, minRelative: 0.2 });
  });

  it('uses the last N clean runs and calls a faster run an improvement', () => {
    const faster = run(9, rand, (id, r) => (id === 'A' && latency(r) ? rtt(0.1) : r));
    const { regressions } = judge(faster, clean, { ...REGRESSION_RULE, runs: 6 });
    expect(regressions.map((g) => [g.path, g.percentile, g.direction, g.runsInBaseline])).toEqual([
      ['A', 'p50', 'improvement', 6],
    ]);
    // p99 moved as far, but its own interval ([0.05, 0.35] ms) reaches into the band: not judged a change
  });

  it('judges throughput at p50 only, higher being better', () => {
    expect(judgedPercentiles('throughput_bps', 'bit/s')).toEqual(['p50']);
    expect(judgedPercentiles('connect_rtt_ms', 'ms')).toEqual(['p50', 'p99']);
    expect(judgedPercentiles('mtu_bytes', 'bytes')).toEqual([]);
    const slow = run(9, rand, (id, r) => (id === 'B' && r.metric === 'throughput_bps' ? tput(4e9) : r));
    expect(judge(slow, clean).regressions.map((g) => [g.path, g.metric, g.percentile, g.direction])).toEqual([
      ['B', 'throughput_bps', 'p50', 'regression'],
    ]);
  });

  it('does not judge with fewer clean runs than the minimum', () => {
    const shifted = run(9, rand, (id, r) => (id === 'C' ? rtt(20) : r));
    expect(judge(shifted, clean.slice(0, REGRESSION_RULE.minRuns - 1)).regressions).toEqual([]);
    expect(judge(shifted, clean.slice(0, REGRESSION_RULE.minRuns)).regressions.length).toBeGreaterThan(0);
  });

  it('judges a path only against runs that measured it the same way (its fingerprint)', () => {
    const print = (p: TrendPoint, c: string): TrendPoint => ({
      ...p,
      paths: p.paths.map((x) => ({ ...x, fingerprint: x.id === 'C' ? c : 'same' })),
    });
    const shifted = print(
      run(9, rand, (id, r) => (latency(r) && id !== 'A' ? scaled(r, 1.5) : r)),
      'new',
    );
    // B is judged against its history; C (measured differently before) has none to be judged against
    const j = judge(
      shifted,
      clean.map((p) => print(p, 'old')),
    );
    expect(j.regressions.map((g) => g.path)).not.toContain('C');
    expect(j.regressions.map((g) => g.path)).toContain('B');
    expect(j.trend.find((t) => t.path === 'C' && t.percentile === 'p50')?.band).toBeUndefined();
  });

  it('judges a run only against runs of the same plan, not another plan of that name (its plan fingerprint)', () => {
    const of = (p: TrendPoint, planFingerprint: string): TrendPoint => ({ ...p, planFingerprint });
    const shifted = run(9, rand, (id, r) => (latency(r) && id === 'C' ? scaled(r, 1.5) : r));
    const history = clean.map((p) => of(p, 'scheduled'));
    expect(judge(of(shifted, 'scheduled'), history).regressions.map((g) => g.path)).toContain('C');
    // An inline plan named like the scheduled one neither is judged against its runs…
    const inline = judge(of(shifted, 'inline'), history);
    expect(inline.regressions).toEqual([]);
    expect(inline.trend.find((t) => t.path === 'C' && t.percentile === 'p50')?.band).toBeUndefined();
    // …nor enters their baseline: a wild inline run among them changes nothing.
    const wild = of(
      run(8, rand, (_, r) => (latency(r) ? scaled(r, 400) : r)),
      'inline',
    );
    const poisoned = [...history.slice(0, 5), wild];
    expect(judge(of(run(9, rand), 'scheduled'), poisoned).regressions).toEqual(
      judge(of(run(9, rand), 'scheduled'), history.slice(0, 5)).regressions,
    );
  });

  it('a plan fingerprint covers how each path is measured, not labels or regression settings', () => {
    const plan = (over: Record<string, unknown> = {}, label = 'a'): ResolvedPlan => ({
      name: 'nightly',
      paths: [
        {
          id: 'A',
          label,
          client: { instanceId: 'i-1', region: 'local' },
          target: { host: '127.0.0.1', port: 1 },
          routes: [],
          probes: [{ kind: 'tcp-connect', name: 'tcp', count: 10, intervalMs: 10, timeoutMs: 100 }],
          skipped: [],
          reboot: false,
          creditWaitSeconds: 0,
          ...over,
        } as ResolvedPlan['paths'][number],
      ],
    });
    expect(planFingerprint(plan({}, 'a'))).toBe(planFingerprint(plan({}, 'renamed')));
    expect(planFingerprint({ ...plan(), regression: { runs: 10 } } as ResolvedPlan)).toBe(planFingerprint(plan()));
    expect(planFingerprint(plan({ reboot: true }))).not.toBe(planFingerprint(plan()));
    expect(planFingerprint(plan({ target: { host: '127.0.0.2', port: 1 } }))).not.toBe(planFingerprint(plan()));
  });

  it('a failed path neither enters the baseline nor is judged', () => {
    // C failed in three of seven earlier runs (with wild figures): only four clean runs remain
    const history = clean
      .slice(0, 7)
      .map((h, i) =>
        i < 3
          ? { ...h, paths: h.paths.map((p) => (p.id === 'C' ? { ...p, status: 'failed', results: [rtt(50)] } : p)) }
          : h,
      );
    const now = run(9, rand);
    expect(judge(now, history).regressions).toEqual([]);
    const t = judge(now, history).trend.find((x) => x.path === 'C' && x.percentile === 'p50');
    expect(t?.points.filter((p) => p.excluded).map((p) => p.excluded)).toEqual([
      'path failed',
      'path failed',
      'path failed',
    ]);
    expect(t?.band).toBeUndefined();
    // and a failed path in this run is not judged, whatever its figures
    const failedNow = {
      ...now,
      paths: now.paths.map((p) => (p.id === 'C' ? { ...p, status: 'failed', results: [rtt(50)] } : p)),
    };
    expect(judge(failedNow, clean).regressions).toEqual([]);
    // the same 50 ms on a succeeded path is flagged: the status is what spared it
    const slowNow = { ...now, paths: now.paths.map((p) => (p.id === 'C' ? { ...p, results: [rtt(50)] } : p)) };
    expect(judge(slowNow, clean).regressions.map((g) => g.path)).toEqual(['C', 'C']);
  });

  it('a thin tail is not judged at p99 (p50 still is), and a credit-flagged result not at all', () => {
    const thin = run(9, rand, (id, r) =>
      id === 'B' && latency(r) ? rtt(3.2, { flags: ['thin-tail:p99'], n: 300 }) : r,
    );
    expect(judge(thin, clean).regressions.map((g) => [g.path, g.percentile])).toEqual([['B', 'p50']]);
    expect(exclusion({ status: 'succeeded' }, rtt(1, { flags: ['thin-tail:p99'] }), 'p99')).toBe('thin tail');
    const drained = run(9, rand, (id, r) =>
      id === 'A' && r.metric === 'throughput_bps' ? tput(1e9, ['credit-exhausted(trial 1 @ interval 4: 9G→1G)']) : r,
    );
    expect(judge(drained, clean).regressions).toEqual([]);
    // and flagged runs stay out of the baseline: with every earlier A throughput flagged, nothing to judge against
    const flaggedHistory = clean.map((h) => ({
      ...h,
      paths: h.paths.map((p) =>
        p.id === 'A'
          ? { ...p, results: p.results.map((r) => (r.metric === 'throughput_bps' ? tput(1e9, ['at-baseline']) : r)) }
          : p,
      ),
    }));
    const t = judge(run(9, rand), flaggedHistory).trend.find((x) => x.path === 'A' && x.metric === 'throughput_bps');
    expect(t?.points.slice(0, -1).every((p) => p.excluded === 'credit-flagged')).toBe(true);
    expect(t?.band).toBeUndefined();
  });

  it('judges only against runs that started before this one', () => {
    const shifted = run(6, rand, (id, r) => (id === 'C' ? rtt(20) : r));
    // clean runs 0–7 around it: only 0–5 are before run 6
    const { trend } = judge(shifted, clean);
    expect(trend[0].points.map((p) => p.runId)).toEqual([
      'run-00',
      'run-01',
      'run-02',
      'run-03',
      'run-04',
      'run-05',
      'run-06',
    ]);
    expect(judge(shifted, clean.slice(2)).regressions).toEqual([]);
  });

  it('ignores other plans and this run in the history', () => {
    const shifted = run(9, rand, (id, r) => (id === 'C' ? rtt(20) : r));
    const other = clean.map((h) => ({ ...h, planName: 'other' }));
    expect(judge(shifted, [...other, shifted]).regressions).toEqual([]);
  });
});

describe('addRegressions over a directory store', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  });

  const summaryOf = (p: TrendPoint): Summary => ({
    runId: p.runId,
    planName: p.planName,
    startedAt: p.startedAt,
    status: 'succeeded',
    paths: p.paths.map((x) => ({
      id: x.id,
      label: x.id,
      status: x.status as 'succeeded',
      steps: [],
      results: x.results.map((r) => ({
        ...r,
        loss: 0,
        p95: r.p50,
        p999: r.p99,
        max: r.p99,
        ci95: { p50: r.ci95!.p50!, p95: r.ci95!.p50!, p99: r.ci95!.p99! },
      })),
    })),
  });

  it("stores each run's trend point under its plan and judges the next run against them", async () => {
    const dir = await tempDataDir('regressions');
    dirs.push(dir);
    const store = new DirStore(dir);
    const rand = prng(7);
    for (let i = 0; i < 6; i++) {
      const s = summaryOf(run(i, rand));
      await addRegressions({ store }, s);
      expect(s.regressions).toEqual([]);
      if (i > 0) expect(s.trend?.[0].points).toHaveLength(i + 1);
    }
    expect((await store.list(keys.trendPrefix('lab'))).length).toBe(6);
    const shifted = summaryOf(run(7, rand, (id, r) => (id === 'C' && r.metric === 'connect_rtt_ms' ? rtt(9.9) : r)));
    await addRegressions({ store }, shifted);
    expect(shifted.regressions?.map((g) => [g.path, g.percentile, g.runsInBaseline])).toEqual([
      ['C', 'p50', 6],
      ['C', 'p99', 6],
    ]);
    // a retried summary step overwrites its own point, it does not add one
    await addRegressions({ store }, shifted);
    expect(await readTrendPoints(store, 'lab')).toHaveLength(7);
  });

  it('keys plan names with spaces and rejects names that could escape the prefix', () => {
    expect(keys.trendPoint('lab seed 000', 'r1')).toBe('trends/plan=lab%20seed%20000/run=r1.json');
    expect(() => keys.trendPrefix('../x')).toThrow(/unsafe plan name/);
  });
});

describe('paired judgement (regression.paired)', () => {
  /** An http result of `probe` with p50 `v`, p99 1.5 v, 95 % intervals ±1 % (as a 300-request run has). */
  const http = (metric: string, v: number): TrendResult => ({
    probe: 'http',
    metric,
    unit: 'ms',
    n: 300,
    p50: v,
    p99: v * 1.5,
    ci95: { p50: [v * 0.99, v * 1.01], p99: [v * 1.45, v * 1.55] },
    flags: [],
  });
  const base: Record<string, number> = { A: 0.4, B: 1.2, C: 3.2 };
  /**
   * A run on a noisy host: while each path is measured, the host adds its own milliseconds to
   * every request (0–0.5 ms, drawn per path: the paths run one after another, so no two see the
   * same moments; far more than +10 % of B). The reference measured inside a path's probe sees
   * that path's moments; each figure has ±1 % noise of its own. `bump` shifts one path's own
   * target (its server answering later) by that many ms.
   */
  const noisyRun = (i: number, rand: () => number, bump: Record<string, number> = {}): TrendPoint => {
    const hosts = new Map(Object.keys(base).map((id) => [id, rand() * 0.5]));
    const own = (id: string, ms: number) => (ms + (hosts.get(id) as number)) * (1 + (rand() - 0.5) * 0.02);
    return {
      runId: `p-${String(i).padStart(2, '0')}`,
      planName: 'paired',
      startedAt: new Date(Date.UTC(2026, 0, 1, i)).toISOString(),
      settings: { reference: 'A', paired: true },
      paths: Object.entries(base).map(([id, ms]) => ({
        id,
        status: 'succeeded',
        results: [
          http('http_latency_ms', own(id, ms + (bump[id] ?? 0))),
          ...(id === 'A' ? [] : [http(HTTP_PAIR_METRIC, own(id, base.A))]),
        ],
      })),
    };
  };

  it('takes the host out by the reference measured in the same probe: no false alarm, +10 % of B caught', () => {
    const rand = prng(11);
    const history = Array.from({ length: 20 }, (_, i) => noisyRun(i, rand));
    const clean = Array.from({ length: 30 }, (_, i) => judge(noisyRun(30 + i, rand), history));
    expect(clean.flatMap((j) => j.regressions)).toEqual([]);
    // the same runs judged without the pair (the reference's own path as the run's shift): the
    // host's moments differ from path to path, so B's band must hold them, and +10 % hides in it
    const unpaired = (p: TrendPoint): TrendPoint => ({
      ...p,
      settings: { reference: 'A' },
      paths: p.paths.map((x) => ({ ...x, results: x.results.filter((r) => r.metric !== HTTP_PAIR_METRIC) })),
    });
    const rand2 = prng(11);
    const history2 = Array.from({ length: 20 }, (_, i) => unpaired(noisyRun(i, rand2)));
    const caught = Array.from({ length: 10 }, (_, i) =>
      judge(unpaired(noisyRun(70 + i, rand2, { B: 0.145 })), history2),
    ).filter((j) => j.regressions.some((g) => g.path === 'B' && g.direction === 'regression')).length;
    expect(caught).toBeLessThan(5);
    for (let i = 0; i < 10; i++) {
      const j = judge(noisyRun(70 + i, rand, { B: 0.145 }), history);
      const b = j.regressions.filter((g) => g.percentile === 'p50');
      expect(b.map((g) => [g.path, g.direction, g.pairedWith])).toEqual([['B', 'regression', 'A']]);
      // the change is the difference's, as a share of B's own figure (1.45 ms with the host): about +10 %
      expect(b[0].change_pct).toBeGreaterThan(6);
      expect(b[0].change_pct).toBeLessThan(14);
      expect(b[0].value).toBeGreaterThan(b[0].band[1]);
    }
  });

  it('with persistence 2: a narrower band (k / 2 robust sds) and the shift caught the second run in a row', () => {
    const rand = prng(13);
    const two = (p: TrendPoint): TrendPoint => ({ ...p, settings: { reference: 'A', paired: true, persistence: 2 } });
    const history = Array.from({ length: 20 }, (_, i) => two(noisyRun(i, rand)));
    const first = two(noisyRun(40, rand, { B: 0.145 }));
    const j1 = judge(first, history);
    expect(j1.regressions.filter((g) => g.direction === 'regression')).toEqual([]);
    const j2 = judge(two(noisyRun(41, rand, { B: 0.145 })), [...history, first]);
    expect(j2.regressions.filter((g) => g.percentile === 'p50').map((g) => [g.path, g.direction])).toEqual([
      ['B', 'regression'],
    ]);
    // with the floor out of the way, the band is half as wide as with persistence 1 (k / 2 robust sds)
    const widthC = (persistence: number) => {
      const set = (p: TrendPoint): TrendPoint => ({
        ...p,
        settings: { reference: 'A', paired: true, persistence, minRelative: 0.001 },
      });
      const band = judge(set(first), history.map(set)).trend.find((t) => t.path === 'C' && t.percentile === 'p50')
        ?.band as [number, number];
      return band[1] - band[0];
    };
    expect(widthC(2) / widthC(1)).toBeCloseTo(0.5, 6);
  });

  it("the regressions bench's replayed shifts: each clean run raised in turn, judged against the clean runs before it", () => {
    const rand = prng(14);
    const two = (p: TrendPoint): TrendPoint => ({ ...p, settings: { reference: 'A', paired: true, persistence: 2 } });
    const clean = Array.from({ length: 30 }, (_, i) => two(noisyRun(i, rand)));
    const before = JSON.stringify(clean);
    // given newest first, replayed oldest first all the same
    const big = replayShifts([...clean].reverse(), 'B', 0.145, 2);
    // a trial from the seventh run on: its first raised run needs 5 paired runs before it for a band
    expect(big.trials).toBe(24);
    expect(big.found).toBe(24);
    expect(big.others).toBe(0);
    // no shift, no find; and the clean points are left as they were
    expect(replayShifts(clean, 'B', 0, 2)).toEqual({ trials: 24, found: 0, others: 0 });
    expect(JSON.stringify(clean)).toBe(before);
    // with persistence 2, the judged run raised alone is not enough: a flag needs the run before it raised too
    const alone = clean.map((p, i) => (i === 29 ? raised(p, 'B', 0.145) : p));
    expect(judge(alone[29], alone.slice(0, 29)).regressions.filter((g) => g.direction === 'regression')).toEqual([]);
    expect(raised(clean[0], 'B', 0.145).paths.find((p) => p.id === 'B')?.results[0].p50).toBeCloseTo(
      (clean[0].paths.find((p) => p.id === 'B')?.results[0].p50 as number) + 0.145,
      9,
    );
  });

  it('judges the reference series only as the other side of a difference, and an unpaired path as before', () => {
    const rand = prng(12);
    const history = Array.from({ length: 10 }, (_, i) => noisyRun(i, rand));
    const j = judge(noisyRun(20, rand), history);
    expect(j.trend.some((t) => t.metric === HTTP_PAIR_METRIC)).toBe(false);
    // B and C carry bands from the paired judgement; A (the reference) is the run's yardstick
    const bands = j.trend.filter((t) => t.percentile === 'p50' && t.band).map((t) => t.path);
    expect(bands).toEqual(['B', 'C']);
    // fewer than 5 paired runs (the plan just turned pairing on): not judged yet
    const fresh = judge(noisyRun(21, rand), history.slice(0, 3));
    expect(fresh.regressions).toEqual([]);
    expect(fresh.trend.every((t) => t.band === undefined)).toBe(true);
  });
});
