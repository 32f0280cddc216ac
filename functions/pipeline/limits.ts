/**
 * The service limits a plan must fit, checked by ValidatePlan before anything is written, so a
 * plan that cannot finish is refused with the number that breaks instead of failing hours in:
 *
 * - Step Functions keeps at most 25,000 events in one execution's history. A run's executions
 *   nest (statemachine/asl.ts): each path is its own execution (statemachine/path.asl.json:
 *   states entered and exited, each Lambda attempt, each poll), a chunk's execution
 *   (statemachine/chunk.asl.json) adds a few events per path of its PATHS_PER_CHUNK, and the
 *   run's own a few per chunk. Each is computed from the ASL definitions themselves: each
 *   state's events, each Task's retries, and every poll loop run to its bound.
 * - A state's input or output is at most 256 KiB: ValidatePlan's output (one item per path, in
 *   chunks) is carried through the run's execution.
 * - The probe command's `executionTimeout` is at most 99,999 s (the `allowedPattern` of the
 *   probe document's parameter, functions/adapters/aws/probe-document.ts).
 * - Each execution times out after its definition's `TimeoutSeconds`: a path's (a day) holds
 *   that path's worst-case time, the run's (7 days) the sum over its paths.
 *
 * A mesh plan on the mesh state machine (statemachine/mesh.asl.json) is judged per execution:
 * each pair is a child execution of the round's Distributed Map with one path's events, and the
 * parent holds a few events a round; its wall time is the sum over rounds of the round's slowest
 * pair. A plan too big for the sequential machine is told so, with the mesh machine as the way
 * out when its paths are mesh pairs.
 */

import { RUN_ID_MAX_LENGTH } from '../../core/keys.js';
import type { ResolvedPath } from '../../core/resolved-plan.js';
import type { ProbeSpec } from '../../probes/index.js';
import { selectStatementCall } from '../../queries/unload.js';
import { PATHS_PER_CHUNK } from '../../statemachine/asl.js';
import chunkDef from '../../statemachine/chunk.asl.json' with { type: 'json' };
import definition from '../../statemachine/measurement.asl.json' with { type: 'json' };
import meshDef from '../../statemachine/mesh.asl.json' with { type: 'json' };
import pathDef from '../../statemachine/path.asl.json' with { type: 'json' };
import { summaryQueryCalls } from './summary-queries.js';

/** Upper bounds of the poll loops: the state machine never waits forever. */
export const POLL_LIMITS = { stopped: 60, ready: 120, probe: 400 } as const;

/** Step Functions Standard: events in one execution's history. */
export const HISTORY_EVENT_LIMIT = 25_000;
/** Step Functions: bytes of a state's input or output (UTF-8). */
export const PAYLOAD_LIMIT_BYTES = 262_144;
/**
 * Room kept under the payload limit for what later states add to the execution's state
 * ($.mapError, $.restore, $.summary, $.final; an error's Cause can be up to 32 KiB), plus
 * PrepareSummary's query calls while the SummaryQueries Map runs them (summaryCallsBytes).
 */
export const PAYLOAD_RESERVE_BYTES = 40_960 + summaryCallsBytes();

/**
 * The bytes of PrepareSummary's output ($.summaryQueries: every summary query's text, the
 * longest workgroup and database names, a run id at its longest).
 */
function summaryCallsBytes(): number {
  const longest = {
    selectCall: (sql: string, params: (string | number)[]) =>
      selectStatementCall(sql, params, 'w'.repeat(128), 'd'.repeat(255)),
  };
  const calls = summaryQueryCalls(longest, 'r'.repeat(RUN_ID_MAX_LENGTH));
  return Buffer.byteLength(JSON.stringify({ queries: calls }), 'utf8');
}
/** The probe document's executionTimeout (allowedPattern `^[1-9][0-9]{1,4}$`): at most 99,999 s. */
export const SSM_EXECUTION_TIMEOUT_MAX = 99_999;
/** The run's execution timeout (TimeoutSeconds of the run's definition): all its paths, one after another. */
export const EXECUTION_TIMEOUT_SECONDS: number = definition.TimeoutSeconds;
/** One path's execution timeout (TimeoutSeconds of statemachine/path.asl.json). */
export const PATH_TIMEOUT_SECONDS: number = pathDef.TimeoutSeconds;

