/**
 * The run function of every task of the wiring table (functions/wiring.ts), for the local runner
 * (local/asl-interpreter.ts) and the tests that run the real ASL. Each handler validates its event
 * with zod and calls its pipeline step; each runs with the Deps of its needs only, as its Lambda
 * does (functions/needs.ts). A Lambda imports its own handler, never this map: a bundle holds one
 * handler (functions/handlers/<step>.lambda.ts).
 */
import type { TaskRun } from '../lambda-handler.js';
import { restrictToNeeds } from '../needs.js';
import type { TaskName } from '../wiring.js';
import { beginPath } from './begin-path.js';
import { collectOutput } from './collect-output.js';
import { describeClient } from './describe-client.js';
import { endPath } from './end-path.js';
import { endTaskProbe } from './end-task-probe.js';
import { pollProbe } from './poll-probe.js';
import { prepareTaskProbe } from './prepare-task-probe.js';
import { recordPathFailure } from './record-path-failure.js';
import { releaseLock } from './release-lock.js';
import { restoreRoutes } from './restore-routes.js';
import { sendProbe } from './send-probe.js';
import { startClient } from './start-client.js';
import { stopClient } from './stop-client.js';
import { summarizeRun } from './summarize-run.js';
import { swapRoutes } from './swap-routes.js';
import { validatePlan } from './validate-plan.js';

const HANDLERS: Record<TaskName, TaskRun> = {
  ValidatePlan: validatePlan,
  BeginPath: beginPath,
  StopClient: stopClient,
  StartClient: startClient,
  DescribeClient: describeClient,
  SwapRoutes: swapRoutes,
  SendProbe: sendProbe,
  PrepareTaskProbe: prepareTaskProbe,
  EndTaskProbe: endTaskProbe,
  PollProbe: pollProbe,
  CollectOutput: collectOutput,
  EndPath: endPath,
  RecordPathFailure: recordPathFailure,
  RestoreRoutes: restoreRoutes,
  SummarizeRun: summarizeRun,
  ReleaseLock: releaseLock,
};

/** Task name → its handler, called with the Deps of the task's needs. */
export const TASK_RUNS = Object.fromEntries(
  Object.entries(HANDLERS).map(([name, run]) => [
    name,
    (deps, input) => run(restrictToNeeds(deps, name as TaskName), input),
  ]),
) as Record<TaskName, TaskRun>;
