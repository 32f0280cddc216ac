/**
 * Service limits checked at validation: history events per
 * execution (the run's, each chunk's, each path's), the state payload size, SSM's executionTimeout and the execution's own timeout.
 * ValidatePlan runs with the real local store and lock; the event model is checked against the
 * states the real ASL file enters when every poll runs to its bound.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PlanInvalidError } from '../../../core/errors.js';
import { parsePlan } from '../../../core/plan.js';
import { PROBE_DOCUMENT_PATTERNS } from '../../../functions/adapters/aws/probe-document.js';
import {
  chunkEventBound,
  EXECUTION_TIMEOUT_SECONDS,
  estimateSeconds,
  largestExecutionBound,
  likelySeconds,
  PATH_TIMEOUT_SECONDS,
  PAYLOAD_LIMIT_BYTES,
  pathEventBound,
  planLimitProblems,
  probeTiming,
  runEventBound,
  SSM_EXECUTION_TIMEOUT_MAX,
} from '../../../functions/pipeline/limits.js';
import { validatePlanStep } from '../../../functions/pipeline/validate.js';
import { runStateMachine } from '../../../local/asl-interpreter.js';
import { awsEventsOf } from '../../../local/local-execution.js';
import { loadDefinition, PATHS_PER_CHUNK } from '../../../statemachine/asl.js';
import { FakeFleet, FakeRunner, noRetryWaits, noWaits, scenarioDeps, scenarioPlan } from '../../helpers/fakes.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function setup(over: Parameters<typeof scenarioDeps>[0] = {}) {
  const s = await scenarioDeps(over);
  cleanups.push(async () => {
    s.query.close();
    await rm(s.dir, { recursive: true, force: true });
  });
  return s;
}

/** A plan of `n` paths (tcp-connect, no reboot, no routes). */
function manyPaths(n: number, over: Record<string, unknown> = {}) {
  const base = scenarioPlan(['A']);
  return {
    ...base,
    defaults: { ...base.defaults, reboot: false, creditWaitSeconds: 0, ...over },
    paths: Array.from({ length: n }, (_, i) => ({ id: `p${i}`, target: { host: '10.1.0.10', port: 7000 } })),
  };
}

async function rejection(deps: Parameters<typeof validatePlanStep>[0], plan: unknown): Promise<string[]> {
  try {
    await validatePlanStep(deps, { input: { plan }, runId: 'limits', startedAt: '2026-12-01T00:00:00.000Z' });
  } catch (e) {
    if (e instanceof PlanInvalidError) return e.problems;
    throw e;
  }
  return [];
}

describe('probe timing', () => {
  const pingpong = {
    kind: 'pingpong' as const,
    name: 'pp',
    mode: 'udp' as const,
    messageBytes: 64,
    durationSeconds: 0,
    count: 3000,
    timeoutMs: 1000,
  };
  it('a count-bound pingpong series: first look at its likely time, the deadline for every exchange timing out', () => {
    const t = probeTiming([pingpong]);
    // 3,000 × 2 ms + 3 s, not 3,000 × the 1 s timeout
    expect(t.likelyProbing).toBeCloseTo(9, 9);
    expect(t.likely).toBe(14);
    expect(t.probing).toBe(3003);
    expect(t.timeoutSeconds).toBe(Math.ceil((3003 + 5) * 1.5 + 60));
    // bounded by a duration or a short timeout, the likely time is the same bound
    expect(likelySeconds({ ...pingpong, durationSeconds: 2 })).toBe(5);
    expect(likelySeconds({ ...pingpong, timeoutMs: 1 })).toBeCloseTo(6, 9);
    // other probes: their estimate (already their likely time)
    const tcp = { kind: 'tcp-connect' as const, name: 't', count: 100, intervalMs: 10, timeoutMs: 1000 };
    expect(likelySeconds(tcp as never)).toBe(estimateSeconds(tcp as never));
  });
});