/**
 * A pingpong exchange's likely time, for the first look at a count-bound series: a same-region
 * round trip is well under it; a longer one is found by the polls' back-off (nextPollSeconds).
 */
export const PINGPONG_LIKELY_EXCHANGE_SECONDS = 0.002;

/**
 * The likely wall time of a probe, to size the first wait: estimateSeconds, but a count-bound
 * pingpong series at PINGPONG_LIKELY_EXCHANGE_SECONDS an exchange rather than every exchange
 * taking its whole timeout (3,000 exchanges would otherwise be a 300 s first wait for 6 s of work).
 */
export function likelySeconds(probe: ProbeSpec): number {
  if (probe.kind !== 'pingpong') return estimateSeconds(probe);
  return pingpongSeconds(probe, Math.min(PINGPONG_LIKELY_EXCHANGE_SECONDS, probe.timeoutMs / 1000));
}

/**
 * A pingpong series at `exchangeSeconds` an exchange: bounded by its count or its duration; +3 s
 * a trial for the helper's build and the log's compression.
 */
function pingpongSeconds(probe: Extract<ProbeSpec, { kind: 'pingpong' }>, exchangeSeconds: number): number {
  const byCount = probe.count > 0 ? probe.count * exchangeSeconds : Number.POSITIVE_INFINITY;
  const byDuration = probe.durationSeconds > 0 ? probe.durationSeconds : Number.POSITIVE_INFINITY;
  return (probe.trials ?? 1) * (Math.min(byCount, byDuration) + 3);
}

/** Rough wall time of a probe at worst, to size the hard deadline. */
export function estimateSeconds(probe: ProbeSpec): number {
  switch (probe.kind) {
    case 'tcp-connect':
      return (probe.count * probe.intervalMs + probe.timeoutMs) / 1000;
    case 'iperf3':
      return probe.repeats * (probe.durationSeconds + 2);
    case 'http':
      return (probe.trials * probe.count * 2) / 1000 / probe.concurrency + probe.timeoutMs / 1000;
    case 'sockperf':
      return (probe.trials ?? 1) * (probe.durationSeconds + 2);
    case 'mtu':
      return (14 * probe.timeoutMs) / 1000;
    case 'ping':
      // The runner's own deadline: every interval, the last reply's timeout and its 5 s margin.
      return (probe.count * probe.intervalMs + probe.timeoutMs) / 1000 + 5;
    case 'pingpong':
      // At worst every exchange takes its whole timeout.
      return pingpongSeconds(probe, probe.timeoutMs / 1000);
  }
}

/**
 * A path's probe timing, as SendProbe uses it: the probes' own time, the expected time with
 * self-calibration and agent start-up, and the command's hard timeout.
 */
export function probeTiming(probes: readonly ProbeSpec[]): {
  probing: number;
  expected: number;
  timeoutSeconds: number;
  /** The probes' likely time (likelySeconds) and the expected time from it: where polling starts. */
  likelyProbing: number;
  likely: number;
} {
  const probing = probes.reduce((s, p) => s + estimateSeconds(p), 0);
  const expected = Math.ceil(probing + 5);
  const likelyProbing = probes.reduce((s, p) => s + likelySeconds(p), 0);
  return {
    probing,
    expected,
    timeoutSeconds: Math.ceil(expected * 1.5 + 60),
    likelyProbing,
    likely: Math.ceil(likelyProbing + 5),
  };
}

/** Most polls of one probe command (PollProbe's own bound, see pollProbe in probe-command.ts). */
export function probePollBound(timeoutSeconds: number, pollSeconds: number): number {
  const minPoll = Math.max(1, pollSeconds);
  return Math.min(POLL_LIMITS.probe, Math.ceil(timeoutSeconds / minPoll) + 2);
}

// ---------------------------------------------------------------------------------------------
// History events, from the definition.

