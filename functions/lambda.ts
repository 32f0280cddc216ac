/**
 * The one Lambda entry file: one exported handler per task of the wiring table. Every
 * NodejsFunction bundles this file and picks its handler by name. Deps are built once per
 * container at module load (cold start); errors are rethrown with their `name` intact because
 * the ASL's Retry/Catch match on it.
 */
import { awsDeps } from './adapters/aws/deps.js';
import { errorMessage } from './core/errors.js';
import type { Deps } from './ports.js';
import { TASKS, type TaskName } from './wiring.js';

const deps: Deps = awsDeps(process.env);

/** A Lambda handler that runs one task of the wiring table with the state input as its event. */
export function lambdaHandler(name: TaskName): (event: unknown) => Promise<unknown> {
  const task = TASKS[name];
  return async (event: unknown) => {
    try {
      return await task.run(deps, event);
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
export const PollProbe = lambdaHandler('PollProbe');
export const CollectOutput = lambdaHandler('CollectOutput');
export const RecordPathFailure = lambdaHandler('RecordPathFailure');
export const RestoreRoutes = lambdaHandler('RestoreRoutes');
export const SummarizeRun = lambdaHandler('SummarizeRun');
export const ReleaseLock = lambdaHandler('ReleaseLock');
