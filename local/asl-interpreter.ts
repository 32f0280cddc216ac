/**
 * Runs statemachine/measurement.asl.json (or statemachine/mesh.asl.json) in-process with
 * aws-local-stepfunctions. Every Task's `${Placeholder}` is resolved through the wiring table
 * (functions/wiring.ts), the same table CDK uses for substitutions, so local and AWS cannot
 * drift apart.
 * The definitions come from statemachine/asl.ts. The interpreter has no Distributed Map: a
 * top-level one runs through the emulation in local/distributed-map.ts. Nor does it start other
 * state machines: a `states:startExecution.sync:2` Task (the run starting its chunks, a chunk its
 * paths) runs the named definition here as a nested execution with its own event log, and a
 * stop of the parent stops it, as Step Functions stops a `.sync` child of a stopped execution.
 */
import { StateMachine } from 'aws-local-stepfunctions';
import { errorMessage } from '../core/errors.js';
import { TASK_RUNS } from '../functions/handlers/index.js';
import type { Deps } from '../functions/ports.js';
import { TASK_NAMES, type TaskName } from '../functions/wiring.js';
import { queryExecutionCall } from '../queries/unload.js';
import {
  type AslDefinition,
  type AslStates,
  allStates,
  DEFINITION_NAMES,
  type DefinitionName,
  loadDefinition,
  type ServiceIntegration,
  substitutePlaceholders,
  taskIntegrations,
  taskPlaceholders,
} from '../statemachine/asl.js';
import { distributedMapAsTask, isDistributed, type Json, runDistributedMap } from './distributed-map.js';
import type { ChildExecution, ExecutionEvent, RunMachineResult } from './local-execution.js';

