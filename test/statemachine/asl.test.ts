import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { RUN_FAILED_ERROR } from '../../core/run-manifest.js';
import { TASK_NAMES } from '../../functions/wiring.js';
import {
  type AslState,
  allStates,
  DEFINITION_NAMES,
  loadDefinition,
  placeholdersIn,
  runStates,
  substitutePlaceholders,
  taskPlaceholders,
} from '../../statemachine/asl.js';

const validator = createRequire(import.meta.url)('asl-validator') as (
  def: unknown,
  opts?: { checkArn?: boolean; checkPaths?: boolean },
) => { isValid: boolean; errorsText: (sep?: string) => string };

const def = loadDefinition();
const chunk = loadDefinition('chunk');
const path = loadDefinition('path');
type AnyState = Record<string, unknown> & { Type: string };
/** Every state of a sequential run: the run's, the chunk's and the path's definitions. */
const states = runStates() as [string, AnyState][];

describe('the definitions (statemachine/*.asl.json)', () => {
  it.each(DEFINITION_NAMES)('%s is valid ASL once the placeholders are substituted (as CDK does)', (name) => {
    const resolved = substitutePlaceholders(
      loadDefinition(name),
      TASK_NAMES,
      (t) => `arn:aws:lambda:us-east-1:123456789012:function:pathbench-${t}`,
      (m) => `arn:aws:states:us-east-1:123456789012:stateMachine:pathbench-${m}`,
    );
    const r = validator(resolved, { checkArn: true, checkPaths: true });
    expect(r.errorsText('\n')).toBe('');
    expect(r.isValid).toBe(true);
  });

  it('state names are unique across the run, chunk and path definitions (overrides and faults go by name)', () => {
    const names = states.map(([n]) => n);
    expect(new Set(names).size).toBe(names.length);
  });

  it.each(DEFINITION_NAMES)(
    '%s uses JSONPath only: no JSONata anywhere (the local interpreter would silently ignore it)',
    (name) => {
      const text = JSON.stringify(loadDefinition(name));
      expect(text).not.toMatch(/"QueryLanguage"/);
      expect(text).not.toMatch(/\{%/);
      for (const [state, s] of allStates(loadDefinition(name)) as [string, AnyState][]) {
        for (const key of ['Arguments', 'Output', 'Assign', 'Condition', 'Items']) {
          expect(s, `${state} uses JSONata field ${key}`).not.toHaveProperty(key);
        }
      }
    },
  );

  it('resolves every Task through the wiring table and uses every wiring entry', () => {
    const used = new Set([def, chunk, path].flatMap((d) => Object.values(taskPlaceholders(d, TASK_NAMES))));
    expect([...used].sort()).toEqual([...TASK_NAMES].sort());
  });

  it('walks chunks one at a time, and each chunk its paths one at a time, each path a child execution', () => {
    // The Map runs one item at a time; its one Task starts the machine its placeholder names.
    const startsOneAtATime = (map: AslState | undefined, task: string, machine: string) => {
      const m = map as AnyState & { ItemProcessor: { States: Record<string, AnyState> } };
      expect(m.Type).toBe('Map');
      expect(m.MaxConcurrency).toBe(1);
      expect(Object.keys(m.ItemProcessor.States)).toEqual([task]);
      const t = m.ItemProcessor.States[task];
      expect(t.Resource).toBe('arn:aws:states:::states:startExecution.sync:2');
      expect(placeholdersIn(JSON.stringify(t.Parameters))).toEqual([machine]);
    };
    startsOneAtATime(def.States.MeasureChunks, 'MeasureChunk', 'ChunkStateMachine');
    startsOneAtATime(chunk.States.MeasurePaths, 'MeasurePath', 'PathStateMachine');
  });

  it('catches every Task of the path definition so one failing path cannot stop the run', () => {
    const inner = allStates(path) as [string, AnyState][];
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
    expect(s.MeasureChunks.Next).toBe('RestoreRoutes');
    expect(s.MeasureChunks.Catch?.[0].Next).toBe('RestoreRoutes');
    expect(s.RestoreRoutes.Next).toBe('PrepareSummary');
    expect(s.RestoreRoutes.Catch?.[0].Next).toBe('PrepareSummary');
    expect(s.PrepareSummary.Next).toBe('SummaryQueries');
    expect(s.SummaryQueries.Next).toBe('SummarizeRun');
    expect(s.SummarizeRun.Next).toBe('ReleaseLock');
    // A summary state's failure: ReleaseLock's Lambda with the error, to record in the manifest.
    for (const name of ['PrepareSummary', 'SummaryQueries', 'SummarizeRun'])
      expect(s[name].Catch?.[0], name).toMatchObject({
        ErrorEquals: ['States.ALL'],
        ResultPath: '$.summaryError',
        Next: 'ReleaseLockAfterSummaryFailure',
      });
    const after = s.ReleaseLockAfterSummaryFailure as AnyState & { Next?: string; Parameters?: unknown };
    const { Comment: _a, Parameters: withError, ...rest } = after;
    const { Comment: _b, Parameters: plain, ...lock } = s.ReleaseLock as typeof after;
    expect(rest).toEqual(lock);
    expect(withError).toEqual({ ...(plain as object), 'summaryError.$': '$.summaryError' });
    expect(s.ReleaseLock.Next).toBe('RunOutcome');
    // The failure lines are read only for this Error (core/run-manifest.ts RUN_FAILED_ERROR).
    expect((s.RunFailed as unknown as { Error: string }).Error).toBe(RUN_FAILED_ERROR);
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
      // A child execution is not retried once started (it would measure the path twice): only
      // its start, refused by Step Functions.
      else if (s.Resource === 'arn:aws:states:::states:startExecution.sync:2')
        expect(
          retry(s).flatMap((r) => r.ErrorEquals),
          name,
        ).not.toContain('States.TaskFailed');
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
