/**
 * Task handlers: validate the event with zod, call the pipeline step with injected ports.
 * Nothing else lives here; the schemas are functions/pipeline/contracts.ts. An invalid event is a programming error between the
 * ASL and the code, so it fails with TaskInputError naming the field.
 */
import { z } from 'zod';
import { PathbenchError } from '../../core/errors.js';
import { collectOutput } from '../pipeline/collect.js';
import {
  clientInput,
  describeClientInput,
  failureInput,
  pathRef,
  pollProbeInput,
  releaseLockInput,
  runRef,
} from '../pipeline/contracts.js';
import { writeColumnarSamples } from '../pipeline/parquet-copy.js';
import * as path from '../pipeline/path.js';
import { releaseLock as release, restoreRoutes as restore } from '../pipeline/run-end.js';
import { summarizeRun as summarize } from '../pipeline/summary.js';
import * as taskProbe from '../pipeline/task-probe.js';
import { validatePlanStep } from '../pipeline/validate.js';
import type { Deps } from '../ports.js';

export class TaskInputError extends PathbenchError {}

function parse<T extends z.ZodType>(schema: T, input: unknown, task: string): z.infer<T> {
  const r = schema.safeParse(input);
  if (!r.success) {
    const first = r.error.issues[0];
    throw new TaskInputError(`${task}: bad input at ${first.path.join('.') || '(root)'}: ${first.message}`);
  }
  return r.data;
}

export const validatePlan = (deps: Deps, input: unknown) =>
  validatePlanStep(
    deps,
    parse(
      z.object({
        input: z.unknown(),
        runId: z.string(),
        startedAt: z.string().optional(),
        mode: z.literal('mesh').optional(),
      }),
      input,
      'ValidatePlan',
    ),
  );

export const beginPath = (deps: Deps, input: unknown) => path.beginPath(deps, parse(pathRef, input, 'BeginPath'));

export const stopClient = (deps: Deps, input: unknown) =>
  path.stopClient(deps, parse(clientInput, input, 'StopClient'));

export const startClient = (deps: Deps, input: unknown) =>
  path.startClient(deps, parse(clientInput, input, 'StartClient'));

export const describeClient = (deps: Deps, input: unknown) =>
  path.describeClient(deps, parse(describeClientInput, input, 'DescribeClient'));

export const swapRoutes = (deps: Deps, input: unknown) => path.swapRoutes(deps, parse(pathRef, input, 'SwapRoutes'));

export const sendProbe = (deps: Deps, input: unknown) => path.sendProbe(deps, parse(clientInput, input, 'SendProbe'));

export const prepareTaskProbe = (deps: Deps, input: unknown) =>
  taskProbe.prepareTaskProbe(deps, parse(pathRef, input, 'PrepareTaskProbe'));

export const endTaskProbe = (deps: Deps, input: unknown) =>
  taskProbe.endTaskProbe(deps, parse(pathRef.extend({ result: z.unknown() }), input, 'EndTaskProbe'));

export const pollProbe = (deps: Deps, input: unknown) =>
  path.pollProbe(deps, parse(pollProbeInput, input, 'PollProbe'));

/** Collect, then the partition's Parquet copy (rebuilt whole from its JSONL, so a retry does not duplicate). */
export const collect = async (deps: Deps, input: unknown) => {
  const ref = parse(pathRef, input, 'CollectOutput');
  const out = await collectOutput(deps, ref);
  await writeColumnarSamples(deps, ref);
  return out;
};
export { collect as collectOutput };

/** After a failure the salvaged samples get their Parquet copy too. */
export const recordPathFailure = async (deps: Deps, input: unknown) => {
  const event = parse(failureInput, input, 'RecordPathFailure');
  const out = await path.recordPathFailure(deps, event);
  try {
    await writeColumnarSamples(deps, { runId: event.runId, pathId: event.pathId });
  } catch (e) {
    // The failure is recorded and the JSONL kept; a Parquet copy that cannot be built must not hide it.
    deps.log.error('columnar samples not written', { runId: event.runId, pathId: event.pathId, error: String(e) });
  }
  return out;
};

export const restoreRoutes = (deps: Deps, input: unknown) => restore(deps, parse(runRef, input, 'RestoreRoutes'));
export const summarizeRun = (deps: Deps, input: unknown) => summarize(deps, parse(runRef, input, 'SummarizeRun'));
export const releaseLock = (deps: Deps, input: unknown) => release(deps, parse(releaseLockInput, input, 'ReleaseLock'));
