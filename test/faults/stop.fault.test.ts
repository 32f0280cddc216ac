/**
 * Stop in every state, then rerun. A stop is what each driver does:
 *   - StopExecution (AWS): the execution ends ABORTED at once; a Task already invoked runs to
 *     its end anyway, here the worst way round — after the cleanup the EventBridge rule runs
 *     (functions/pipeline/abandoned-run.ts) has finished;
 *   - an interrupt (Ctrl-C on the local driver): the agent is stopped and the run winds down
 *     through RestoreRoutes, SummarizeRun and ReleaseLock;
 *   - kill -9 of the local driver: nothing runs after it; the lock file names a dead process.
 * Then the same plan runs again under a new run id, and the invariants are checked over both.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type RunManifest, readManifest } from '../../core/run-manifest.js';
import { type CleanupResult, cleanupAfterExecution } from '../../functions/pipeline/abandoned-run.js';
import { DirStore } from '../../local/dir-store.js';
import { DuckDbQueryEngine } from '../../local/duckdb-query.js';
import type { RunMachineResult } from '../../local/local-execution.js';
import { runStates } from '../../statemachine/asl.js';
import type { AwsWorld, WorldRoute } from './aws-world.js';
import { type FaultCase, faultCase, lockOfDeadProcess } from './harness.js';

const RTB = 'rtb-0f57';
const ROUTES: Record<string, WorldRoute[]> = {
  [RTB]: [
    { DestinationCidrBlock: '10.0.0.0/16', GatewayId: 'local', State: 'active', Origin: 'CreateRouteTable' },
    {
      DestinationCidrBlock: '10.20.0.0/16',
      VpcPeeringConnectionId: 'pcx-0f57',
      State: 'active',
      Origin: 'CreateRoute',
    },
    { DestinationCidrBlock: '10.30.0.0/16', NatGatewayId: 'nat-0f57', State: 'active', Origin: 'CreateRoute' },
  ],
};

/** One path that goes through every state: reboot, credit wait, two route swaps, probe, collect. */
function plan(c: FaultCase) {
  return c.plan(
    [
      {
        id: 'a',
        reboot: true,
        routes: [
          { routeTableId: RTB, destination: '10.20.0.0/16', via: { transitGatewayId: 'tgw-0f57' } },
          { routeTableId: RTB, destination: '10.30.0.0/16', via: { transitGatewayId: 'tgw-0f57' } },
        ],
      },
    ],
    { creditWaitSeconds: 1 },
  );
}

async function manifest(c: FaultCase, runId: string): Promise<RunManifest> {
  return ((await readManifest(new DirStore(c.dir), runId)) ?? null) as RunManifest;
}

/** The rerun after the stop measures the path and leaves everything as it was. */
async function rerun(c: FaultCase): Promise<void> {
  c.aws.faults = {};
  const r = await c.run(plan(c), { awsFleet: true });
  const m = await manifest(c, r.runId);
  expect(r.execution.status, JSON.stringify(r.execution.error)).toBe('SUCCEEDED');
  expect(m.paths[0].status, m.paths[0].error).toBe('succeeded');
}

/**
 * The EventBridge rule's cleanup after the stop: its own invocation with its own query engine
 * (the run's closes when the run ends), so its salvage really rewrites the Parquet copy.
 */
async function cleanUp(c: FaultCase, runId: string): Promise<CleanupResult> {
  const engine = await DuckDbQueryEngine.open(c.dir);
  try {
    return await cleanupAfterExecution(
      { ...(c.deps as NonNullable<FaultCase['deps']>), query: engine },
      { runId, status: 'ABORTED' },
    );
  } finally {
    engine.close();
  }
}

/**
 * Stopping the run stops the child executions it is waiting on: a chunk or path execution that
 * did not end SUCCEEDED was stopped with it (ABORTED), none failed or ran on; a stop inside a
 * path state (`inPath`) found that path's execution running.
 */
function childrenStopped(execution: RunMachineResult, inPath = false, failedBefore: string[] = []): void {
  const unfinished = execution.children.filter((x) => x.status !== 'SUCCEEDED');
  for (const x of unfinished)
    expect(x.status, x.name).toBe(x.status === 'FAILED' && failedBefore.includes(x.state) ? 'FAILED' : 'ABORTED');
  if (inPath) expect(unfinished.map((x) => x.state).sort()).toEqual(['MeasureChunk', 'MeasurePath']);
}

/**
 * StopExecution while the `nth` call at `site` runs: that call is held until the cleanup has run
 * (a Task that was invoked runs to its end anyway), then the same plan runs again.
 */