interface Retrier {
  ErrorEquals: string[];
  MaxAttempts?: number;
}
interface AslState {
  Type: string;
  Retry?: Retrier[];
  ItemProcessor?: { States: Record<string, AslState> };
}

/**
 * Events one visit of a state writes when it succeeds first time: Task = entered, scheduled,
 * started, succeeded, exited (a Lambda function resource); every other type = entered, exited.
 */
const VISIT_EVENTS: Record<string, number> = { Task: 5, Wait: 2, Choice: 2, Pass: 2, Succeed: 2, Fail: 2 };
/** A failed attempt that is retried: scheduled, started, failed. */
const RETRY_EVENTS = 3;
/** A `.sync` service integration's TaskSubmitted, besides a Task's visit events. */
const SYNC_SUBMITTED = 1;
/** A Map iteration: started and succeeded. */
const ITERATION_EVENTS = 2;

/** An execution's own ExecutionStarted and ExecutionSucceeded/Failed. */
const EXECUTION_EVENTS = 2;
/** A Map state's MapStateEntered, MapStateStarted, MapStateSucceeded, MapStateExited. */
const MAP_EVENTS = 4;

const top = definition.States as unknown as Record<string, AslState>;
const chunkTop = chunkDef.States as unknown as Record<string, AslState>;
const inner = pathDef.States as unknown as Record<string, AslState>;
const innerOf = (states: Record<string, AslState>, map: string) => states[map]?.ItemProcessor?.States ?? {};

function stateOf(name: string): AslState {
  const s =
    inner[name] ??
    top[name] ??
    innerOf(top, 'MeasureChunks')[name] ??
    chunkTop[name] ??
    innerOf(chunkTop, 'MeasurePaths')[name];
  if (!s) throw new Error(`state ${name} is not in the definitions`);
  return s;
}

/** One visit of a state, with every retry its retriers allow when `retries` (the worst case). */
function visit(name: string, retries: boolean): number {
  const s = stateOf(name);
  const base = VISIT_EVENTS[s.Type];
  if (base === undefined) throw new Error(`no event count for state type ${s.Type} (${name})`);
  if (!retries) return base;
  return base + RETRY_EVENTS * (s.Retry ?? []).reduce((n, r) => n + (r.MaxAttempts ?? 3), 0);
}

/**
 * Worst-case events of one path's execution (statemachine/path.asl.json). Every poll loop runs
 * to its bound; each Task state uses all its retries once per path (repeat visits of a poll task
 * are counted without retries: a Lambda that fails on every poll fails the path long before the
 * bound); the path
 * ends in its costliest ending (a failure after the last step, recorded). A `reboot: false`
 * path is counted with a start too: BeginPath starts a client an earlier failed start left
 * stopped (already stopped, so one stop poll).
 */
export function pathEventBound(path: ResolvedPath, pollSeconds: number): number {
  const once = (name: string) => visit(name, true);
  const again = (name: string) => visit(name, false);
  const loop = (bound: number, wait: string, task: string, choice: string) =>
    once(wait) + once(task) + once(choice) + (bound - 1) * (again(wait) + again(task) + again(choice));
  let n = EXECUTION_EVENTS + once('BeginPath') + once('RebootChoice');
  const task = path.client.kind === 'ecs-task';
  // A task client is never stopped or started (the plan refuses reboot for it).
  if (!task) {
    n += once('StopClient') + loop(path.reboot ? POLL_LIMITS.stopped : 1, 'WaitForStop', 'CheckStopped', 'IsStopped');
    n += once('StartClient') + loop(POLL_LIMITS.ready, 'WaitForReady', 'CheckReady', 'IsReady');
  }
  n += once('CreditWaitChoice') + (path.creditWaitSeconds > 0 ? once('WaitForCredits') : 0);
  n += once('RoutesChoice') + (path.routes.length > 0 ? once('SwapRoutes') : 0);
  n += once('ProbeChannelChoice');
  if (task) {
    // The callback task writes TaskSubmitted besides a Lambda task's events; heartbeats write none.
    n += once('PrepareTaskProbe') + once('ProbeTask') + 1 + once('EndTaskProbe');
  } else {
    const { timeoutSeconds } = probeTiming(path.probes);
    n +=
      once('SendProbe') + loop(probePollBound(timeoutSeconds, pollSeconds), 'WaitForProbe', 'PollProbe', 'IsProbeDone');
  }
  // An Athena `.sync` task writes TaskSubmitted besides a Lambda task's events.
  n += once('CollectOutput') + once('CopyToParquet') + SYNC_SUBMITTED + once('EndPath');
  const failed =
    once('FailedEndPath') +
    once('RecordPathFailure') +
    once('FailedPathHasSamples') +
    once('CopyFailedPath') +
    SYNC_SUBMITTED +
    once('PathFailed');
  return n + Math.max(once('PathSucceeded'), failed);
}