// aws-local-stepfunctions 3 calls Promise.withResolvers, which Node 20 lacks.
type WithResolvers = <T>() => { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void };
const P = Promise as unknown as { withResolvers?: WithResolvers };
if (!P.withResolvers) {
  P.withResolvers = <T>() => {
    let resolve!: (v: T) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}

/**
 * What `$$.Task.Token` reads locally. aws-local-stepfunctions 3 has no task tokens (its context
 * object is the one passed in), so the context carries this placeholder and the resolver of a
 * `.waitForTaskToken` state mints a real token per invocation in its place (local/local-queue.ts).
 */
export const LOCAL_TASK_TOKEN = 'local-task-token';

/** A local stand-in for a service integration: the state's input after Parameters, its result. */
export type IntegrationResolver = (input: unknown, call: { state: string; signal: AbortSignal }) => Promise<unknown>;

/**
 * aws-local-stepfunctions 3 evaluates a Task's TimeoutSecondsPath against the input after
 * Parameters (Step Functions reads the state's input) and has no HeartbeatSeconds at all; and a
 * Task without a timeout gets its 60 s default. So, in the copy the runner executes (the
 * definition file is unchanged), a service-integration Task's *SecondsPath fields are replaced
 * by a timeout the runner cannot reach first, and its resolver enforces the heartbeat and the
 * timeout it is given in the message (local/local-queue.ts: the probe's heartbeatSeconds and
 * timeoutSeconds, the same numbers PrepareTaskProbe hands the state).
 */
export const RESOLVER_OWNS_TIMEOUT_SECONDS = 2_000_000;

function deferTimeoutsToResolvers(def: AslDefinition): void {
  const integrations = taskIntegrations(def);
  for (const [name, s] of allStates(def)) {
    if (!(name in integrations)) continue;
    // A child execution's Task has no timeout of its own on AWS (the child's TimeoutSeconds bounds it).
    if (integrations[name] === START_SYNC && s.TimeoutSeconds === undefined)
      s.TimeoutSeconds = RESOLVER_OWNS_TIMEOUT_SECONDS;
    if ('TimeoutSecondsPath' in s || 'HeartbeatSecondsPath' in s) {
      delete s.TimeoutSecondsPath;
      delete s.HeartbeatSecondsPath;
      s.TimeoutSeconds = RESOLVER_OWNS_TIMEOUT_SECONDS;
    }
  }
}

export interface RunMachineOptions {
  deps: Deps;
  input: unknown;
  runId: string;
  definition?: AslStates;
  /** Wait state name → milliseconds (fake time in tests). */
  waitTimeOverrides?: Record<string, number>;
  /** Task state name → milliseconds between Retry attempts (fake time in tests). */
  retryIntervalOverrides?: Record<string, number>;
  onEvent?: (e: ExecutionEvent) => void;
  /**
   * The Lambda boundary: every Task invocation goes through it (`run` calls the handler). The
   * fault suite injects invocation errors here (Lambda.TooManyRequestsException, a crash after
   * the handler's side effects); absent, the handler is called directly.
   */
  invoke?: (call: { state: string; task: TaskName; input: unknown; run: () => Promise<unknown> }) => Promise<unknown>;
  /** StopExecution: aborting ends the execution ABORTED; a Task already running is not stopped. */
  signal?: AbortSignal;
  /**
   * Local resolvers of the service integrations (SERVICE_INTEGRATIONS). Athena's `.sync` has a
   * built-in one (the run's query engine); a definition state whose integration has none fails as
   * Step Functions would fail a call it cannot make.
   */
  integrations?: Partial<Record<ServiceIntegration, IntegrationResolver>>;
}

const ATHENA_SYNC: ServiceIntegration = 'arn:aws:states:::athena:startQueryExecution.sync';
const START_SYNC: ServiceIntegration = 'arn:aws:states:::states:startExecution.sync:2';

/** The ARN a `${…StateMachine}` placeholder stands for locally: the definition's name at its end. */
const LOCAL_MACHINE_ARN = 'arn:aws:states:local:000000000000:stateMachine:pathbench-';
const machineArn = (name: DefinitionName) => `${LOCAL_MACHINE_ARN}${name}`;
function definitionOfArn(arn: unknown): DefinitionName {
  const name = typeof arn === 'string' && arn.startsWith(LOCAL_MACHINE_ARN) ? arn.slice(LOCAL_MACHINE_ARN.length) : '';
  const found = DEFINITION_NAMES.find((n) => n === name);
  if (!found) {
    const e = new Error(`StateMachineArn ${String(arn)} names no definition of statemachine/`);
    e.name = 'StepFunctions.StateMachineDoesNotExistException';
    throw e;
  }
  return found;
}

/**
 * The integrations every local run resolves from its own Deps: Athena's `.sync` runs the call on
 * the query engine (DuckDB: the Parquet copy's UNLOAD or a summary query's SELECT, whose rows
 * the engine keeps under the execution id; local/duckdb-query.ts) and answers as
 * GetQueryExecution does. A query that fails fails the state, as on AWS.
 */
function builtInResolver(resource: ServiceIntegration, deps: Deps): IntegrationResolver | undefined {
  if (resource !== ATHENA_SYNC) return undefined;
  return async (input) => {
    const call = queryExecutionCall.parse(input);
    try {
      const { rows, queryExecutionId } = await deps.query.execute(call);
      return {
        QueryExecution: {
          QueryExecutionId: queryExecutionId,
          Query: call.QueryString,
          WorkGroup: call.WorkGroup,
          Status: { State: 'SUCCEEDED' },
          ...(rows === undefined ? {} : { Statistics: { Rows: rows } }),
        },
      };
    } catch (e) {
      const err = new Error(errorMessage(e));
      err.name = 'States.TaskFailed';
      throw err;
    }
  };
}

/** Arrival order of events across one top-level run and its children. */
interface Sequencer {
  next: number;
}

export async function runStateMachine(opts: RunMachineOptions): Promise<RunMachineResult> {
  return runOne(opts, { next: 0 }, undefined);
}

async function runOne(
  opts: RunMachineOptions,
  seq: Sequencer,
  executionName: string | undefined,
): Promise<RunMachineResult> {
  const original = opts.definition ?? loadDefinition('measurement');
  const children: ChildExecution[] = [];
  const parentName = executionName ?? opts.runId;
  const handlers: Record<string, (input: unknown) => Promise<unknown>> = {};
  const definition: AslStates = { ...original, States: { ...original.States } };
  for (const [name, state] of Object.entries(original.States)) {
    if (!isDistributed(state)) continue;
    definition.States[name] = distributedMapAsTask(name, state);
    handlers[name] = (event: unknown) =>
      runDistributedMap(name, state, event as Json, children, {
        parentName,
        run: (processor, input, child) => runOne({ ...opts, definition: processor, input }, seq, child),
        store: opts.deps.store,
        signal: opts.signal,
      });
  }
  for (const [name, s] of allStates(definition))
    if (isDistributed(s))
      throw new Error(`Distributed Map ${name} is nested: the local emulation runs top-level ones only`);
  for (const [stateName, task] of Object.entries(taskPlaceholders(original, TASK_NAMES))) {
    handlers[stateName] = async (input: unknown) => {
      // Lambda sees JSON, not shared objects: serialize both ways.
      const event = JSON.parse(JSON.stringify(input));
      const run = () => TASK_RUNS[task](opts.deps, event);
      const out = await (opts.invoke ? opts.invoke({ state: stateName, task, input: event, run }) : run());
      return out === undefined ? null : JSON.parse(JSON.stringify(out));
    };
  }
  // Ended when the execution ends: a resolver still waiting for a callback stops waiting.
  const ended = new AbortController();
  const started: Record<string, number> = {};
  /**
   * `states:startExecution.sync:2`: the named definition runs as a child execution (its own
   * events, recorded in `children` with its own children) with this run's Lambdas, resolvers,
   * overrides and stop; its output is DescribeExecution's, Output parsed (the `:2` form). A child
   * that fails fails the Task with States.TaskFailed, as on AWS.
   */
  const startChild: IntegrationResolver = async (input, { state }) => {
    const call = input as { StateMachineArn?: unknown; Input?: unknown };
    const name = definitionOfArn(call.StateMachineArn);
    const index = started[state] ?? 0;
    started[state] = index + 1;
    const childName = `${parentName}/${state}/${index}`;
    const startDate = Date.now();
    const r = await runOne({ ...opts, definition: loadDefinition(name), input: call.Input ?? {} }, seq, childName);
    children.push({
      name: childName,
      state,
      index,
      status: r.status,
      events: r.events,
      ...(r.error ? { error: r.error } : {}),
    });
    children.push(...r.children);
    if (r.status !== 'SUCCEEDED') {
      const e = new Error(
        JSON.stringify({ ExecutionArn: childName, Status: r.status, Error: r.error?.name, Cause: r.error?.message }),
      );
      e.name = 'States.TaskFailed';
      throw e;
    }
    return {
      ExecutionArn: childName,
      StateMachineArn: call.StateMachineArn,
      Name: childName,
      Status: 'SUCCEEDED',
      StartDate: startDate,
      StopDate: Date.now(),
      Input: call.Input ?? {},
      Output: r.output ?? null,
    };
  };
  for (const [stateName, resource] of Object.entries(taskIntegrations(definition))) {
    handlers[stateName] = async (input: unknown) => {
      const resolver =
        opts.integrations?.[resource] ??
        (resource === START_SYNC ? startChild : undefined) ??
        builtInResolver(resource, opts.deps);
      if (!resolver) {
        const e = new Error(`${resource} has no local resolver in this run (state ${stateName})`);
        e.name = 'States.TaskFailed';
        throw e;
      }
      const pending = resolver(JSON.parse(JSON.stringify(input)), { state: stateName, signal: ended.signal });
      // The runner may stop awaiting it (its own timeout, an abort): its later end is not an unhandled rejection.
      pending.catch(() => undefined);
      const out = await pending;
      return out === undefined ? null : JSON.parse(JSON.stringify(out));
    };
  }
  // Fill the placeholders the way CDK's definitionSubstitutions does on AWS; the handlers are
  // bound by state name, so the ARN is only a label here.
  const substituted = substitutePlaceholders(
    definition,
    TASK_NAMES,
    (task) => `arn:aws:lambda:local:000000000000:function:pathbench-${task}`,
    machineArn,
  );
  deferTimeoutsToResolvers(substituted);
  const machine = machineFor(substituted);
  const startedAt = new Date().toISOString();
  const execution = machine.run(
    opts.input as never,
    {
      overrides: {
        taskResourceLocalHandlers: handlers,
        waitTimeOverrides: opts.waitTimeOverrides,
        retryIntervalOverrides: opts.retryIntervalOverrides,
      },
      context: {
        Execution: {
          Id: `arn:aws:states:local:000000000000:execution:pathbench:${parentName}`,
          Name: parentName,
          StartTime: startedAt,
          Input: opts.input,
        },
        Task: { Token: LOCAL_TASK_TOKEN },
      },
    } as never,
  );
  const events: ExecutionEvent[] = [];
  let aborted = false;
  const abort = () => {
    aborted = true;
    execution.abort();
  };
  if (opts.signal?.aborted) abort();
  else opts.signal?.addEventListener('abort', abort, { once: true });
  const pump = (async () => {
    for await (const e of execution.eventLogs as AsyncIterable<ExecutionEvent>) {
      e.seq = seq.next++;
      if (executionName) e.execution = executionName;
      events.push(e);
      opts.onEvent?.(e);
    }
  })();
  try {
    const output = await execution.result;
    await pump.catch(() => undefined);
    return { status: 'SUCCEEDED', output, events, children };
  } catch (e) {
    await pump.catch(() => undefined);
    if (aborted)
      return { status: 'ABORTED', error: { name: 'ExecutionAborted', message: 'execution stopped' }, events, children };
    const err = e as Error & { cause?: Error };
    const inner = err.cause instanceof Error ? err.cause : err;
    return { status: 'FAILED', error: { name: inner.name, message: inner.message }, events, children };
  } finally {
    ended.abort();
    opts.signal?.removeEventListener('abort', abort);
  }
}

/**
 * Interpreters by definition text: building one validates the definition (a JSON-schema check
 * that takes a second or more on a slow machine), and a Distributed Map starts one child
 * execution per item — thousands in a mesh — of the same definition. A machine runs many
 * executions; the handlers come with each run.
 */
const machines = new Map<string, StateMachine>();
function machineFor(def: AslDefinition): StateMachine {
  const text = JSON.stringify(def);
  let m = machines.get(text);
  if (!m) {
    m = new StateMachine(def as never, { validationOptions: { checkArn: true } });
    if (machines.size >= 16) machines.delete(machines.keys().next().value as string);
    machines.set(text, m);
  }
  return m;
}
