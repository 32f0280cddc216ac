/**
 * Fault classes at the Lambda boundary and between executions: concurrent starts; Lambda
 * throttling, 5xx and a crash after the handler's side effect (the invocation fails after the
 * handler ran, so Step Functions retries a task whose work is already done).
 */
import { describe, expect } from 'vitest';
import { type RunManifest, readManifest } from '../../core/run-manifest.js';
import { DirStore } from '../../local/dir-store.js';
import { type FaultCase, faultCase, lockOfDeadProcess } from './harness.js';
import { awsError } from './inject.js';

async function manifest(c: FaultCase, runId: string): Promise<RunManifest> {
  return ((await readManifest(new DirStore(c.dir), runId)) ?? null) as RunManifest;
}

async function expectMeasured(c: FaultCase, runId: string, paths: string[]): Promise<void> {
  const m = await manifest(c, runId);
  for (const id of paths) {
    const p = m.paths.find((x) => x.id === id);
    expect(p?.status, `${runId} path ${id}: ${p?.error ?? ''}`).toBe('succeeded');
    expect(p?.probes.reduce((s, x) => s + x.samples, 0)).toBeGreaterThan(0);
  }
}

describe.concurrent('baseline', () => {
  faultCase('baseline', 'no fault: two paths measured', async (c) => {
    const r = await c.run(c.plan([{ id: 'a' }, { id: 'b' }]));
    expect(r.execution.status).toBe('SUCCEEDED');
    await expectMeasured(c, r.runId, ['a', 'b']);
  });
});

describe.concurrent('concurrent starts', () => {
  faultCase(
    'concurrent starts',
    'two runs at once: one measures, the other is refused and writes nothing',
    async (c) => {
      const [a, b] = await Promise.all([c.run(c.plan([{ id: 'a' }])), c.run(c.plan([{ id: 'a' }]))]);
      const ok = [a, b].filter((r) => r.execution.status === 'SUCCEEDED');
      const refused = [a, b].filter((r) => r.execution.status === 'FAILED');
      expect(ok).toHaveLength(1);
      expect(refused.map((r) => r.execution.error?.name)).toEqual(['RunLockedError']);
      expect(await new DirStore(c.dir).list(`runs/run=${refused[0].runId}/`)).toEqual([]);
      await expectMeasured(c, ok[0].runId, ['a']);
    },
  );

  faultCase(
    'concurrent starts',
    'a stale lock (its holder killed) and two starts at once: exactly one runs',
    async (c) => {
      await lockOfDeadProcess(c.dir, 'killed-run');
      const [a, b] = await Promise.all([c.run(c.plan([{ id: 'a' }])), c.run(c.plan([{ id: 'a' }]))]);
      expect([a, b].map((r) => r.execution.status).sort()).toEqual(['FAILED', 'SUCCEEDED']);
      expect([a, b].find((r) => r.execution.status === 'FAILED')?.execution.error?.name).toBe('RunLockedError');
    },
  );

  faultCase('concurrent starts', 'a start refused for reusing a running run id leaves that run its lock', async (c) => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    // The first run waits in BeginPath while the others start.
    c.faults.add({ site: 'lambda.BeginPath', nth: 1, action: { hook: () => gate } });
    const first = c.run(c.plan([{ id: 'a' }]), { runId: 'first' });
    while (c.faults.count('lambda.BeginPath') === 0) await new Promise((r) => setTimeout(r, 20));
    const again = await c.run(c.plan([{ id: 'a' }]), { runId: 'first' });
    expect(again.execution.error?.name).toMatch(/^(RunExistsError|RunLockedError)$/);
    const third = await c.run(c.plan([{ id: 'a' }]), { runId: 'third' });
    release();
    await first;
    expect(third.execution.error?.name).toBe('RunLockedError');
  });
});