async function stopInside(c: FaultCase, site: string, nth: number, failedBefore: string[] = []): Promise<void> {
  const stop = new AbortController();
  let cleaned!: () => void;
  const cleanedUp = new Promise<void>((r) => {
    cleaned = r;
  });
  c.faults.add({
    site,
    nth,
    action: {
      hook: async () => {
        stop.abort();
        await cleanedUp;
      },
    },
  });
  const r = await c.run(plan(c), { awsFleet: true, signal: stop.signal });
  expect(r.execution.status).toBe('ABORTED');
  childrenStopped(r.execution, false, failedBefore);
  await cleanUp(c, r.runId);
  cleaned();
  await c.settled();
  await rerun(c);
}

const TASKS = [
  'ValidatePlan',
  'BeginPath',
  'StopClient',
  'CheckStopped',
  'StartClient',
  'CheckReady',
  'SwapRoutes',
  'SendProbe',
  'PollProbe',
  'CollectOutput',
  'EndPath',
  'RecordPathFailure',
  'RestoreRoutes',
  'PrepareSummary',
  'SummarizeRun',
  'ReleaseLock',
];
const WAITS = ['WaitForStop', 'WaitForReady', 'WaitForCredits', 'WaitForProbe'];

/** RecordPathFailure runs only for a failed path: the probe command fails for it. */
function failProbeFor(c: FaultCase, state: string): void {
  if (state !== 'RecordPathFailure') return;
  c.faults.add({
    site: 'runner.status',
    // the stopped run's command only: the rerun measures
    match: (a) => String(a[0]).includes('-fault-1-'),
    action: {
      map: (_a, inv) =>
        (inv as { status: string }).status === 'Success' ? { status: 'Failed', detail: 'agent exited 1' } : inv,
    },
  });
}

describe.concurrent('stop (StopExecution) in every state, then rerun', () => {
  for (const state of TASKS) {
    faultCase(
      'stop in every state, then rerun',
      `StopExecution while ${state} runs; its Lambda finishes after the cleanup`,
      async (c) => {
        failProbeFor(c, state);
        await stopInside(c, `lambda.${state}`, 1);
      },
      { routes: ROUTES },
    );
  }
  // CopyToParquet is no Lambda: Step Functions has the engine run the copy's UNLOAD. Stopped
  // while the engine writes, the cleanup's salvage writes the copy itself; the stopped state's
  // UNLOAD then finds its location taken and is refused, as Athena refuses a non-empty one.
  faultCase(
    'stop in every state, then rerun',
    "StopExecution while CopyToParquet's UNLOAD runs; it ends after the cleanup",
    async (c) => {
      await stopInside(c, 'query.execute', 1);
    },
    { routes: ROUTES },
  );
  // CopyFailedPath: the first UNLOAD (CopyToParquet) fails, so the path fails with its samples
  // kept and RecordPathFailure hands their copy to CopyFailedPath, the second UNLOAD.
  faultCase(
    'stop in every state, then rerun',
    "StopExecution while CopyFailedPath's UNLOAD runs; it ends after the cleanup",
    async (c) => {
      c.faults.add({ site: 'query.execute', nth: 1, action: { throw: () => new Error('engine refused the copy') } });
      await stopInside(c, 'query.execute', 2);
    },
    { routes: ROUTES },
  );
  // ReleaseLockAfterSummaryFailure: ReleaseLock's Lambda after a summary state failed (here the
  // first summary query, the engine's second call after the path's copy).
  faultCase(
    'stop in every state, then rerun',
    'StopExecution while ReleaseLockAfterSummaryFailure runs (a summary query failed); its Lambda finishes after the cleanup',
    async (c) => {
      c.faults.add({ site: 'query.execute', nth: 2, action: { throw: () => new Error('engine refused the query') } });
      // The failed query's child execution ended FAILED before the stop.
      await stopInside(c, 'lambda.ReleaseLockAfterSummaryFailure', 1, ['SummaryQueries']);
    },
    { routes: ROUTES },
  );
  // RunSummaryQuery: the SummaryQueries Map's Athena tasks, after the path's copy (the first
  // call). Stopped while one runs, the query ends after the cleanup and its rows are never read;
  // as after a stop in SummarizeRun, no summary is stored (`pathbench report` computes and prints
  // one from the samples, and stores nothing).
  faultCase(
    'stop in every state, then rerun',
    "StopExecution while a summary query runs (SummaryQueries' RunSummaryQuery); it ends after the cleanup",
    async (c) => {
      await stopInside(c, 'query.execute', 2);
    },
    { routes: ROUTES },
  );
  for (const state of WAITS) {
    faultCase(
      'stop in every state, then rerun',
      `StopExecution in ${state}`,
      async (c) => {
        const stop = new AbortController();
        const r = await c.run(plan(c), {
          awsFleet: true,
          signal: stop.signal,
          // long enough for the stop to land inside the Wait
          waits: { [state]: 1000 },
          onEvent: (e) => {
            if (e.type === 'StateEntered' && e.state?.name === state) stop.abort();
          },
        });
        expect(r.execution.status).toBe('ABORTED');
        // The run was stopped while the path's execution waited: the path's and the chunk's stopped too.
        childrenStopped(r.execution, true);
        await cleanUp(c, r.runId);
        await c.settled();
        await rerun(c);
      },
      { routes: ROUTES },
    );
  }

  faultCase(
    'stop in every state, then rerun',
    'StopExecution between the two route swaps of SwapRoutes (the cleanup runs in between)',
    async (c) => {
      // The first route is swapped; the stop comes; the second swap lands after the cleanup.
      await stopInside(c, 'routes.point', 2);
    },
    { routes: ROUTES },
  );
});

