/**
 * Runs statemachine/measurement.asl.json (or statemachine/mesh.asl.json) in-process with
 * aws-local-stepfunctions. Every Task's `${Placeholder}` is resolved through the wiring table
 * (functions/wiring.ts), the same table CDK uses for substitutions, so local and AWS cannot
 * drift apart.
 *
 * The interpreter has no Distributed Map. A top-level Map state in DISTRIBUTED mode is emulated
 * here, with the ASL file left as AWS runs it: the state is handed to the interpreter as a Task
 * (same Catch, Retry, ResultPath, Next) whose local handler does what the Map Run does — reads
 * the items (ItemReader from the object store, where S3 is; or ItemsPath), builds each item's
 * input with ItemSelector, runs each item as a **child execution** of the ItemProcessor (its own
 * interpreter run, its own event log), at most MaxConcurrency at once (0: unbounded), and fails
 * with States.ExceedToleratedFailureThreshold when more children failed than
 * ToleratedFailureCount or ToleratedFailurePercentage allow (either; both default to 0). Once
 * over the threshold no further child starts; children already running finish (AWS stops
 * them). The item list's Bucket is not used: the local object store is the bucket.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StateMachine } from 'aws-local-stepfunctions';
import { TASK_RUNS } from '../functions/handlers/index.js';
import type { Deps } from '../functions/ports.js';
import { TASKS, type TaskName } from '../functions/wiring.js';

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

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const ASL_FILE = join(ROOT, 'statemachine', 'measurement.asl.json');
export const MESH_ASL_FILE = join(ROOT, 'statemachine', 'mesh.asl.json');

type State = {
  Type: string;
  Resource?: string;
  ItemProcessor?: { StartAt?: string; States: Record<string, State>; ProcessorConfig?: { Mode?: string } };
  Iterator?: { States: Record<string, State> };
  Branches?: { States: Record<string, State> }[];
};
export type AslDefinition = { StartAt: string; States: Record<string, State> };

export function loadDefinition(file = ASL_FILE): AslDefinition {
  return JSON.parse(readFileSync(file, 'utf8')) as AslDefinition;
}

/** Every state of the definition, nested Map/Parallel states included, by name. */
export function allStates(def: { States: Record<string, State> }): [string, State][] {
  const out: [string, State][] = [];
  for (const [name, s] of Object.entries(def.States)) {
    out.push([name, s]);
    const inner = s.ItemProcessor ?? s.Iterator;
    if (inner) out.push(...allStates(inner));
    for (const b of s.Branches ?? []) out.push(...allStates(b));
  }
  return out;
}

/**
 * Step Functions service integrations the definition may use besides Lambda placeholders. On AWS
 * Step Functions itself calls the service; locally each needs a resolver (RunMachineOptions.integrations).
 */
export const SERVICE_INTEGRATIONS = ['arn:aws:states:::sqs:sendMessage.waitForTaskToken'] as const;
export type ServiceIntegration = (typeof SERVICE_INTEGRATIONS)[number];

/**
 * What `$$.Task.Token` reads locally. aws-local-stepfunctions 3 has no task tokens (its context
 * object is the one passed in), so the context carries this placeholder and the resolver of a
 * `.waitForTaskToken` state mints a real token per invocation in its place (local/local-queue.ts).
 */
export const LOCAL_TASK_TOKEN = 'local-task-token';

/** A local stand-in for a service integration: the state's input after Parameters, its result. */
export type IntegrationResolver = (input: unknown, call: { state: string; signal: AbortSignal }) => Promise<unknown>;

/** Task state name → service integration, for every Task whose resource is one. */
export function taskIntegrations(def: AslDefinition): Record<string, ServiceIntegration> {
  const out: Record<string, ServiceIntegration> = {};
  for (const [name, s] of allStates(def)) {
    if (s.Type === 'Task' && (SERVICE_INTEGRATIONS as readonly string[]).includes(s.Resource ?? ''))
      out[name] = s.Resource as ServiceIntegration;
  }
  return out;
}

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
  const names = new Set(Object.keys(taskIntegrations(def)));
  for (const [name, s] of allStates(def)) {
    if (!names.has(name)) continue;
    const t = s as State & Record<string, unknown>;
    if ('TimeoutSecondsPath' in t || 'HeartbeatSecondsPath' in t) {
      delete t.TimeoutSecondsPath;
      delete t.HeartbeatSecondsPath;
      t.TimeoutSeconds = RESOLVER_OWNS_TIMEOUT_SECONDS;
    }
  }
}

/** Task state name → wiring table entry, from each Task's `${Placeholder}` resource (service integrations aside). */
export function taskPlaceholders(def: AslDefinition): Record<string, TaskName> {
  const out: Record<string, TaskName> = {};
  for (const [name, s] of allStates(def)) {
    if (s.Type !== 'Task') continue;
    if ((SERVICE_INTEGRATIONS as readonly string[]).includes(s.Resource ?? '')) continue;
    const m = /^\$\{(\w+)\}$/.exec(s.Resource ?? '');
    if (!m || !(m[1] in TASKS))
      throw new Error(`Task ${name} has resource ${s.Resource}, which is not in the wiring table`);
    out[name] = m[1] as TaskName;
  }
  return out;
}

