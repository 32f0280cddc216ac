/**
 * Runs statemachine/measurement.asl.json in-process with aws-local-stepfunctions. Every Task's
 * `${Placeholder}` is resolved through the wiring table (functions/wiring.ts), the same table
 * CDK uses for substitutions, so local and AWS cannot drift apart.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StateMachine } from 'aws-local-stepfunctions';
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

type State = {
  Type: string;
  Resource?: string;
  ItemProcessor?: { States: Record<string, State> };
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
 * `.waitForTaskToken` state mints a real token per invocation in its place (local/task-queue.ts).
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
 * timeout it is given in the message (local/task-queue.ts: the probe's heartbeatSeconds and
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
  events: ExecutionEvent[];
}

export async function runStateMachine(opts: RunMachineOptions): Promise<RunMachineResult> {
  const definition = opts.definition ?? loadDefinition();
  const handlers: Record<string, (input: unknown) => Promise<unknown>> = {};
  for (const [stateName, task] of Object.entries(taskPlaceholders(definition))) {
    handlers[stateName] = async (input: unknown) => {
      // Lambda sees JSON, not shared objects: serialize both ways.
      const event = JSON.parse(JSON.stringify(input));
      const run = () => TASKS[task].run(opts.deps, event);
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
  const machine = new StateMachine(substituted as never, { validationOptions: { checkArn: true } });
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
        Execution: { Name: opts.runId, StartTime: startedAt, Input: opts.input },
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
      events.push(e);
      opts.onEvent?.(e);
    }
  })();
  try {
    const output = await execution.result;
    await pump.catch(() => undefined);
    return { status: 'SUCCEEDED', output, events };
  } catch (e) {
    await pump.catch(() => undefined);
    if (aborted)
      return { status: 'ABORTED', error: { name: 'ExecutionAborted', message: 'execution stopped' }, events };
    const err = e as Error & { cause?: Error };
    const inner = err.cause instanceof Error ? err.cause : err;
    return { status: 'FAILED', error: { name: inner.name, message: inner.message }, events };
  } finally {
    ended.abort();
    opts.signal?.removeEventListener('abort', abort);
  }
}
