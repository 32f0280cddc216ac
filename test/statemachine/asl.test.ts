import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { TASK_NAMES } from '../../functions/wiring.js';
import { allStates, loadDefinition, substitutePlaceholders, taskPlaceholders } from '../../statemachine/asl.js';

const validator = createRequire(import.meta.url)('asl-validator') as (
  def: unknown,
  opts?: { checkArn?: boolean; checkPaths?: boolean },
) => { isValid: boolean; errorsText: (sep?: string) => string };

const def = loadDefinition();
type AnyState = Record<string, unknown> & { Type: string };
const states = allStates(def) as [string, AnyState][];

describe('statemachine/measurement.asl.json', () => {
  it('is valid ASL once the placeholders are substituted (as CDK does)', () => {
    const resolved = substitutePlaceholders(
      def,
      TASK_NAMES,
      (t) => `arn:aws:lambda:us-east-1:123456789012:function:pathbench-${t}`,
    );
    const r = validator(resolved, { checkArn: true, checkPaths: true });
    expect(r.errorsText('\n')).toBe('');
    expect(r.isValid).toBe(true);
  });

  it('uses JSONPath only: no JSONata anywhere (the local interpreter would silently ignore it)', () => {
    const text = JSON.stringify(def);
    expect(text).not.toMatch(/"QueryLanguage"/);
    expect(text).not.toMatch(/\{%/);
    for (const [name, s] of states) {
      for (const key of ['Arguments', 'Output', 'Assign', 'Condition', 'Items']) {
        expect(s, `${name} uses JSONata field ${key}`).not.toHaveProperty(key);
      }
    }
  });

  it('resolves every Task through the wiring table and uses every wiring entry', () => {
    const used = new Set(Object.values(taskPlaceholders(def, TASK_NAMES)));
    expect([...used].sort()).toEqual([...TASK_NAMES].sort());
  });

  it('walks paths one at a time', () => {
    const map = def.States.MeasurePaths as unknown as AnyState;
    expect(map.Type).toBe('Map');
    expect(map.MaxConcurrency).toBe(1);
  });

  it('catches every Task inside the path iteration so one failing path cannot stop the run', () => {
    const inner = allStates(
      (def.States.MeasurePaths as unknown as { ItemProcessor: { States: Record<string, AnyState> } })
        .ItemProcessor as never,
    ) as [string, AnyState][];
    const tasks = inner.filter(([, s]) => s.Type === 'Task');
    expect(tasks.length).toBeGreaterThanOrEqual(9);
    for (const [name, s] of tasks) {
      const c = s.Catch as { ErrorEquals: string[] }[] | undefined;
      expect(
        c?.some((x) => x.ErrorEquals.includes('States.ALL')),
        `${name} has no States.ALL catch`,
      ).toBe(true);
    }
  });

  it('restores routes, summarizes and releases the lock on every exit path after ValidatePlan', () => {
    const s = def.States as unknown as Record<string, AnyState & { Next?: string; Catch?: { Next: string }[] }>;
    expect(s.MeasurePaths.Next).toBe('RestoreRoutes');
    expect(s.MeasurePaths.Catch?.[0].Next).toBe('RestoreRoutes');
    expect(s.RestoreRoutes.Next).toBe('PrepareSummary');
    expect(s.RestoreRoutes.Catch?.[0].Next).toBe('PrepareSummary');
    expect(s.PrepareSummary.Next).toBe('SummaryQueries');
    expect(s.PrepareSummary.Catch?.[0].Next).toBe('ReleaseLock');
    expect(s.SummaryQueries.Next).toBe('SummarizeRun');
    expect(s.SummaryQueries.Catch?.[0].Next).toBe('ReleaseLock');
    expect(s.SummarizeRun.Next).toBe('ReleaseLock');
    expect(s.SummarizeRun.Catch?.[0].Next).toBe('ReleaseLock');
  });

  it('bounds every wait: waits come from task output or the plan, and retries cap their delay', () => {
    for (const [name, s] of states) {
      if (s.Type === 'Wait') expect(s.SecondsPath ?? s.Seconds, name).toBeDefined();
      for (const r of (s.Retry as { MaxAttempts: number; MaxDelaySeconds?: number }[] | undefined) ?? []) {
        expect(r.MaxAttempts, name).toBeLessThanOrEqual(5);
        expect(r.MaxDelaySeconds, name).toBeDefined();
      }
    }
  });
});

describe('retries (orchestration limits)', () => {
  type Retrier = { ErrorEquals: string[]; MaxAttempts: number };
  const retry = (s: AnyState) => (s.Retry as Retrier[] | undefined) ?? [];
  it('retries Lambda.InternalError and Lambda.Unknown on every idempotent Task; SendProbe is not (it may have sent)', () => {
    for (const [name, s] of states) {
      if (s.Type !== 'Task') continue;
      const crash = retry(s).filter((r) => r.ErrorEquals.includes('Lambda.Unknown'));
      // ProbeTask is not a Lambda, and a second message would start a second agent: no retry at all.
      if (name === 'ProbeTask') expect(s.Retry, name).toBeUndefined();
      // The Athena copies are not Lambdas: retried only on throttling before a query starts.
      else if (String(s.Resource).startsWith('arn:aws:states:::athena:'))
        expect(
          retry(s)
            .flatMap((r) => r.ErrorEquals)
            .sort(),
          name,
        ).toEqual(['Athena.InternalServerException', 'Athena.TooManyRequestsException']);
      else if (name === 'SendProbe') expect(crash, name).toEqual([]);
      else {
        expect(crash, name).toHaveLength(1);
        expect(crash[0].ErrorEquals, name).toContain('Lambda.InternalError');
      }
    }
  });
  it('retries a start refused for capacity, and only the start', () => {
    for (const [name, s] of states) {
      const cap = retry(s).filter((r) => r.ErrorEquals.includes('InstanceCapacityError'));
      expect(cap, name).toHaveLength(name === 'StartClient' ? 1 : 0);
    }
  });
});