/**
 * Events of the run's own execution outside its chunks: execution started/ended, ValidatePlan,
 * the MeasureChunks Map's own events, RestoreRoutes, PrepareSummary, the SummaryQueries
 * Distributed Map (its own four: each query is a child execution with its own history),
 * SummarizeRun, ReleaseLock (or, after a summary state failed, ReleaseLockAfterSummaryFailure),
 * RunOutcome and the final state.
 */
export function runEventOverhead(): number {
  const once = (name: string) => visit(name, true);
  return (
    EXECUTION_EVENTS +
    once('ValidatePlan') +
    MAP_EVENTS + // MeasureChunks
    once('RestoreRoutes') +
    once('PrepareSummary') +
    4 + // SummaryQueries: MapStateEntered, MapRunStarted, MapRunSucceeded, MapStateExited
    once('SummarizeRun') +
    Math.max(once('ReleaseLock'), once('ReleaseLockAfterSummaryFailure')) +
    once('RunOutcome') +
    Math.max(once('RunSucceeded'), once('RunFailed'))
  );
}

/** A `.sync:2` child start as a Map iteration: started and succeeded, the Task with every retry, TaskSubmitted. */
const childStart = (task: string) => ITERATION_EVENTS + visit(task, true) + SYNC_SUBMITTED;

/** Worst-case events of the run's own execution with `chunks` chunks (each a MeasureChunk iteration). */
export function runEventBound(chunks: number): number {
  return runEventOverhead() + chunks * childStart('MeasureChunk');
}

/** Worst-case events of one chunk's execution of `paths` paths (each a MeasurePath iteration). */
export function chunkEventBound(paths: number): number {
  return EXECUTION_EVENTS + MAP_EVENTS + paths * childStart('MeasurePath');
}

/** The most events any one execution of a sequential run of these paths may write, and which. */
export function largestExecutionBound(
  paths: readonly ResolvedPath[],
  pollSeconds: number,
): { events: number; execution: 'run' | 'chunk' | 'path' } {
  const chunks = Math.ceil(paths.length / PATHS_PER_CHUNK);
  const candidates = [
    { events: runEventBound(chunks), execution: 'run' as const },
    { events: chunkEventBound(Math.min(paths.length, PATHS_PER_CHUNK)), execution: 'chunk' as const },
    { events: Math.max(0, ...paths.map((p) => pathEventBound(p, pollSeconds))), execution: 'path' as const },
  ];
  return candidates.reduce((a, b) => (b.events > a.events ? b : a));
}

/** Events of a child execution of the mesh machine's Distributed Map: one path's execution. */
export function meshChildEventBound(path: ResolvedPath, pollSeconds: number): number {
  return pathEventBound(path, pollSeconds);
}

const meshTop = meshDef.States as unknown as Record<string, AslState>;

/**
 * Events of the mesh machine's own (parent) execution: the run's fixed states plus, per round,
 * the Distributed Map (entered, map run started and succeeded, exited) and the loop's Pass and
 * Choice. Checked against the mesh definition's state types.
 */