/** States the cases above do not stop in, and why. */
const NOT_STOPPED: Record<string, string> = {
  MeasureChunk:
    "waits on the chunk's execution: every stop above in a path state is a stop of the run while it waits (the stop reaches the chunk and the path through it)",
  MeasurePath: "waits on the path's execution: every stop above in a path state is a stop of the chunk while it waits",
  ReleaseLockAfterReject: 'runs only after ValidatePlan refused the plan, before anything started',
  PrepareTaskProbe: 'ECS task clients only; this fleet is EC2 instances',
  ProbeTask: 'ECS task clients only; this fleet is EC2 instances',
  EndTaskProbe: 'ECS task clients only; this fleet is EC2 instances',
};

describe('stop suite coverage', () => {
  it('stops in every Task and Wait state of the run, chunk and path definitions, or says why not', () => {
    const stopped = [
      ...TASKS,
      ...WAITS,
      'CopyToParquet',
      'CopyFailedPath',
      'RunSummaryQuery',
      'ReleaseLockAfterSummaryFailure',
    ];
    const states = runStates()
      .filter(([, st]) => st.Type === 'Task' || st.Type === 'Wait')
      .map(([name]) => name);
    expect([...new Set([...stopped, ...Object.keys(NOT_STOPPED)])].sort()).toEqual([...new Set(states)].sort());
  });
});

describe.concurrent('stop while ValidatePlan writes, then rerun', () => {
  faultCase(
    'stop in every state, then rerun',
    'StopExecution while ValidatePlan writes its manifest: found at its second check, the manifest is finished as stopped',
    async (c) => {
      const stop = new AbortController();
      let cleaned!: () => void;
      const cleanedUp = new Promise<void>((r) => {
        cleaned = r;
      });
      // Past ValidatePlan's first check; the cleanup finds no manifest yet and marks the run stopped.
      c.faults.add({
        site: 'store.put',
        match: (a) => String(a[0]) === 'runs/run=fault-1/manifest.json',
        times: 1,
        action: {
          hook: async () => {
            stop.abort();
            await cleanedUp;
          },
        },
      });
      const r = await c.run(plan(c), { awsFleet: true, signal: stop.signal });
      expect(r.execution.status).toBe('ABORTED');
      await cleanUp(c, r.runId);
      cleaned();
      await c.settled();
      const m = await manifest(c, r.runId);
      expect(m.status).toBe('failed');
      expect(m.notes?.join(' ')).toMatch(/ABORTED while ValidatePlan ran/);
      await rerun(c);
    },
    { routes: ROUTES },
  );
});

