/**
 * The Distributed Map, emulated: aws-local-stepfunctions has none, and the ASL file is not edited
 * for it. local/asl-interpreter.ts hands a top-level Map state in DISTRIBUTED mode to the
 * interpreter as a Task (same Catch, Retry, ResultPath, Next; distributedMapAsTask) whose local
 * handler does what a Map Run does (runDistributedMap): reads the items (ItemReader from the
 * object store, where S3 is; or ItemsPath), builds each item's input with ItemSelector, runs each
 * item as a **child execution** of the ItemProcessor (its own interpreter run, its own event
 * log), at most MaxConcurrency at once (0: unbounded), and fails with
 * States.ExceedToleratedFailureThreshold when more children failed than ToleratedFailureCount or
 * ToleratedFailurePercentage allow (either; both default to 0). Once over the threshold no
 * further child starts; children already running finish (AWS stops them). The item list's Bucket
 * is not used: the local object store is the bucket.
 */
import type { ObjectStore } from '../functions/ports.js';
import { type AslState, type AslStates, allStates } from '../statemachine/asl.js';
import type { ChildExecution, RunMachineResult } from './local-execution.js';

export type Json = Record<string, unknown>;

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

export interface DistributedMap extends AslState {
  ItemProcessor: AslStates & { ProcessorConfig: { Mode: string } };
  ItemReader?: { Resource: string; ReaderConfig?: { InputType?: string }; Parameters: Json };
  ItemsPath?: string;
  ItemSelector?: Json;
  MaxConcurrency?: number;
  ToleratedFailurePercentage?: number;
  ToleratedFailureCount?: number;
  Label?: string;
}

export const isDistributed = (s: AslState): s is DistributedMap =>
  s.Type === 'Map' && s.ItemProcessor?.ProcessorConfig?.Mode === 'DISTRIBUTED';

/** Whether a definition has a Distributed Map (run through the emulation). */
export function hasDistributedMap(def: AslStates): boolean {
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

/**
 * The Task the interpreter runs in a Distributed Map's place: the Map's Catch, Retry, ResultPath,
 * OutputPath, InputPath, Next and End, and as parameters what the Map Run reads.
 */
export function distributedMapAsTask(name: string, state: DistributedMap): AslState {
  const { Catch, Retry, ResultPath, OutputPath, InputPath, Next, End, Comment } = state;
  return {
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
      Object.entries({ Catch, Retry, ResultPath, OutputPath, InputPath, Next, End }).filter(([, v]) => v !== undefined),
    ),
  };
}

/** Thrown by the emulated Map Run: the name is the error the Catch matches, as on AWS. */
class StatesError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

/** What one child execution of a Map Run needs from the interpreter (local/asl-interpreter.ts). */
export interface ChildRun {
  /** The name of the execution that runs the Map. */
  parentName: string;
  /** Run the ItemProcessor as a child execution with this input and name. */
  run: (definition: AslStates, input: unknown, name: string) => Promise<RunMachineResult>;
  /** The object store the ItemReader reads (the bucket, locally). */
  store: ObjectStore;
  signal?: AbortSignal;
}

/** One Map Run of a Distributed Map state: items, child executions, concurrency, tolerated failures. */
export async function runDistributedMap(
  stateName: string,
  state: DistributedMap,
  event: Json,
  children: ChildExecution[],
  ctx: ChildRun,
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
    const text = await ctx.store.getText(source);
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
      const name = `${ctx.parentName}/${label}/${runKey}/${index}`;
      const childInput = applySelector(state.ItemSelector, input, { value: items[index], index });
      const processor = { StartAt: state.ItemProcessor.StartAt, States: state.ItemProcessor.States };
      const r = await ctx.run(processor, childInput, name);
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
    () => over(failed) || ctx.signal?.aborted === true,
  );
  if (over(failed))
    throw new StatesError(
      'States.ExceedToleratedFailureThreshold',
      `${failed} of ${count} child executions of ${stateName} failed, over the tolerated ${allowedCount} (count) or ${allowedPct} % (percentage)`,
    );
  return outputs;
}
