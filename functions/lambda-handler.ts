/**
 * What every Lambda entry (functions/handlers/*.lambda.ts) shares: Deps built once per container
 * at module load (cold start) from the environment and the adapters of the function's needs, and
 * errors rethrown with their `name` intact, because the ASL's Retry/Catch match on it.
 */
import { errorMessage } from '../core/errors.js';
import { type AwsPorts, awsDeps } from './adapters/aws/aws-deps.js';
import type { Deps } from './ports.js';
import type { LambdaName } from './wiring.js';

/** A handler: the validated event in, small JSON out (functions/handlers/*.ts). */
export type TaskRun = (deps: Deps, input: unknown) => Promise<unknown>;

/**
 * The Lambda handler of `name`: `run` with the Deps of its needs. `ports` must hold an adapter for
 * each port its needs use and no other (checked by the type and again when built).
 */
export function lambdaHandler<N extends LambdaName>(
  name: N,
  run: TaskRun,
  ports: AwsPorts<N>,
  env: Record<string, string | undefined> = process.env,
): (event: unknown) => Promise<unknown> {
  const deps = awsDeps(name, ports, env);
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