describe.concurrent('Lambda throttling, 5xx, crash after the side effect', () => {
  for (const state of [
    'ValidatePlan',
    'BeginPath',
    'SendProbe',
    'PollProbe',
    'CollectOutput',
    'PrepareSummary',
    'SummarizeRun',
    'ReleaseLock',
  ]) {
    faultCase('Lambda throttling / 5xx', `${state}: TooManyRequests twice, then a 5xx`, async (c) => {
      c.faults.add({
        site: `lambda.${state}`,
        nth: [1, 2],
        times: 2,
        action: { throw: () => awsError('Lambda.TooManyRequestsException', 'Rate Exceeded.', 429) },
      });
      c.faults.add({
        site: `lambda.${state}`,
        nth: 3,
        action: { throw: () => awsError('Lambda.ServiceException', 'Lambda is unable to process the request', 500) },
      });
      const r = await c.run(c.plan([{ id: 'a' }]));
      expect(r.execution.status).toBe('SUCCEEDED');
      await expectMeasured(c, r.runId, ['a']);
    });
  }

  for (const state of [
    'ValidatePlan',
    'BeginPath',
    'SwapRoutes',
    'SendProbe',
    'PollProbe',
    'CollectOutput',
    'RestoreRoutes',
    'PrepareSummary',
    'SummarizeRun',
    'ReleaseLock',
  ]) {
    faultCase(
      'Lambda crash after the side effect',
      `${state}: the handler's work is done, the invocation fails (5xx), the retry must not redo it`,
      async (c) => {
        c.faults.add({
          site: `lambda.${state}`,
          nth: 1,
          action: {
            crashAfter: () => awsError('Lambda.ServiceException', 'Lambda is unable to process the request', 500),
          },
        });
        const r = await c.run(
          c.plan([
            {
              id: 'a',
              routes: [{ routeTableId: 'rtb-0a', destination: '10.1.0.0/16', via: { transitGatewayId: 'tgw-0b' } }],
            },
          ]),
        );
        expect(r.execution.status, JSON.stringify(r.execution.error)).toBe('SUCCEEDED');
        await expectMeasured(c, r.runId, ['a']);
        // one agent per path, however many times SendProbe ran
        expect(new Set(c.commandIds).size).toBe(1);
      },
      {
        routes: {
          'rtb-0a': [
            {
              DestinationCidrBlock: '10.1.0.0/16',
              VpcPeeringConnectionId: 'pcx-0a',
              State: 'active',
              Origin: 'CreateRoute',
            },
          ],
        },
      },
    );
  }

  for (const [name, status] of [
    ['Lambda.Unknown', 500],
    ['Lambda.InternalError', 500],
  ] as const) {
    faultCase('Lambda throttling / 5xx', `PollProbe: ${name} once is retried, not a failed path`, async (c) => {
      c.faults.add({ site: 'lambda.PollProbe', nth: 1, action: { throw: () => awsError(name, name, status) } });
      const r = await c.run(c.plan([{ id: 'a' }]));
      expect(r.execution.status).toBe('SUCCEEDED');
      await expectMeasured(c, r.runId, ['a']);
    });
  }

  faultCase(
    'Lambda crash after the side effect',
    'SendProbe dies between SendCommand and the manifest write: the retry starts no second agent',
    async (c) => {
      c.faults.add({
        site: 'runner.send',
        nth: 1,
        action: {
          crashAfter: () => awsError('Lambda.ServiceException', 'Lambda is unable to process the request', 500),
        },
      });
      const r = await c.run(c.plan([{ id: 'a' }]));
      expect(r.execution.status, JSON.stringify(r.execution.error)).toBe('SUCCEEDED');
      await expectMeasured(c, r.runId, ['a']);
      // one agent: a retried send may find the command already sent, but must not start a second
      expect(new Set(c.commandIds).size).toBe(1);
    },
  );
});

describe.concurrent('summary queries on the engine', () => {
  // The SummaryQueries Map's Athena tasks: the path's copy is the first engine call, the summary's
  // SELECTs follow. One that fails fails the Map; the run ends FAILED as when SummarizeRun fails,
  // its path measured, routes restored and the lock released (the invariants), no summary written.
  faultCase(
    'summary queries',
    'a summary query the engine fails: the run ends FAILED after ReleaseLock, its path measured, no summary',
    async (c) => {
      c.faults.add({
        site: 'query.execute',
        nth: 3,
        action: { throw: () => new Error('HIVE_EXCEEDED_LIMIT: query exhausted resources') },
      });
      const r = await c.run(c.plan([{ id: 'a' }]));
      expect(r.execution.status).toBe('FAILED');
      expect(r.execution.error?.name).toBe('RunFailedError');
      await expectMeasured(c, r.runId, ['a']);
      expect(await new DirStore(c.dir).getText(`reports/run=${r.runId}/summary.json`)).toBeUndefined();
      const m = await manifest(c, r.runId);
      expect(m.endedAt).toBeDefined();
      // Why, in the manifest and in what the run prints: the Map's error, as Step Functions gives
      // it (the failed query's own error is its child execution's). The status is the
      // measurements' (the path was measured).
      expect(m.status).toBe('succeeded');
      expect(m.summaryFailure?.error).toMatch(
        /^States\.ExceedToleratedFailureThreshold: 1 of \d+ child executions of SummaryQueries failed/,
      );
      expect(r.failures).toEqual([`the summary failed: ${m.summaryFailure?.error}`]);
    },
  );

  faultCase(
    'summary queries',
    "SummarizeRun fails for good: the manifest records the Lambda's message, the measurements stand",
    async (c) => {
      c.faults.add({
        site: 'lambda.SummarizeRun',
        action: { throw: () => new Error('cannot compose the summary: a query result is missing') },
      });
      const r = await c.run(c.plan([{ id: 'a' }]));
      expect(r.execution.status).toBe('FAILED');
      expect(r.execution.error?.name).toBe('RunFailedError');
      await expectMeasured(c, r.runId, ['a']);
      const m = await manifest(c, r.runId);
      expect(m.status).toBe('succeeded');
      expect(m.summaryFailure?.error).toBe('Error: cannot compose the summary: a query result is missing');
      expect(r.failures).toEqual(['the summary failed: Error: cannot compose the summary: a query result is missing']);
    },
  );
});