export function meshParentEventBound(rounds: number): number {
  for (const [name, type] of [
    ['MeasureRound', 'Map'],
    ['NextRound', 'Pass'],
    ['MoreRounds', 'Choice'],
  ] as const)
    if (meshTop[name]?.Type !== type) throw new Error(`state ${name} of the mesh definition is not a ${type}`);
  const perRound = 4 + VISIT_EVENTS.Pass + VISIT_EVENTS.Choice;
  // Less MeasureChunks' own four: the rounds' Distributed Maps stand in its place.
  return runEventOverhead() - 4 + rounds * perRound;
}

/** Worst-case wall time of one path, seconds: reboot polls to their bound, credit wait, the probe's hard timeout. */
export function pathSecondsBound(path: ResolvedPath, pollSeconds: number): number {
  const poll = Math.max(1, pollSeconds);
  const reboot =
    path.client.kind === 'ecs-task' ? 0 : (path.reboot ? POLL_LIMITS.stopped : 1) * poll + POLL_LIMITS.ready * poll;
  return reboot + path.creditWaitSeconds + probeTiming(path.probes).timeoutSeconds;
}

const fmt = (n: number) => n.toLocaleString('en-US');

/**
 * Problems ("field: what is wrong") for a resolved plan that cannot run within the limits, or
 * none. `output` is ValidatePlan's output as it will be returned (its real size is measured).
 */
export function planLimitProblems(
  paths: readonly ResolvedPath[],
  output: unknown,
  pollSeconds: number,
  mode: 'sequential' | 'mesh' = 'sequential',
): string[] {
  if (mode === 'mesh') return meshLimitProblems(paths, output, pollSeconds);
  const problems: string[] = [];
  const isMesh = paths.some((p) => p.mesh);
  const way = isMesh
    ? 'run it on the mesh state machine (statemachine/mesh.asl.json), where each pair is a child execution'
    : 'split the plan';
  problems.push(...ssmProblems(paths), ...pathTimeoutProblems(paths, pollSeconds));

  // Each path is its own execution: only a path whose own steps overflow one history is refused.
  paths.forEach((p, i) => {
    const events = pathEventBound(p, pollSeconds);
    if (events > HISTORY_EVENT_LIMIT)
      problems.push(
        `paths[${i}]: the path's execution needs up to ${fmt(events)} history events (worst case: every poll loop to its bound, each task's retries), over Step Functions' limit of ${fmt(HISTORY_EVENT_LIMIT)} events per execution; shorten its probes or raise the poll interval`,
      );
  });
  const chunks = Math.ceil(paths.length / PATHS_PER_CHUNK);
  const run = runEventBound(chunks);
  if (run > HISTORY_EVENT_LIMIT)
    problems.push(
      `paths: ${fmt(paths.length)} paths are ${fmt(chunks)} chunks of ${PATHS_PER_CHUNK}, which need up to ${fmt(run)} history events in the run's execution, over Step Functions' limit of ${fmt(HISTORY_EVENT_LIMIT)} events per execution — ${way}`,
    );

  const bytes = Buffer.byteLength(JSON.stringify(output), 'utf8');
  const room = PAYLOAD_LIMIT_BYTES - PAYLOAD_RESERVE_BYTES;
  if (bytes > room)
    problems.push(
      `paths: the execution carries ${fmt(paths.length)} path items (${fmt(bytes)} bytes), over the ${fmt(room)} bytes left under Step Functions' payload limit of ${fmt(PAYLOAD_LIMIT_BYTES)} bytes (256 KiB); the first ${fmt(pathsThatFit(output, room))} paths fit — ${way}`,
    );

  const seconds = paths.reduce((s, p) => s + pathSecondsBound(p, pollSeconds), 0);
  if (seconds > EXECUTION_TIMEOUT_SECONDS)
    problems.push(
      `paths: the plan may run ${fmt(seconds)} s (worst case: reboots polled to their bound, credit waits, each probe command to its timeout), over the execution timeout of ${fmt(EXECUTION_TIMEOUT_SECONDS)} s; ${way}`,
    );
  return problems;
}

/**
 * The most leading paths whose ValidatePlan output (its `chunks` cut to them) fits in `room`
 * bytes: the plan's exact limit, as item sizes differ from path to path.
 */