/** Replace every `${TaskName}` placeholder (the same substitution CDK performs). */
export function substitutePlaceholders(def: AslDefinition, value: (task: TaskName) => string): AslDefinition {
  const text = JSON.stringify(def).replace(/"\$\{(\w+)\}"/g, (_whole, name: string) => {
    if (!(name in TASKS)) throw new Error(`placeholder \${${name}} is not in the wiring table`);
    return JSON.stringify(value(name as TaskName));
  });
  return JSON.parse(text) as AslDefinition;
}

export interface ExecutionEvent {
  type: string;
  timestamp: number;
  state?: { name: string; type: string };
  Error?: string;
  Cause?: string;
  index?: number;
  /** Set on events of a Distributed Map's child execution: its name (`<run>/<map label>/<round key>/<index>`). */
  execution?: string;
  /** Order of arrival over the parent and all its child executions (timestamps tie at 1 ms). */
  seq?: number;
}

/** One child execution of an emulated Distributed Map. */
export interface ChildExecution {
  name: string;
  /** The Distributed Map state that ran it. */
  state: string;
  index: number;
  status: 'SUCCEEDED' | 'FAILED' | 'ABORTED';
  events: ExecutionEvent[];
  error?: { name: string; message: string };
}

export interface RunMachineOptions {
  deps: Deps;
  input: unknown;
  runId: string;
  definition?: AslDefinition;
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
   * Local resolvers of the service integrations (SERVICE_INTEGRATIONS). A definition state whose
   * integration has none fails as Step Functions would fail a call it cannot make.
   */
  integrations?: Partial<Record<ServiceIntegration, IntegrationResolver>>;
}

export interface RunMachineResult {
  status: 'SUCCEEDED' | 'FAILED' | 'ABORTED';
  output?: unknown;
  error?: { name: string; message: string };
  /** The execution's own events (a Distributed Map's children have theirs in `children`). */
  events: ExecutionEvent[];
  /** Child executions of the Distributed Maps, in the order they finished. */
  children: ChildExecution[];
}

/** Arrival order of events across one top-level run and its children. */
interface Sequencer {
  next: number;
}

type Json = Record<string, unknown>;

/** `$`, `$.a.b`, `$$.Map.Item.Value`, `$$.Map.Item.Index`: the paths an emulated ItemSelector may use. */
function selectPath(path: string, input: unknown, item: { value: unknown; index: number }): unknown {
  if (path === '$$.Map.Item.Value') return item.value;
  if (path === '$$.Map.Item.Index') return item.index;
  if (path === '$') return input;
  const m = /^\$((?:\.[A-Za-z_][A-Za-z0-9_]*)+)$/.exec(path);
  if (!m) throw new Error(`the Distributed Map emulation does not evaluate the path ${path}`);
  let v: unknown = input;
  for (const k of m[1].slice(1).split('.')) v = v && typeof v === 'object' ? (v as Json)[k] : undefined;
  if (v === undefined)
    throw Object.assign(new Error(`Invalid path ${path}: no such field`), { name: 'States.Runtime' });
  return v;
}

function applySelector(selector: unknown, input: unknown, item: { value: unknown; index: number }): unknown {
  if (selector === undefined) return item.value;
  const out: Json = {};
  for (const [k, v] of Object.entries(selector as Json)) {
    if (k.endsWith('.$')) out[k.slice(0, -2)] = selectPath(String(v), input, item);
    else out[k] = v && typeof v === 'object' && !Array.isArray(v) ? applySelector(v, input, item) : v;
  }
  return out;
}

interface DistributedMap extends State {
  ItemProcessor: { StartAt: string; States: Record<string, State>; ProcessorConfig: { Mode: string } };
  ItemReader?: { Resource: string; ReaderConfig?: { InputType?: string }; Parameters: Json };
  ItemsPath?: string;
  ItemSelector?: Json;
  MaxConcurrency?: number;
  ToleratedFailurePercentage?: number;
  ToleratedFailureCount?: number;
  Label?: string;
}

const isDistributed = (s: State): s is DistributedMap =>
  s.Type === 'Map' && s.ItemProcessor?.ProcessorConfig?.Mode === 'DISTRIBUTED';

/** Whether a definition has a Distributed Map (run through the emulation). */
export function hasDistributedMap(def: AslDefinition): boolean {
  return allStates(def).some(([, s]) => isDistributed(s));
}

/** Run items through `work` with at most `limit` at once (0: all at once), stopping new starts when `stop()` says so. */
async function pool<T>(
  count: number,
  limit: number,
  work: (i: number) => Promise<T>,
  stop: () => boolean,
): Promise<void> {
  let next = 0;
  const width = limit > 0 ? Math.min(limit, count) : count;
  const lanes = Array.from({ length: width }, async () => {
    while (next < count && !stop()) {
      const i = next++;
      await work(i);
    }
  });
  await Promise.all(lanes);
}

export async function runStateMachine(opts: RunMachineOptions): Promise<RunMachineResult> {
  return runOne(opts, { next: 0 }, undefined);
}