describe('plan limits at validation', () => {
  it('refuses 10,000 paths, naming the payload limit and how many paths fit, and writes nothing', async () => {
    const { deps, store } = await setup();
    const problems = await rejection(deps, manyPaths(10_000));
    expect(problems).toContainEqual(
      expect.stringMatching(
        /^paths: the execution carries 10,000 path items \([\d,]+ bytes\), over the [\d,]+ bytes left under Step Functions' payload limit of 262,144 bytes \(256 KiB\); the first [\d,]+ paths fit — split the plan$/,
      ),
    );
    expect(problems.join('\n')).not.toMatch(/history events/);
    expect(await store.list('')).toEqual([]);
    expect(await deps.lock.current()).toBeUndefined();
  });

  it('accepts exactly as many paths as the refusal says fit, and refuses one more', async () => {
    const { deps } = await setup();
    // Each path's worst-case time counts too (the run's 7 days); here the payload alone.
    const payload = async (n: number) => (await rejection(deps, manyPaths(n))).filter((p) => p.includes('payload'));
    const [problem] = await payload(10_000);
    const fit = Number(/the first ([\d,]+) paths fit/.exec(problem)?.[1].replace(/,/g, ''));
    // Each path its own execution, a chunk's few events a path: the payload is the binding limit.
    expect(fit).toBeGreaterThan(1_000);
    expect(await payload(fit)).toEqual([]);
    const over = await payload(fit + 1);
    expect(over).toEqual([
      expect.stringMatching(
        new RegExp(
          `^paths: the execution carries ${(fit + 1).toLocaleString('en-US')} path items .* the first ${fit.toLocaleString('en-US')} paths fit`,
        ),
      ),
    ]);
  });

  it('keeps every execution of a run under 2,000 events at 1,000 paths (worst case, from the definitions)', () => {
    const plan = parsePlan(manyPaths(1_000));
    if (!plan.ok) throw new Error('plan');
    expect(runEventBound(Math.ceil(1_000 / PATHS_PER_CHUNK))).toBeLessThanOrEqual(2_000);
    expect(chunkEventBound(PATHS_PER_CHUNK)).toBeLessThanOrEqual(2_000);
    // and the run's own execution grows by a chunk's events per PATHS_PER_CHUNK paths, not per path
    expect(runEventBound(10) - runEventBound(9)).toBeLessThan(30);
    expect(largestExecutionBound(plan.plan.paths, 10).events).toBe(
      Math.max(runEventBound(10), chunkEventBound(PATHS_PER_CHUNK), pathEventBound(plan.plan.paths[0], 10)),
    );
  });

  it("measures ValidatePlan's real output against the payload limit (about 2,000 paths)", () => {
    const plan = parsePlan(manyPaths(2_000));
    if (!plan.ok) throw new Error('plan');
    const output = {
      runId: 'limits',
      planName: plan.plan.name,
      chunks: [
        plan.plan.paths.map((p) => ({
          id: p.id,
          reboot: p.reboot,
          creditWaitSeconds: p.creditWaitSeconds,
          hasRoutes: false,
          client: p.client,
        })),
      ],
    };
    const bytes = JSON.stringify(output).length;
    expect(bytes).toBeGreaterThan(PAYLOAD_LIMIT_BYTES - 40_960);
    const payload = planLimitProblems(plan.plan.paths, output, 10).filter((p) => p.includes('payload'));
    expect(payload).toEqual([expect.stringMatching(/^paths: the execution carries 2,000 path items \([\d,]+ bytes\)/)]);
  });

  it("refuses a path whose probe command would outlast SSM's executionTimeout limit, naming the path", async () => {
    const { deps, store } = await setup();
    const plan = manyPaths(2, { probes: [{ kind: 'tcp-connect', count: 1_000_000, intervalMs: 200 }] });
    const problems = await rejection(deps, plan);
    expect(problems).toContainEqual(
      expect.stringMatching(
        /^paths\[0\]\.probes: the probe command would need 300,[\d,]+ s .* over SSM's executionTimeout limit of 99,999 s/,
      ),
    );
    expect(problems).toContainEqual(expect.stringMatching(/^paths\[1\]\.probes: /));
    expect(await store.list('')).toEqual([]);
  });

  it('the SSM limit is the probe document parameter pattern', () => {
    const re = new RegExp(PROBE_DOCUMENT_PATTERNS.executionTimeout);
    expect(re.test(String(SSM_EXECUTION_TIMEOUT_MAX))).toBe(true);
    expect(re.test(String(SSM_EXECUTION_TIMEOUT_MAX + 1))).toBe(false);
  });

  it("refuses a plan that cannot finish before the run's TimeoutSeconds, and a path that cannot before its own", async () => {
    const { deps } = await setup();
    // Eight paths of 80,000 s each: every path fits its own execution, the run's 7 days do not hold them.
    const problems = await rejection(deps, manyPaths(8, { creditWaitSeconds: 80_000 }));
    expect(problems).toEqual([
      expect.stringMatching(/^paths: the plan may run [\d,]+ s .* over the execution timeout of 604,800 s/),
    ]);
    expect(EXECUTION_TIMEOUT_SECONDS).toBe((loadDefinition() as { TimeoutSeconds?: number }).TimeoutSeconds);
    // A path over a day: its own execution would time out.
    const one = await rejection(deps, manyPaths(2, { creditWaitSeconds: 86_400 }));
    expect(one).toEqual([
      expect.stringMatching(/^paths\[0\]: the path may run [\d,]+ s .* over its execution's timeout of 86,400 s/),
      expect.stringMatching(/^paths\[1\]: /),
    ]);
    expect(PATH_TIMEOUT_SECONDS).toBe((loadDefinition('path') as { TimeoutSeconds?: number }).TimeoutSeconds);
  });

  it('bounds the states the real ASL enters when every loop runs to its bound', async () => {
    // A reboot whose stop never completes, then (next path) a probe that never finishes.
    const fleet = new FakeFleet({ neverStops: true });
    const { deps, store } = await setup({ fleet });
    deps.runner = new FakeRunner(store, { B: 'hang' });
    const base = scenarioPlan(['A', 'B']);
    const plan = { ...base, paths: [base.paths[0], { ...base.paths[1], reboot: false, routes: [] }] };
    const r = await runStateMachine({
      deps,
      input: { plan },
      runId: 'bounds',
      waitTimeOverrides: noWaits(),
      retryIntervalOverrides: noRetryWaits(),
    });
    expect(r.status).toBe('SUCCEEDED');
    // Each path ran as its own execution (a chunk's MeasurePath child): its events on AWS.
    const children = r.children.filter((c) => c.state === 'MeasurePath');
    expect(children).toHaveLength(2);
    const [eventsA, eventsB] = children.sort((x, y) => x.index - y.index).map((c) => awsEventsOf(c.events));
    const resolved = parsePlan(plan);
    if (!resolved.ok) throw new Error('plan');
    const [a, b] = resolved.plan.paths;
    expect(eventsA).toBeLessThanOrEqual(pathEventBound(a, deps.fleet.pollSeconds));
    expect(eventsB).toBeLessThanOrEqual(pathEventBound(b, deps.fleet.pollSeconds));
    // and the bound is not loose by orders of magnitude for the stuck stop
    expect(eventsA).toBeGreaterThan(pathEventBound(a, deps.fleet.pollSeconds) / 4);
  });

  it.each(readdirSync(join(import.meta.dirname, '../../../plans')).filter((f) => f.endsWith('.json')))(
    'plans/%s fits the limits with its fleet poll interval',
    (file) => {
      const raw = JSON.parse(readFileSync(join(import.meta.dirname, '../../../plans', file), 'utf8'));
      const r = parsePlan(raw);
      if (!r.ok) throw new Error(r.problems.join('\n'));
      // AWS fleet 10 s, lab fleet 1 s, loopback 0 s (polled every second)
      const poll = file.endsWith('.example.json') ? 10 : file.startsWith('lab-') ? 1 : 0;
      // a mesh plan runs on the mesh machine (its pairs are child executions; no path items in the output)
      const mesh = r.plan.paths.some((p) => p.mesh);
      const output = {
        runId: 'r',
        planName: r.plan.name,
        paths: mesh ? [] : r.plan.paths.map((p) => ({ id: p.id, client: p.client })),
      };
      expect(planLimitProblems(r.plan.paths, output, poll, mesh ? 'mesh' : 'sequential')).toEqual([]);
    },
  );
});