function pathsThatFit(output: unknown, room: number): number {
  const o = output as { chunks?: unknown[][] };
  const items = o.chunks?.flat() ?? [];
  const size = (n: number) => {
    const chunks: unknown[][] = [];
    for (let i = 0; i < n; i += PATHS_PER_CHUNK) chunks.push(items.slice(i, Math.min(n, i + PATHS_PER_CHUNK)));
    return Buffer.byteLength(JSON.stringify({ ...o, chunks }), 'utf8');
  };
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (size(mid) <= room) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** A path whose worst-case wall time is over its own execution's timeout, named. */
function pathTimeoutProblems(paths: readonly ResolvedPath[], pollSeconds: number): string[] {
  return paths.flatMap((p, i) => {
    const seconds = pathSecondsBound(p, pollSeconds);
    return seconds > PATH_TIMEOUT_SECONDS
      ? [
          `paths[${i}]: the path may run ${fmt(seconds)} s (worst case: reboot polled to its bound, credit wait, the probe command to its timeout), over its execution's timeout of ${fmt(PATH_TIMEOUT_SECONDS)} s; shorten its probes or credit wait`,
        ]
      : [];
  });
}

function ssmProblems(paths: readonly ResolvedPath[]): string[] {
  const problems: string[] = [];
  paths.forEach((p, i) => {
    const { timeoutSeconds } = probeTiming(p.probes);
    if (p.client.kind !== 'ecs-task' && timeoutSeconds > SSM_EXECUTION_TIMEOUT_MAX)
      problems.push(
        `paths[${i}].probes: the probe command would need ${fmt(timeoutSeconds)} s (probes plus margin), over SSM's executionTimeout limit of ${fmt(SSM_EXECUTION_TIMEOUT_MAX)} s; shorten the probes or split them over paths`,
      );
  });
  return problems;
}

/** The mesh machine's limits: each child execution, the parent's rounds, the payload, the wall time. */
function meshLimitProblems(paths: readonly ResolvedPath[], output: unknown, pollSeconds: number): string[] {
  const problems = [...ssmProblems(paths), ...pathTimeoutProblems(paths, pollSeconds)];
  paths.forEach((p, i) => {
    const events = meshChildEventBound(p, pollSeconds);
    if (events > HISTORY_EVENT_LIMIT)
      problems.push(
        `paths[${i}]: the pair's child execution needs up to ${fmt(events)} history events, over Step Functions' limit of ${fmt(HISTORY_EVENT_LIMIT)} events per execution; shorten its probes`,
      );
  });
  const byRound = new Map<number, number>();
  for (const p of paths) {
    const r = p.mesh?.round ?? 0;
    byRound.set(r, Math.max(byRound.get(r) ?? 0, pathSecondsBound(p, pollSeconds)));
  }
  const rounds = Math.max(0, ...byRound.keys()) + 1;
  const parent = meshParentEventBound(rounds);
  if (parent > HISTORY_EVENT_LIMIT)
    problems.push(
      `paths: ${fmt(rounds)} rounds need ${fmt(parent)} history events in the parent execution, over Step Functions' limit of ${fmt(HISTORY_EVENT_LIMIT)}; split the mesh`,
    );
  const bytes = Buffer.byteLength(JSON.stringify(output), 'utf8');
  if (bytes > PAYLOAD_LIMIT_BYTES - PAYLOAD_RESERVE_BYTES)
    problems.push(
      `paths: the execution carries ${fmt(bytes)} bytes, over the ${fmt(PAYLOAD_LIMIT_BYTES - PAYLOAD_RESERVE_BYTES)} bytes left under the payload limit`,
    );
  const seconds = [...byRound.values()].reduce((a, b) => a + b, 0);
  if (seconds > EXECUTION_TIMEOUT_SECONDS)
    problems.push(
      `paths: the mesh may run ${fmt(seconds)} s (per round its slowest pair, worst case), over the execution timeout of ${fmt(EXECUTION_TIMEOUT_SECONDS)} s; split the mesh`,
    );
  return problems;
}
