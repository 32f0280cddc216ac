/**
 * The real ASL file, run in-process with fake time (every Wait overridden to 0 ms), through the
 * wiring table and real handlers. Fakes stand in for the instance, route tables and the remote
 * command only; store, DuckDB and lock are the real local adapters.
 */

import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { keys } from '../../core/keys.js';
import { pathManifestSchema } from '../../core/path-manifest.js';
import { parsePlan } from '../../core/plan.js';
import { type ManifestIndex, manifestIndexSchema, type RunManifest, readManifest } from '../../core/run-manifest.js';
import { type Summary, summarySchema } from '../../core/run-summary.js';
import type { SampleRecord } from '../../core/sample-record.js';
import { collectOutput } from '../../functions/pipeline/collect.js';
import { POLL_LIMITS, probePollBound, probeTiming } from '../../functions/pipeline/limits.js';
import { sendProbe } from '../../functions/pipeline/probe-command.js';
import { SUMMARY_QUERIES } from '../../functions/pipeline/summary-queries.js';
import { runStateMachine } from '../../local/asl-interpreter.js';
import type { DirStore } from '../../local/dir-store.js';
import { allEvents, type ExecutionEvent } from '../../local/local-execution.js';
import {
  FakeFleet,
  FakeRoutes,
  FakeRunner,
  noRetryWaits,
  noWaits,
  scenarioDeps,
  scenarioPlan,
} from '../helpers/fakes.js';

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

const entered = (events: ExecutionEvent[]) => events.filter((e) => e.type === 'StateEntered').map((e) => e.state?.name);

/**
 * A stored document as JSON; a manifest or summary is also checked to read back whole through
 * its schema, so a field the pipeline writes and the schema lacks is caught here. A manifest is
 * its index and each path's own object, checked one by one and returned assembled.
 */
async function read<T>(store: DirStore, key: string): Promise<T> {
  const text = await store.getText(key);
  const json = JSON.parse(text ?? 'null');
  if (key.endsWith('/manifest.json') && json !== null) {
    const runId = /run=([^/]+)\//.exec(key)?.[1] ?? '';
    expect(manifestIndexSchema.parse(json)).toEqual(json);
    for (const id of (json as ManifestIndex).pathIds) {
      const p = JSON.parse((await store.getText(keys.pathManifest(runId, id))) ?? 'null');
      expect(pathManifestSchema.parse(p)).toEqual(p);
    }
    return (await readManifest(store, runId)) as T;
  }
  if (key.endsWith('/summary.json') && json !== null) expect(summarySchema.parse(json)).toEqual(json);
  return json as T;
}

/**
 * Runs one path whose probe command is killed (TimedOut, no stop marker ever) with the runner's
 * stop grace of `graceSeconds` and a clock 7 s on at every look; checks the path failed at
 * PollProbe for it, and returns how many times PollProbe ran.
 */
async function pollsOfKilledCommand(
  deps: Awaited<ReturnType<typeof setup>>['deps'],
  store: DirStore,
  graceSeconds: number,
  runId: string,
): Promise<number> {
  const silent = new FakeRunner(store, { A: 'stopped-silent' });
  silent.stopUploadGraceSeconds = graceSeconds;
  deps.runner = silent;
  let t = Date.parse('2026-12-01T00:00:00Z');
  deps.now = () => {
    t += 7_000;
    return new Date(t);
  };
  const r = await runStateMachine({ deps, input: { plan: scenarioPlan(['A']) }, runId, waitTimeOverrides: noWaits() });
  expect(r.status).toBe('SUCCEEDED');
  const a = (await read<RunManifest>(store, keys.manifest(runId))).paths[0];
  expect(a).toMatchObject({ status: 'failed', failedStep: 'PollProbe' });
  expect(a.error).toMatch(/TimedOut/);
  return entered(allEvents(r)).filter((n) => n === 'PollProbe').length;
}