async function runOne(
  opts: RunMachineOptions,
  seq: Sequencer,
  executionName: string | undefined,
): Promise<RunMachineResult> {
  const original = opts.definition ?? loadDefinition();
  const children: ChildExecution[] = [];
  const handlers: Record<string, (input: unknown) => Promise<unknown>> = {};
  const definition: AslDefinition = { ...original, States: { ...original.States } };
  for (const [name, state] of Object.entries(original.States)) {
    if (!isDistributed(state)) continue;
    const { Catch, Retry, ResultPath, OutputPath, InputPath, Next, End, Comment } = state as State & Json;
    definition.States[name] = {
      Type: 'Task',
      Comment,
      Resource: `arn:aws:lambda:local:000000000000:function:pathbench-distributed-map-${name}`,
      // A Map Run is not bounded by a Task's default 60 s; the execution's own timeout applies.
      // (Below 2^31 ms, which the interpreter's timer holds.)
      TimeoutSeconds: 2_000_000,
      Parameters: {
        'input.$': '$',
        ...(state.ItemReader ? { reader: state.ItemReader.Parameters } : {}),
        ...(state.ItemsPath ? { 'items.$': state.ItemsPath } : {}),
      },
      ...Object.fromEntries(
        Object.entries({ Catch, Retry, ResultPath, OutputPath, InputPath, Next, End }).filter(
          ([, v]) => v !== undefined,
        ),
      ),
    } as State;
    handlers[name] = (event: unknown) =>
      runDistributedMap(opts, seq, name, state, event as Json, children, executionName ?? opts.runId);
  }
  for (const [name, s] of allStates(definition))
    if (isDistributed(s))
      throw new Error(`Distributed Map ${name} is nested: the local emulation runs top-level ones only`);
  for (const [stateName, task] of Object.entries(taskPlaceholders(original))) {
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
  for (const [stateName, resource] of Object.entries(taskIntegrations(definition))) {
    handlers[stateName] = async (input: unknown) => {
      const resolver = opts.integrations?.[resource];
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
    (task) => `arn:aws:lambda:local:000000000000:function:pathbench-${task}`,
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
        Execution: { Name: executionName ?? opts.runId, StartTime: startedAt, Input: opts.input },
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

/** Thrown by the emulated Map Run: the name is the error the Catch matches, as on AWS. */
class StatesError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

/** One Map Run of a Distributed Map state: items, child executions, concurrency, tolerated failures. */
async function runDistributedMap(
  opts: RunMachineOptions,
  seq: Sequencer,
  stateName: string,
  state: DistributedMap,
  event: Json,
  children: ChildExecution[],
  parentName: string,
): Promise<unknown[]> {
  const input = event.input;
  let items: unknown;
  let source: string;
  if (event.reader) {
    const reader = event.reader as { Key?: string };
    if (
      state.ItemReader?.Resource !== 'arn:aws:states:::s3:getObject' ||
      (state.ItemReader.ReaderConfig?.InputType ?? 'JSON') !== 'JSON'
    )
      throw new Error(`Distributed Map ${stateName}: the emulation reads JSON items with s3:getObject only`);
    source = String(reader.Key);
    const text = await opts.deps.store.getText(source);
    if (text === undefined) throw new StatesError('States.ItemReaderFailed', `item list ${source} not found`);
    items = JSON.parse(text);
  } else {
    source = state.ItemsPath ?? '$';
    items = event.items ?? input;
  }
  if (!Array.isArray(items))
    throw new StatesError('States.ItemReaderFailed', `items at ${source} are not a JSON array`);
  const count = items.length;
  const allowedCount = state.ToleratedFailureCount ?? 0;
  const allowedPct = state.ToleratedFailurePercentage ?? 0;
  const over = (failed: number) => failed > allowedCount && (failed * 100) / Math.max(1, count) > allowedPct;
  let failed = 0;
  const outputs: unknown[] = new Array(count);
  const label = state.Label ?? stateName;
  const runKey = /round=(\d+)/.exec(source)?.[1] ?? String(children.length);
  await pool(
    count,
    state.MaxConcurrency ?? 0,
    async (index) => {
      const name = `${parentName}/${label}/${runKey}/${index}`;
      const childInput = applySelector(state.ItemSelector, input, { value: items[index], index });
      const r = await runOne(
        {
          ...opts,
          definition: { StartAt: state.ItemProcessor.StartAt, States: state.ItemProcessor.States },
          input: childInput,
        },
        seq,
        name,
      );
      children.push({
        name,
        state: stateName,
        index,
        status: r.status,
        events: r.events,
        ...(r.error ? { error: r.error } : {}),
      });
      children.push(...r.children);
      if (r.status !== 'SUCCEEDED') failed++;
      else outputs[index] = r.output;
    },
    () => over(failed) || opts.signal?.aborted === true,
  );
  if (over(failed))
    throw new StatesError(
      'States.ExceedToleratedFailureThreshold',
      `${failed} of ${count} child executions of ${stateName} failed, over the tolerated ${allowedCount} (count) or ${allowedPct} % (percentage)`,
    );
  return outputs;
}