describe.concurrent('stop while probing: the stop trap uploads after the cleanup salvaged', () => {
  faultCase(
    'stop in every state, then rerun',
    'StopExecution while probing; the last trial reaches S3 after the first salvage: the late sweep keeps it, once',
    async (c) => {
      const stop = new AbortController();
      // CancelCommand returns at once while the document's stop trap still uploads (slowly).
      let trapDone: Promise<void> = Promise.resolve();
      c.faults.add({
        site: 'runner.cancel',
        times: 1,
        action: {
          replace: async (a) => {
            const runner = (c.deps as NonNullable<FaultCase['deps']>).runner;
            trapDone = runner.cancel(a[0] as string, a[1] as never);
          },
        },
      });
      c.faults.add({ site: 'raw.put', match: (a) => String(a[0]).startsWith('raw/path=a/'), action: { delayMs: 300 } });
      const runId = 'fault-1';
      const input = { runId, status: 'ABORTED', stoppedAt: Date.now(), lateSweepAfterMs: 130_000 };
      // The late sweep's wait (the SwapRoutes timeout since the stop) outlasts the trap's upload.
      // It runs as its own invocation with its own query engine (the run's closes when the run ends).
      // Closed by this case itself: the global onTestFinished of a concurrent test may run when
      // another test of the block finishes (vitest does not track concurrent tests in global
      // hooks), and closed this engine under the late sweep in CI.
      const engine = await DuckDbQueryEngine.open(c.dir);
      try {
        const lateDeps = () => ({
          ...(c.deps as NonNullable<FaultCase['deps']>),
          query: engine,
          sleep: () => trapDone,
        });
        let cleanup: Promise<CleanupResult> | undefined;
        const r = await c.run(c.plan([{ id: 'a', count: 2000 }]), {
          runId,
          awsFleet: true,
          signal: stop.signal,
          waits: { WaitForProbe: 3000 },
          onEvent: (e) => {
            if (e.type !== 'StateEntered' || e.state?.name !== 'WaitForProbe' || cleanup) return;
            // The EventBridge rule's cleanup runs while the agent still measures.
            cleanup = new Promise((res) => setTimeout(res, 6000)).then(() => {
              stop.abort();
              return cleanupAfterExecution(lateDeps(), { ...input, stoppedAt: Date.now() });
            });
          },
        });
        expect(r.execution.status).toBe('ABORTED');
        const out = await (cleanup as Promise<CleanupResult>);
        expect(out.notes.join(' | ')).toMatch(/late sweep: path a: kept \d+ sample/);
        // A retried cleanup counts nothing twice.
        await cleanupAfterExecution(lateDeps(), input);
        await c.settled();
        const m = await manifest(c, r.runId);
        expect(m.status).toBe('failed');
        expect(m.paths[0].probes.reduce((n, p) => n + p.samples, 0)).toBeGreaterThan(0);
      } finally {
        engine.close();
      }
    },
  );
});

describe.concurrent('interrupt (Ctrl-C on the local driver) in a state, then rerun', () => {
  for (const state of ['SwapRoutes', 'SendProbe', 'WaitForProbe', 'PollProbe', 'CollectOutput']) {
    faultCase(
      'stop in every state, then rerun',
      `interrupt in ${state}`,
      async (c) => {
        const stop = new AbortController();
        const r = await c.run(plan(c), {
          awsFleet: true,
          interrupt: stop.signal,
          onEvent: (e) => {
            if (e.type === 'StateEntered' && e.state?.name === state) stop.abort();
          },
        });
        expect(r.interrupted).toBe(true);
        expect(r.execution.status).not.toBe('ABORTED');
        await rerun(c);
      },
      { routes: ROUTES },
    );
  }
});

function swappedIn(aws: AwsWorld): number {
  return aws.snapshot()[RTB].filter((r) => r.TransitGatewayId).length;
}

describe.concurrent('kill -9 of the local driver, then rerun', () => {
  for (const state of ['SwapRoutes', 'WaitForProbe']) {
    faultCase(
      'stop in every state, then rerun',
      `kill -9 in ${state}: the rerun puts the routes back`,
      async (c) => {
        const stop = new AbortController();
        // Nothing runs after the kill: the swap in progress completes (as its EC2 calls would), no cleanup.
        if (state === 'SwapRoutes')
          c.faults.add({ site: 'lambda.SwapRoutes', nth: 1, action: { hook: () => stop.abort() } });
        const r = await c.run(plan(c), {
          awsFleet: true,
          signal: stop.signal,
          waits: { WaitForProbe: 5000 },
          onEvent: (e) => {
            if (e.type === 'StateEntered' && e.state?.name === state) stop.abort();
          },
        });
        expect(r.execution.status).toBe('ABORTED');
        await c.settled();
        expect(swappedIn(c.aws)).toBe(2);
        await lockOfDeadProcess(c.dir, r.runId);
        await rerun(c);
      },
      { routes: ROUTES },
    );
  }

  faultCase(
    'stop in every state, then rerun',
    'kill -9 in WaitForProbe, its lock already gone: the rerun finds the running manifest and puts the routes back',
    async (c) => {
      const stop = new AbortController();
      const r = await c.run(plan(c), {
        awsFleet: true,
        signal: stop.signal,
        waits: { WaitForProbe: 5000 },
        onEvent: (e) => {
          if (e.type === 'StateEntered' && e.state?.name === 'WaitForProbe') stop.abort();
        },
      });
      expect(r.execution.status).toBe('ABORTED');
      await c.settled();
      expect(swappedIn(c.aws)).toBe(2);
      // The lock is free (deleted by hand, or lost with the host's /run): only the manifest says running.
      await rm(join(c.dir, '.lock'), { recursive: true, force: true });
      expect((await manifest(c, r.runId)).status).toBe('running');
      await rerun(c);
      expect((await manifest(c, r.runId)).status).toBe('failed');
    },
    { routes: ROUTES },
  );
});