describe('state machine scenarios', () => {
  it('HappyPath: reboots, waits, swaps and restores routes, measures every path, summarizes', async () => {
    // Prepare
    const fleet = new FakeFleet({ pollsToSettle: 2 });
    const routes = new FakeRoutes();
    routes.table.set('ap-northeast-1|rtb-tokyo|10.1.0.0/16', 'vpcPeeringConnectionId:pcx-1');
    const { deps, store, query } = await setup({ fleet, routes });
    // Every query a Lambda runs itself, by label (the engine's own for the Athena tasks' SELECTs: 'query execution').
    const inLambda: string[] = [];
    const direct = query.query.bind(query);
    query.query = (sql, params, label) => {
      inLambda.push(label);
      return direct(sql, params, label);
    };
    // Act
    const r = await runStateMachine({
      deps,
      input: { plan: scenarioPlan() },
      runId: 'happy',
      waitTimeOverrides: noWaits(),
    });
    // Assess: the path taken
    expect(r.status).toBe('SUCCEEDED');
    const names = entered(allEvents(r));
    expect(names.filter((n) => n === 'StopClient')).toHaveLength(3);
    expect(names.filter((n) => n === 'CheckStopped').length).toBeGreaterThanOrEqual(6);
    expect(names.filter((n) => n === 'SwapRoutes')).toHaveLength(1);
    expect(names.filter((n) => n === 'CollectOutput')).toHaveLength(3);
    expect(names).not.toContain('RecordPathFailure');
    // The finish: the summary's queries are Athena tasks, each a child execution of SummaryQueries.
    const own = entered(r.events);
    expect(own.slice(own.indexOf('RestoreRoutes'))).toEqual([
      'RestoreRoutes',
      'PrepareSummary',
      'SummaryQueries',
      'SummarizeRun',
      'ReleaseLock',
      'RunOutcome',
      'RunSucceeded',
    ]);
    const queries = r.children.filter((c) => c.state === 'SummaryQueries');
    expect(queries).toHaveLength(SUMMARY_QUERIES.length);
    for (const q of queries) expect(entered(q.events)).toEqual(['RunSummaryQuery', 'SummaryQueryDone']);
    // SummarizeRun composed the summary from their results: no summary query ran in a Lambda.
    expect(inLambda.filter((l) => l.endsWith('-happy'))).toEqual([]);
    expect(inLambda.filter((l) => l === 'query execution')).toHaveLength(SUMMARY_QUERIES.length);
    // routes: Tokyo restored to peering, Osaka's created route removed again
    expect(routes.table.get('ap-northeast-1|rtb-tokyo|10.1.0.0/16')).toBe('vpcPeeringConnectionId:pcx-1');
    expect(routes.table.has('ap-northeast-3|rtb-osaka|10.0.0.0/16')).toBe(false);
    expect(routes.calls).toContain('point ap-northeast-1|rtb-tokyo|10.1.0.0/16 transitGatewayId:tgw-1');
    // contract layout and summary
    expect(await store.list('samples/path=A/run=happy/')).toEqual(['samples/path=A/run=happy/tcp-connect-1.jsonl']);
    const summary = await read<Summary>(store, keys.report('happy', 'json'));
    expect(summary.status).toBe('succeeded');
    expect(summary.paths.map((p) => p.id)).toEqual(['A', 'B', 'C']);
    const res = summary.paths[0].results[0];
    expect(res).toMatchObject({ probe: 'tcp-connect', metric: 'connect_rtt_ms', n: 9, loss: 0.1 });
    expect(summary.paths[0].steps.map((s) => s.name)).toEqual(['Reboot', 'WaitForCredits', 'Probe', 'Collect']);
    expect(summary.paths[1].steps.map((s) => s.name)).toContain('SwapRoutes');
    const manifest = await read<RunManifest>(store, keys.manifest('happy'));
    expect(manifest.status).toBe('succeeded');
    expect(manifest.restore?.status).toBe('ok');
    expect(await deps.lock.current()).toBeUndefined();
    expect(r.output).toEqual({ runId: 'happy', status: 'succeeded', summaryKey: 'reports/run=happy/summary.json' });
  });

  it('CreditPlateau: the client bandwidth from BeginPath reaches the manifest and summary; a trial at it is flagged', async () => {
    // Prepare: the lab's token bucket as the client's network facts; three captured iperf3 runs
    // (A: the tbf cliff, B: paced at 195 Mbit/s from the first interval, C: unshaped loopback).
    const network = { instanceType: 'netns', azId: 'lab-az1', baselineBps: 200e6, peakBps: 1e9 };
    const fleet = new FakeFleet({ network });
    const { deps, store, query } = await setup({ fleet });
    const fixture = (name: string) => readFileSync(join(import.meta.dirname, '../fixtures/iperf3', name), 'utf8');
    deps.runner = new FakeRunner(
      store,
      {},
      {},
      {
        A: { iperf3: fixture('tcp-tbf-cliff.json') },
        B: { iperf3: fixture('tcp-paced-baseline.json') },
        C: { iperf3: fixture('tcp-p2.json') },
      },
    );
    const base = scenarioPlan();
    const plan = {
      ...base,
      defaults: { ...base.defaults, reboot: false, probes: [{ kind: 'iperf3', name: 'tput', durationSeconds: 8 }] },
    };
    // Act
    const r = await runStateMachine({ deps, input: { plan }, runId: 'plateau', waitTimeOverrides: noWaits() });
    // Assess: the state machine took no new path; every path asked the fleet once
    expect(r.status).toBe('SUCCEEDED');
    expect(entered(allEvents(r)).filter((n) => n === 'BeginPath')).toHaveLength(3);
    expect(fleet.calls.filter((c) => c.startsWith('network '))).toHaveLength(3);
    const manifest = await read<RunManifest>(store, keys.manifest('plateau'));
    expect(manifest.paths.map((p) => p.client)).toEqual([network, network, network]);
    const [a, b, c] = manifest.paths;
    expect(a.probes[0].credit).toMatchObject([{ trial: 1, firstLowIndex: 5 }]);
    expect(a.probes[0].atBaseline).toBeUndefined();
    expect(b.probes[0].credit).toBeUndefined();
    expect(b.probes[0].atBaseline).toEqual([
      { trial: 1, median: expect.any(Number), baselineBps: 200e6, intervals: 8 },
    ]);
    expect(b.probes[0].atBaseline?.[0].median).toBeCloseTo(195e6, -5);
    expect(b.notes).toContain(
      "tput trial 1 sat at the client's baseline bandwidth from its first interval (median 0.20G over 8 intervals, baseline 0.20G, peak 1.0G): the burst credits were spent, it measured the instance, not the path",
    );
    expect(c.probes[0].atBaseline).toBeUndefined();
    // the samples' flag column
    const samples = ((await store.getText('samples/path=B/run=plateau/tput-1.jsonl')) ?? '')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as SampleRecord)
      .filter((x) => x.metric === 'throughput_bps');
    expect(samples).toHaveLength(8);
    expect(new Set(samples.map((x) => x.flag))).toEqual(new Set(['at-baseline']));
    const flagRows = await query.query(
      'SELECT path, flag, COUNT(*) AS n FROM samples WHERE run = ? AND flag IS NOT NULL GROUP BY path, flag ORDER BY path',
      ['plateau'],
      'flags',
    );
    expect(flagRows.map((x) => [x.path, x.flag, Number(x.n)])).toEqual([
      ['A', 'credit-exhausted', 7],
      ['B', 'at-baseline', 8],
    ]);
    // the summary: flags next to each other, provenance from the manifest's client
    const summary = await read<Summary>(store, keys.report('plateau', 'json'));
    const tput = (id: string) =>
      summary.paths.find((p) => p.id === id)?.results.find((x) => x.metric === 'throughput_bps');
    // (a handful of intervals is always a thin tail: those flags are beside the point here)
    const credit = (id: string) =>
      tput(id)?.flags.filter((f) => !f.startsWith('thin-tail') && !f.startsWith('few-samples'));
    expect(credit('A')).toEqual(['credit-exhausted(trial 1 @ interval 5: 0.96G→0.20G)']);
    expect(credit('B')).toEqual(['at-baseline']);
    expect(tput('B')?.unflagged).toMatchObject({ n: 0, p50: null });
    expect(credit('C')).toEqual([]);
    for (const p of summary.paths) expect(p.provenance).toMatchObject(network);
  });

  it('CreditPlateau: a fleet that cannot tell the bandwidth leaves a note, not a failed path', async () => {
    const fleet = new FakeFleet({ network: new Error('UnauthorizedOperation: ec2:DescribeInstanceTypes') });
    const { deps, store } = await setup({ fleet });
    const r = await runStateMachine({
      deps,
      input: { plan: scenarioPlan(['A']) },
      runId: 'no-network',
      waitTimeOverrides: noWaits(),
    });
    expect(r.status).toBe('SUCCEEDED');
    const manifest = await read<RunManifest>(store, keys.manifest('no-network'));
    expect(manifest.paths[0]).toMatchObject({ status: 'succeeded' });
    expect(manifest.paths[0].client).toBeUndefined();
    expect(manifest.paths[0].notes).toContain(
      'client network facts (instance type, baseline / peak bandwidth) unavailable: UnauthorizedOperation: ec2:DescribeInstanceTypes',
    );
    const summary = await read<Summary>(store, keys.report('no-network', 'json'));
    const prov = summary.paths[0].provenance ?? {};
    for (const k of ['instanceType', 'azId', 'baselineBps', 'peakBps']) expect(prov).not.toHaveProperty(k);
  });

  it('ProbeFails: the failing path is recorded, the next path is still measured, routes restored', async () => {
    const routes = new FakeRoutes();
    const { deps, store } = await setup({ routes });
    deps.runner = new FakeRunner(store, { B: 'fail' });
    const r = await runStateMachine({
      deps,
      input: { plan: scenarioPlan() },
      runId: 'probe-fails',
      waitTimeOverrides: noWaits(),
    });
    expect(r.status).toBe('SUCCEEDED');
    expect(entered(allEvents(r))).toContain('FailedPollProbe');
    const summary = await read<Summary>(store, keys.report('probe-fails', 'json'));
    expect(summary.status).toBe('partial');
    const b = summary.paths.find((p) => p.id === 'B');
    expect(b).toMatchObject({ status: 'failed', failedStep: 'PollProbe' });
    expect(b?.error).toMatch(/^ProbeCommandFailedError: probe command cmd-2 Failed: agent exited 1/);
    expect(summary.paths.find((p) => p.id === 'C')?.status).toBe('succeeded');
    expect(summary.paths.find((p) => p.id === 'C')?.results[0].n).toBe(9);
    // B swapped routes before its probe failed: they are back
    expect(routes.table.size).toBe(0);
    expect((await read<RunManifest>(store, keys.manifest('probe-fails'))).restore?.status).toBe('ok');
  });

  it('ProbeCrashes: samples the agent wrote before it died are kept, the path still fails', async () => {
    const { deps, store } = await setup();
    deps.runner = new FakeRunner(store, { A: 'crash' });
    const base = scenarioPlan(['A', 'C']);
    const plan = {
      ...base,
      defaults: {
        ...base.defaults,
        probes: [
          { kind: 'tcp-connect', name: 'first', count: 10, intervalMs: 10 },
          { kind: 'tcp-connect', name: 'second', count: 10, intervalMs: 10 },
        ],
      },
    };
    const r = await runStateMachine({ deps, input: { plan }, runId: 'crash', waitTimeOverrides: noWaits() });
    expect(r.status).toBe('SUCCEEDED');
    // The three complete lines of the first probe are samples; the cut-off fourth is dropped.
    expect(await store.list('samples/path=A/run=crash/')).toEqual(['samples/path=A/run=crash/first-1.jsonl']);
    const manifest = await read<RunManifest>(store, keys.manifest('crash'));
    const a = manifest.paths.find((p) => p.id === 'A');
    expect(a).toMatchObject({ status: 'failed', failedStep: 'PollProbe' });
    expect(a?.probes.map((p) => [p.probe, p.status, p.samples])).toEqual([
      ['first', 'ok', 3],
      ['second', 'failed', 0],
    ]);
    expect(a?.probes[1].reason).toMatch(/^no raw output: ProbeCommandFailedError: .*agent killed by signal 9/);
    expect(a?.notes).toContain(
      'kept 3 samples of first written before the probe command failed (1 line(s) cut off by the kill dropped)',
    );
    const summary = await read<Summary>(store, keys.report('crash', 'json'));
    const sa = summary.paths.find((p) => p.id === 'A');
    expect(sa).toMatchObject({ status: 'failed', failedStep: 'PollProbe' });
    expect(sa?.results.map((x) => [x.probe, x.n, x.loss])).toEqual([['first', 3, 0]]);
    expect(summary.paths.find((p) => p.id === 'C')?.status).toBe('succeeded');
  });

  it('ProbeNeverFinishes: the poll loop is bounded and fails that path with a timeout error', async () => {
    const { deps, store } = await setup();
    deps.runner = new FakeRunner(store, { A: 'hang' });
    const r = await runStateMachine({
      deps,
      input: { plan: scenarioPlan(['A', 'C']) },
      runId: 'hang',
      waitTimeOverrides: noWaits(),
    });
    expect(r.status).toBe('SUCCEEDED');
    const polls = entered(allEvents(r)).filter((n) => n === 'PollProbe').length;
    expect(polls).toBeGreaterThan(1);
    expect(polls).toBeLessThanOrEqual(POLL_LIMITS.probe + 1);
    const a = (await read<Summary>(store, keys.report('hang', 'json'))).paths[0];
    expect(a.status).toBe('failed');
    expect(a.error).toMatch(/^(ProbeTimeoutError|PollTimeoutError):.*cancelled$/);
    // the overrunning command was stopped before the next path started
    expect((deps.runner as FakeRunner).cancelled).toEqual(['cmd-1']);
    expect((await read<Summary>(store, keys.report('hang', 'json'))).paths[1].status).toBe('succeeded');
  });

  it("ProbeStoppedUploading: a TimedOut command's late upload is waited for, then salvaged; the path still fails", async () => {
    const { deps, store } = await setup();
    const runner = new FakeRunner(store, { A: 'stopped-upload' });
    runner.stopUploadGraceSeconds = 60;
    deps.runner = runner;
    const r = await runStateMachine({
      deps,
      input: { plan: scenarioPlan(['A', 'C']) },
      runId: 'late-upload',
      waitTimeOverrides: noWaits(),
    });
    expect(r.status).toBe('SUCCEEDED');
    // A's polls: TimedOut at the 1st, 2nd and 3rd (the upload lands at the 3rd); C's: Success at its 1st
    expect(entered(allEvents(r)).filter((n) => n === 'PollProbe')).toHaveLength(3 + 1);
    const manifest = await read<RunManifest>(store, keys.manifest('late-upload'));
    const a = manifest.paths.find((p) => p.id === 'A');
    expect(a).toMatchObject({ status: 'failed', failedStep: 'PollProbe' });
    expect(a?.error).toMatch(/^ProbeCommandFailedError: probe command cmd-1 TimedOut/);
    // the four lines the trap uploaded late are samples of the run
    const summary = await read<Summary>(store, keys.report('late-upload', 'json'));
    expect(summary.paths.find((p) => p.id === 'A')?.results.map((x) => [x.probe, x.n])).toEqual([['tcp-connect', 4]]);
    expect(summary.paths.find((p) => p.id === 'C')?.status).toBe('succeeded');
  });

  it('ProbeStoppedUploading: without the runner grace (or the marker), the path fails at the first TimedOut poll', async () => {
    const { deps, store } = await setup();
    // no grace (the local runner's case): the first TimedOut fails the path, nothing is waited for
    deps.runner = new FakeRunner(store, { A: 'stopped-upload' });
    const r = await runStateMachine({
      deps,
      input: { plan: scenarioPlan(['A']) },
      runId: 'no-grace',
      waitTimeOverrides: noWaits(),
    });
    expect(entered(allEvents(r)).filter((n) => n === 'PollProbe')).toHaveLength(1);
    // a grace but no marker ever (a KILL): bounded by the grace on the clock, not by the poll count
    const polls = await pollsOfKilledCommand(deps, store, 60, 'silent');
    expect(polls).toBeGreaterThan(1);
    expect(polls).toBeLessThan(12);
  });

  it("ProbeStoppedUploading: the grace's polls come out of the probe's poll budget, so the history bound holds", async () => {
    const { deps, store } = await setup();
    // A grace far longer than the budget (a KILL: no marker ever): without the budget it would
    // poll for an hour of clock, hundreds of times.
    const polls = await pollsOfKilledCommand(deps, store, 3600, 'grace-budget');
    const plan = parsePlan(scenarioPlan(['A']));
    if (!plan.ok) throw new Error(plan.problems.join('; '));
    const bound = probePollBound(probeTiming(plan.plan.paths[0].probes).timeoutSeconds, deps.fleet.pollSeconds);
    expect(polls).toBeGreaterThan(1);
    expect(polls).toBeLessThanOrEqual(bound);
  });

  it('StopNeverCompletes: the reboot poll is bounded by POLL_LIMITS.stopped', async () => {
    const { deps, store } = await setup({ fleet: new FakeFleet({ neverStops: true }) });
    const r = await runStateMachine({
      deps,
      input: { plan: scenarioPlan(['A']) },
      runId: 'stuck',
      waitTimeOverrides: noWaits(),
    });
    expect(entered(allEvents(r)).filter((n) => n === 'CheckStopped')).toHaveLength(POLL_LIMITS.stopped);
    const a = (await read<Summary>(store, keys.report('stuck', 'json'))).paths[0];
    expect(a).toMatchObject({ status: 'failed', failedStep: 'CheckStopped' });
    expect(a.error).toMatch(/^PollTimeoutError: client i-0123456789abcdef0 not stopped after 60 polls/);
  });

  it('StartCapacityFails: the capacity error fails that path only', async () => {
    const { deps, store } = await setup({ fleet: new FakeFleet({ startFails: true }) });
    const r = await runStateMachine({
      deps,
      input: { plan: scenarioPlan(['A']) },
      runId: 'capacity',
      waitTimeOverrides: noWaits(),
      retryIntervalOverrides: noRetryWaits(),
    });
    expect(r.status).toBe('SUCCEEDED');
    const a = (await read<Summary>(store, keys.report('capacity', 'json'))).paths[0];
    expect(a).toMatchObject({ status: 'failed', failedStep: 'StartClient' });
    expect(a.error).toMatch(/^InstanceCapacityError: InsufficientInstanceCapacity/);
  });

  it('RouteNeverActive: the swap fails that path and the original route is restored', async () => {
    const routes = new FakeRoutes('transitGatewayId:tgw-3');
    routes.table.set('ap-northeast-3|rtb-osaka|10.0.0.0/16', 'vpcPeeringConnectionId:pcx-1');
    const { deps, store } = await setup({ routes });
    const r = await runStateMachine({
      deps,
      input: { plan: scenarioPlan(['B']) },
      runId: 'blackhole',
      waitTimeOverrides: noWaits(),
    });
    expect(r.status).toBe('SUCCEEDED');
    const b = (await read<Summary>(store, keys.report('blackhole', 'json'))).paths[0];
    expect(b).toMatchObject({ status: 'failed', failedStep: 'SwapRoutes' });
    expect(routes.table.get('ap-northeast-3|rtb-osaka|10.0.0.0/16')).toBe('vpcPeeringConnectionId:pcx-1');
    expect(routes.table.has('ap-northeast-1|rtb-tokyo|10.1.0.0/16')).toBe(false);
  });

  it('UnparseableOutput: the path is marked failed at CollectOutput and the raw file is kept', async () => {
    const { deps, store } = await setup();
    deps.runner = new FakeRunner(store, { A: 'garbage' });
    await runStateMachine({
      deps,
      input: { plan: scenarioPlan(['A']) },
      runId: 'garbage',
      waitTimeOverrides: noWaits(),
    });
    const a = (await read<Summary>(store, keys.report('garbage', 'json'))).paths[0];
    expect(a).toMatchObject({ status: 'failed', failedStep: 'CollectOutput' });
    expect(await store.getText('raw/path=A/run=garbage/client=i-0123456789abcdef0/tcp-connect/1.jsonl')).toBe(
      'this is not JSON\n',
    );
  });

  it('CopyFails: the Parquet copy is a state of its own; a copy the engine fails fails the path, whose kept samples are copied after', async () => {
    const { deps, store, query } = await setup();
    const calls: string[] = [];
    const execute = query.execute.bind(query);
    let fail = true;
    query.execute = async (call) => {
      calls.push(call.QueryString.slice(0, 6));
      if (fail) {
        fail = false;
        throw new Error('HIVE_BAD_DATA: the engine stopped');
      }
      return execute(call);
    };
    const r = await runStateMachine({
      deps,
      input: { plan: scenarioPlan(['A', 'C']) },
      runId: 'copy',
      waitTimeOverrides: noWaits(),
    });
    expect(r.status).toBe('SUCCEEDED');
    const names = entered(allEvents(r));
    // A: collected, the copy failed, the failure recorded, its samples copied; C: collected, copied, ended.
    const a = names.slice(names.indexOf('CollectOutput'), names.indexOf('PathFailed') + 1);
    expect(a).toEqual([
      'CollectOutput',
      'CopyToParquet',
      'FailedCopyToParquet',
      'RecordPathFailure',
      'FailedPathHasSamples',
      'CopyFailedPath',
      'PathFailed',
    ]);
    expect(names.slice(names.lastIndexOf('CollectOutput'), names.indexOf('PathSucceeded') + 1)).toEqual([
      'CollectOutput',
      'CopyToParquet',
      'EndPath',
      'PathSucceeded',
    ]);
    // The copies (then the summary's SELECTs, which SummaryQueries runs after the paths).
    expect(calls.slice(0, 3)).toEqual(['UNLOAD', 'UNLOAD', 'UNLOAD']);
    expect(calls.slice(3)).toHaveLength(SUMMARY_QUERIES.length);
    expect(calls.slice(3).every((c) => /^(SELECT|WITH)/.test(c))).toBe(true);
    const manifest = await read<RunManifest>(store, keys.manifest('copy'));
    const pa = manifest.paths.find((p) => p.id === 'A')!;
    expect(pa).toMatchObject({ status: 'failed', failedStep: 'CopyToParquet' });
    expect(pa.error).toMatch(/HIVE_BAD_DATA: the engine stopped/);
    expect(pa.steps.find((x) => x.name === 'Collect')?.status).toBe('failed');
    expect(manifest.paths.find((p) => p.id === 'C')?.status).toBe('succeeded');
    // Both paths' copies are there: C's from CopyToParquet, A's from CopyFailedPath.
    expect(await store.list('parquet/')).toEqual([keys.parquetCopy('A', 'copy'), keys.parquetCopy('C', 'copy')]);
    const summary = await read<Summary>(store, keys.report('copy', 'json'));
    expect(summary.paths.find((p) => p.id === 'A')?.results[0]?.n).toBe(9);
  });

  it('a failed path without samples has no copy to write: CopyFailedPath is skipped', async () => {
    const { deps } = await setup({ fleet: new FakeFleet({ startFails: true }) });
    const r = await runStateMachine({
      deps,
      input: { plan: scenarioPlan(['A']) },
      runId: 'nocopy',
      waitTimeOverrides: noWaits(),
      retryIntervalOverrides: noRetryWaits(),
    });
    const names = entered(allEvents(r));
    expect(names).toContain('FailedPathHasSamples');
    expect(names).not.toContain('CopyFailedPath');
    expect(names).toContain('PathFailed');
  });

  it('InvalidPlan: the execution fails with every problem and nothing is written', async () => {
    const { deps, store } = await setup();
    const plan = scenarioPlan(['A']);
    (plan.paths[0].target as { port: number }).port = 70000;
    const r = await runStateMachine({ deps, input: { plan }, runId: 'bad', waitTimeOverrides: noWaits() });
    expect(r.status).toBe('FAILED');
    expect(r.error?.name).toBe('PlanInvalidError');
    expect(r.error?.message).toMatch(/paths\[0\]\.target\.port/);
    expect(await store.list('')).toEqual([]);
  });

  it('Locked: a second run on the same data directory is refused while the first holds the lock', async () => {
    const { deps, store } = await setup();
    await deps.lock.acquire('first');
    const r = await runStateMachine({
      deps,
      input: { plan: scenarioPlan(['A']) },
      runId: 'second',
      waitTimeOverrides: noWaits(),
    });
    expect(r.status).toBe('FAILED');
    expect(r.error?.name).toBe('RunLockedError');
    expect(r.error?.message).toMatch(/run first/);
    expect((await store.list('')).filter((k) => k !== 'lock.json')).toEqual([]);
    expect((await deps.lock.current())?.runId).toBe('first');
  });

  it('RunIdReused: a second run with the same id is refused and the first run is left intact', async () => {
    const { deps, store } = await setup();
    const first = await runStateMachine({
      deps,
      input: { plan: scenarioPlan(['A']) },
      runId: 'same',
      waitTimeOverrides: noWaits(),
    });
    expect(first.status).toBe('SUCCEEDED');
    const before = await store.getText(keys.manifest('same'));
    const second = await runStateMachine({
      deps,
      input: { plan: scenarioPlan(['A', 'C']) },
      runId: 'same',
      waitTimeOverrides: noWaits(),
    });
    expect(second.status).toBe('FAILED');
    expect(second.error?.name).toBe('RunExistsError');
    expect(await store.getText(keys.manifest('same'))).toBe(before);
    expect(await store.list('samples/path=C/')).toEqual([]);
    expect(await deps.lock.current()).toBeUndefined();
  });

  it('RestoreFails: the run fails, the failure is recorded, and the lock is still released', async () => {
    const routes = new FakeRoutes();
    routes.table.set('ap-northeast-1|rtb-tokyo|10.1.0.0/16', 'vpcPeeringConnectionId:pcx-1');
    const { deps, store } = await setup({ routes });
    const point = routes.point.bind(routes);
    routes.point = async (r, t) => {
      if (t.startsWith('vpcPeering')) throw new Error('UnauthorizedOperation');
      return point(r, t);
    };
    const r = await runStateMachine({
      deps,
      input: { plan: scenarioPlan(['B']) },
      runId: 'norestore',
      waitTimeOverrides: noWaits(),
    });
    expect(r.status).toBe('FAILED');
    expect(r.error?.name).toBe('RunFailedError');
    expect(entered(allEvents(r)).slice(-4)).toEqual(['SummarizeRun', 'ReleaseLock', 'RunOutcome', 'RunFailed']);
    const m = await read<RunManifest>(store, keys.manifest('norestore'));
    expect(m.restore?.status).toBe('failed');
    expect(m.restore?.errors[0]).toMatch(/UnauthorizedOperation/);
    expect(m.status).toBe('failed');
    expect(await deps.lock.current()).toBeUndefined();
  });

  it('is idempotent where Lambda retries: SendProbe resumes its command, CollectOutput rewrites the same keys and the copy its call writes', async () => {
    const { deps, store } = await setup();
    await runStateMachine({ deps, input: { plan: scenarioPlan(['A']) }, runId: 'retry', waitTimeOverrides: noWaits() });
    const runner = deps.runner as FakeRunner;
    const ref = {
      runId: 'retry',
      pathId: 'A',
      client: { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' },
    };
    const again = await sendProbe(deps, ref);
    expect(again.commandId).toBe('cmd-1');
    expect(runner.sent).toHaveLength(1);
    const keysBefore = await store.list('');
    const samplesBefore = await store.getText('samples/path=A/run=retry/tcp-connect-1.jsonl');
    // A retried CollectOutput empties the copy's prefix for CopyToParquet, whose call writes it again.
    const { copy } = await collectOutput(deps, ref);
    expect(await store.list('')).toEqual(keysBefore.filter((k) => !k.startsWith('parquet/')));
    await deps.query.execute(copy);
    expect(await store.list('')).toEqual(keysBefore);
    expect(await store.getText('samples/path=A/run=retry/tcp-connect-1.jsonl')).toBe(samplesBefore);
  });
});
