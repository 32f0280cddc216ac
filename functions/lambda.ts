/**
 * The one Lambda entry file: one exported handler per task of the wiring table, plus the
 * cleanup that an EventBridge rule runs after an execution ends without finishing itself. Every
 * NodejsFunction bundles this file and picks its handler by name. Deps are built once per
 * container at module load (cold start); errors are rethrown with their `name` intact because
 * the ASL's Retry/Catch match on it.
 */
import { z } from 'zod';
import { errorMessage } from '../core/errors.js';
import { awsDeps } from './adapters/aws/aws-deps.js';
import { TaskInputError } from './handlers/index.js';
import { cleanupAfterExecution } from './pipeline/abandoned-run.js';
import type { Deps } from './ports.js';
import { CLEANUP_LATE_SWEEP_MARGIN_SECONDS, TASKS, type TaskName } from './wiring.js';

const deps: Deps = awsDeps(process.env);

/** A Lambda handler that runs one task of the wiring table with the state input as its event. */
export function lambdaHandler(name: TaskName): (event: unknown) => Promise<unknown> {
  return handlerFor(name, TASKS[name].run);
}

function handlerFor(name: string, run: (deps: Deps, event: unknown) => Promise<unknown>) {
  return async (event: unknown): Promise<unknown> => {
    try {
      return await run(deps, event);
    } catch (e) {
      deps.log.error('task failed', {
        task: name,
        error: errorMessage(e),
        name: e instanceof Error ? e.name : 'Error',
      });
      // The runtime reports errorType = error.name; bundling keeps class names (keepNames) so
      // PathbenchError's `name` survives minification.
      if (e instanceof Error) throw e;
      throw new Error(errorMessage(e));
    }
  };
}

export const ValidatePlan = lambdaHandler('ValidatePlan');
export const BeginPath = lambdaHandler('BeginPath');
export const StopClient = lambdaHandler('StopClient');
export const StartClient = lambdaHandler('StartClient');
export const DescribeClient = lambdaHandler('DescribeClient');
export const SwapRoutes = lambdaHandler('SwapRoutes');
export const SendProbe = lambdaHandler('SendProbe');
export const PrepareTaskProbe = lambdaHandler('PrepareTaskProbe');
export const EndTaskProbe = lambdaHandler('EndTaskProbe');
export const PollProbe = lambdaHandler('PollProbe');
export const CollectOutput = lambdaHandler('CollectOutput');
export const RecordPathFailure = lambdaHandler('RecordPathFailure');
export const RestoreRoutes = lambdaHandler('RestoreRoutes');
export const SummarizeRun = lambdaHandler('SummarizeRun');
export const ReleaseLock = lambdaHandler('ReleaseLock');

/** The part of EventBridge's "Step Functions Execution Status Change" event the cleanup reads. */
const executionStatusChange = z.object({
  detail: z.object({
    name: z.string().min(1),
    status: z.string().min(1),
    startDate: z.number().nullish(),
    stopDate: z.number().nullish(),
  }),
});

/**
 * Not a state machine task: an EventBridge rule invokes it when an execution ends FAILED,
 * TIMED_OUT or ABORTED, so routes and the lock are cleaned up even when no Catch could run.
 */
export const CleanupAfterExecution = handlerFor('CleanupAfterExecution', (d, event) => {
  const r = executionStatusChange.safeParse(event);
  if (!r.success) {
    const first = r.error.issues[0];
    throw new TaskInputError(
      `CleanupAfterExecution: bad event at ${first.path.join('.') || '(root)'}: ${first.message}`,
    );
  }
  const { name, status, startDate, stopDate } = r.data.detail;
  // startDate (epoch ms) is $$.Execution.StartTime: it names the execution that holds the lock.
  const startedAt = startDate == null ? undefined : new Date(startDate).toISOString();
  return cleanupAfterExecution(d, {
    runId: name,
    status,
    ...(startedAt ? { startedAt } : {}),
    ...(stopDate != null ? { stoppedAt: stopDate } : {}),
    // A SwapRoutes invocation can run on after a stop until its own timeout: sweep again then.
    lateSweepAfterMs: (TASKS.SwapRoutes.timeoutSeconds + CLEANUP_LATE_SWEEP_MARGIN_SECONDS) * 1000,
  });
});
