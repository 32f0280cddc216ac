/**
 * Service limits checked at validation: history events per
 * execution, the state payload size, SSM's executionTimeout and the execution's own timeout.
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
  EXECUTION_TIMEOUT_SECONDS,
  estimateSeconds,
  HISTORY_EVENT_LIMIT,
  likelySeconds,
  PAYLOAD_LIMIT_BYTES,
  pathEventBound,
  planLimitProblems,
  probeTiming,
  runEventOverhead,
  SSM_EXECUTION_TIMEOUT_MAX,
} from '../../../functions/pipeline/limits.js';
import { validatePlanStep } from '../../../functions/pipeline/validate.js';
import { runStateMachine } from '../../../local/asl-interpreter.js';
import { allStates, loadDefinition } from '../../../statemachine/asl.js';
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
  it('refuses 10,000 paths, naming the history-event and payload limits, and writes nothing', async () => {
    const { deps, store } = await setup();
    const problems = await rejection(deps, manyPaths(10_000));
    expect(problems.join('\n')).toMatch(
      /^paths: 10,000 paths need up to [\d,]+ execution history events .* over Step Functions' limit of 25,000 events per execution; the first \d+ paths fit/m,
    );
    expect(problems.join('\n')).toMatch(
      /over the [\d,]+ bytes left under Step Functions' payload limit of 262,144 bytes/,
    );
    expect(await store.list('')).toEqual([]);
    expect(await deps.lock.current()).toBeUndefined();
  });

  it('accepts exactly as many paths as fit in 25,000 events, and refuses one more', async () => {
    const { deps } = await setup();
    const one = parsePlan(manyPaths(1));
    if (!one.ok) throw new Error(one.problems.join('\n'));
    const per = pathEventBound(one.plan.paths[0], deps.fleet.pollSeconds);
    const fit = Math.floor((HISTORY_EVENT_LIMIT - runEventOverhead()) / per);
    expect(fit).toBeGreaterThan(1);
    expect(await rejection(deps, manyPaths(fit))).toEqual([]);
    const over = await rejection(deps, manyPaths(fit + 1));
    expect(over).toEqual([expect.stringMatching(new RegExp(`^paths: ${fit + 1} paths .* the first ${fit} paths fit`))]);
  });

  it("measures ValidatePlan's real output against the payload limit (about 2,000 paths)", () => {
    const plan = parsePlan(manyPaths(2_000));
    if (!plan.ok) throw new Error('plan');
    const output = {
      runId: 'limits',
      planName: plan.plan.name,
      paths: plan.plan.paths.map((p) => ({
        id: p.id,
        reboot: p.reboot,
        creditWaitSeconds: p.creditWaitSeconds,
        hasRoutes: false,
        client: p.client,
      })),
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

  it("refuses a plan that cannot finish before the execution's TimeoutSeconds", async () => {
    const { deps } = await setup();
    const problems = await rejection(deps, manyPaths(2, { creditWaitSeconds: 86_400 }));
    expect(problems).toEqual([
      expect.stringMatching(/^paths: the plan may run [\d,]+ s .* over the execution timeout of 86,400 s/),
    ]);
    expect(EXECUTION_TIMEOUT_SECONDS).toBe((loadDefinition() as { TimeoutSeconds?: number }).TimeoutSeconds);
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
    const types = new Map(allStates(loadDefinition()).map(([n, s]) => [n, s.Type]));
    // On AWS each state visit is 2 events and each Lambda attempt 3 more.
    const awsEvents = (from: number, to: number) =>
      r.events
        .slice(from, to)
        .filter((e) => e.type === 'StateEntered')
        .reduce((n, e) => n + 2 + (types.get(e.state?.name ?? '') === 'Task' ? 3 : 0), 0);
    const starts = r.events.flatMap((e, i) => (e.type === 'StateEntered' && e.state?.name === 'BeginPath' ? [i] : []));
    const end = r.events.findIndex((e) => e.type === 'StateEntered' && e.state?.name === 'RestoreRoutes');
    const resolved = parsePlan(plan);
    if (!resolved.ok) throw new Error('plan');
    const [a, b] = resolved.plan.paths;
    expect(awsEvents(starts[0], starts[1])).toBeLessThanOrEqual(pathEventBound(a, deps.fleet.pollSeconds));
    expect(awsEvents(starts[1], end)).toBeLessThanOrEqual(pathEventBound(b, deps.fleet.pollSeconds));
    // and the bound is not loose by orders of magnitude for the stuck stop
    expect(awsEvents(starts[0], starts[1])).toBeGreaterThan(pathEventBound(a, deps.fleet.pollSeconds) / 4);
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
