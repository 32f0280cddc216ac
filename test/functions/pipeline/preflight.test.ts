/**
 * preflight: the one set of checks every way of starting a run makes (ValidatePlan, `run
 * --local`, `start`): the plan, the machine's limits, the cost guard — on the shipped plans and
 * on plans made to break each.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { OverBudgetError, PlanInvalidError } from '../../../core/errors.js';
import { parseAllowedTargets } from '../../../core/target-policy.js';
import { preflight } from '../../../functions/pipeline/preflight.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const planFile = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(path.join(ROOT, 'plans', `${name}.json`), 'utf8'));
const noSettings = { allowOverBudget: false };

/** One Tokyo → Osaka mesh pair with a 10 s iperf3: ≈ $1.41 of transfer at 12.5 Gbps. */
const meshPair = {
  id: 'ap-northeast-1_ap-northeast-3',
  client: { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' },
  target: { host: '10.3.0.10', port: 5201 },
  probes: [{ kind: 'iperf3', durationSeconds: 10 }],
  mesh: { from: 'ap-northeast-1', to: 'ap-northeast-3', distanceKm: 397.2, round: 0 },
};

describe('preflight', () => {
  it('passes every shipped plan with no settings, on the machine its paths call for', () => {
    for (const name of ['local-loopback', 'local-all-probes', 'lab-seed-000', 'lab-seed-004', 'lab-mesh']) {
      const raw = planFile(name);
      const p = preflight(raw, noSettings, { runId: 'r1', pollSeconds: 1 });
      expect(p.plan.paths.length).toBeGreaterThan(0);
      expect(p.mode).toBe(p.plan.paths.some((x) => x.mesh) ? 'mesh' : 'sequential');
      expect(p.cost.estimateUsd).toBeCloseTo(p.estimate.totalUsd, 4);
      if (p.mode === 'mesh') {
        expect(p.rounds.flat().map((i) => i.id)).toEqual(p.plan.paths.map((x) => x.id));
        expect(p.output.chunks).toEqual([]);
      } else expect(p.output.chunks.flat().map((i) => i.id)).toEqual(p.plan.paths.map((x) => x.id));
    }
  });

  it('names every problem of an invalid plan', () => {
    const raw = planFile('local-loopback');
    const bad = { ...raw, paths: [{ id: 'x' }] };
    let thrown: unknown;
    try {
      preflight(bad, noSettings, { runId: 'r1', pollSeconds: 0 });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(PlanInvalidError);
    expect((thrown as PlanInvalidError).problems.join('\n')).toMatch(/paths\[0\]\./);
  });

  it('refuses a plain plan on the mesh machine', () => {
    expect(() =>
      preflight(planFile('local-loopback'), noSettings, { runId: 'r1', pollSeconds: 0, mode: 'mesh' }),
    ).toThrow(/the mesh state machine runs mesh plans/);
  });

  it('holds the plan to the limits of the machine it runs on: its poll interval counts', () => {
    // 400 600 s iperf3 paths: each path's reboot polls to their bound take 180 polls, within the
    // run's execution timeout polled every 1 s, over it every 10 s (AWS).
    const many = {
      name: 'many',
      paths: Array.from({ length: 400 }, (_, i) => ({
        ...meshPair,
        id: `p${i}`,
        mesh: undefined,
        probes: [{ kind: 'iperf3', durationSeconds: 600 }],
      })),
    };
    const settings = { allowOverBudget: true };
    expect(preflight(many, settings, { runId: 'r1', pollSeconds: 1 }).plan.paths).toHaveLength(400);
    let thrown: unknown;
    try {
      preflight(many, settings, { runId: 'r1', pollSeconds: 10 });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(PlanInvalidError);
    expect((thrown as PlanInvalidError).problems.join('\n')).toMatch(/over the execution timeout of 604,800 s/);
  });

  it('applies the cost guard: the plan budget, else the settings; the override is recorded', () => {
    const plan = { name: 'mesh-cost', paths: [meshPair] };
    expect(() => preflight({ ...plan, budgetUsd: 1 }, noSettings, { runId: 'r1', pollSeconds: 10 })).toThrow(
      OverBudgetError,
    );
    expect(() => preflight(plan, { budgetUsd: 0.5, allowOverBudget: false }, { runId: 'r1', pollSeconds: 10 })).toThrow(
      /over the budget of \$0\.50 \(the stack default budget\)/,
    );
    const allowed = preflight(plan, { budgetUsd: 0.5, allowOverBudget: true }, { runId: 'r1', pollSeconds: 10 });
    expect(allowed.cost).toMatchObject({ overridden: true, budgetUsd: 0.5 });
    expect(allowed.budget).toEqual({ usd: 0.5, source: 'stack' });
    // The settings' instance type prices the estimate.
    const small = preflight(
      plan,
      { instanceType: 't3.micro', allowOverBudget: false },
      { runId: 'r1', pollSeconds: 10 },
    );
    const big = preflight(
      plan,
      { instanceType: 'c6in.32xlarge', allowOverBudget: false },
      { runId: 'r1', pollSeconds: 10 },
    );
    expect(big.estimate.totalUsd).toBeGreaterThan(small.estimate.totalUsd);
  });

  it("refuses a target outside the operator's allowedTargets, naming the field; no list allows every target not forbidden", () => {
    // Prepare
    const raw = planFile('local-loopback');
    const allowedTargets = parseAllowedTargets('["10.1.0.0/16", "target.example.internal"]', 'test');
    const hosts = (hs: string[]) => ({
      ...raw,
      paths: (raw.paths as Record<string, unknown>[]).slice(0, hs.length).map((p, i) => ({
        ...p,
        target: { ...(p.target as object), host: hs[i] },
      })),
    });

    // Act
    let thrown: unknown;
    try {
      preflight(hosts(['127.0.0.1', '10.1.2.3', 'other.example.internal']), noSettings, {
        runId: 'r1',
        pollSeconds: 1,
        allowedTargets,
      });
    } catch (e) {
      thrown = e;
    }

    // Assess
    expect(thrown).toBeInstanceOf(PlanInvalidError);
    expect((thrown as PlanInvalidError).problems).toEqual([
      'paths[0].target.host: "127.0.0.1" is not in the stack\'s allowedTargets (allowed: 10.1.0.0/16, target.example.internal); redeploy with it to allow it',
      'paths[2].target.host: "other.example.internal" is not in the stack\'s allowedTargets (allowed: 10.1.0.0/16, target.example.internal); redeploy with it to allow it',
    ]);
    const ok = preflight(hosts(['10.1.2.3', 'TARGET.example.internal']), noSettings, {
      runId: 'r1',
      pollSeconds: 1,
      allowedTargets,
    });
    expect(ok.plan.paths).toHaveLength(2);
    expect(preflight(hosts(['127.0.0.1']), noSettings, { runId: 'r1', pollSeconds: 1 }).plan.paths).toHaveLength(1);
    expect(() =>
      preflight(hosts(['10.1.2.3']), noSettings, {
        runId: 'r1',
        pollSeconds: 1,
        allowedTargets: parseAllowedTargets(undefined, 'PATHBENCH_ALLOWED_TARGETS'),
      }),
    ).toThrow(/not in the stack's allowedTargets \(none allowed\)/);
  });

  it('lays out a mesh of the highest round number without running out of room', () => {
    // Rounds are laid out one list per number up to the highest: a bounded number bounds that.
    const bad = { name: 'mesh', paths: [{ ...meshPair, mesh: { ...meshPair.mesh, round: 1e12 } }] };
    expect(() => preflight(bad, noSettings, { runId: 'r1', pollSeconds: 10 })).toThrow(
      /paths\[0\]\.mesh\.round: expected an integer 0–9999, got 1000000000000/,
    );
    const highest = { name: 'mesh', paths: [{ ...meshPair, mesh: { ...meshPair.mesh, round: 9_999 } }] };
    expect(() => preflight(highest, noSettings, { runId: 'r1', pollSeconds: 10 })).toThrow(
      /paths: 10,000 rounds need [\d,]+ history events in the parent execution/,
    );
  });
});
