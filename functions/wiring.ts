/**
 * The one table that wires the state machine (docs/architecture.md). Every `${Placeholder}` in
 * statemachine/measurement.asl.json has exactly one entry here; CDK substitutions and IAM grants
 * and the local runner are all derived from it, so they cannot drift apart.
 */

import * as h from './handlers/index.js';
import type { Deps } from './ports.js';

/**
 * What a Lambda touches. CDK grants each one as a fixed set of IAM statements
 * (infra/grants.ts), and nothing else; the local runner ignores them.
 *   store:read, store:write  the data bucket's run prefixes
 *   fleet     stop, start and describe the client instances (and their types' bandwidth)
 *   fleet:read  describe only: the client's instance type, AZ and bandwidth (no stop/start)
 *   routes    change route entries (and put them back), on the allowed route tables only
 *   routes:read  read route entries (DescribeRouteTables) only
 *   runner    send and poll the probe command on a client
 *   runner:cancel  cancel a probe command that overran its deadline (PollProbe only)
 *   query     Athena queries over the samples table, its Glue partitions
 *   lock      the run lock, and whether the execution holding it has ended
 *   lock:read  who holds the run lock (GetItem only): tasks that stop when their run lost it
 *   plans     named plans, read for `{ planName }` inputs
 *   publish   regression events on the default EventBridge bus (metrics go out as EMF log lines)
 */
export type Capability =
  | 'store:read'
  | 'store:write'
  | 'fleet'
  | 'fleet:read'
  | 'routes'
  | 'routes:read'
  | 'runner'
  | 'runner:cancel'
  | 'query'
  | 'lock'
  | 'lock:read'
  | 'plans'
  | 'publish';

/** What CDK needs to deploy one Lambda: its grants, its timeout, its description. */
export interface LambdaWiring {
  needs: Capability[];
  /** Lambda timeout; waiting happens in the state machine, so these stay short. */
  timeoutSeconds: number;
  /** Lambda memory in MB when not the default 512 (infra/constructs/pathbench-function.ts). */
  memoryMB?: number;
  description: string;
}

export interface TaskWiring extends LambdaWiring {
  /** Core logic: validated input in, small JSON out. */
  run: (deps: Deps, input: unknown) => Promise<unknown>;
}

export const TASKS = {
  ValidatePlan: {
    run: h.validatePlan,
    // The only task that resolves `{ planName }` inputs.
    needs: ['store:read', 'store:write', 'lock', 'plans', 'routes:read'],
    timeoutSeconds: 30,
    description: 'validate the plan, take the run lock, write plan, specs and manifest',
  },
  BeginPath: {
    run: h.beginPath,
    // fleet:read: the client's instance type and baseline / peak bandwidth for the manifest.
    needs: ['store:read', 'store:write', 'fleet:read'],
    timeoutSeconds: 30,
    description: "mark a path running, record the client's instance type and baseline / peak bandwidth",
  },
  StopClient: {
    run: h.stopClient,
    needs: ['store:read', 'store:write', 'fleet'],
    timeoutSeconds: 30,
    description: 'stop the client instance (reboot, part 1)',
  },
  StartClient: {
    run: h.startClient,
    needs: ['store:read', 'store:write', 'fleet'],
    timeoutSeconds: 30,
    description: 'start the client instance (reboot, part 2)',
  },
  DescribeClient: {
    run: h.describeClient,
    needs: ['store:read', 'store:write', 'fleet'],
    timeoutSeconds: 30,
    description: 'one bounded poll of the client state (stopped / running and command-ready)',
  },
  SwapRoutes: {
    run: h.swapRoutes,
    // Checks before and after each change that its run still holds the lock (route-journal.ts ownershipLost).
    needs: ['store:read', 'store:write', 'routes', 'lock:read'],
    timeoutSeconds: 120,
    description: "point the path's route entries at its targets, verify, remember the originals",
  },
  SendProbe: {
    run: h.sendProbe,
    // Cancels its own command when the run was stopped while it sent it.
    needs: ['store:read', 'store:write', 'runner', 'runner:cancel', 'lock:read'],
    timeoutSeconds: 30,
    description: 'send the probe command to the client',
  },
  PrepareTaskProbe: {
    run: h.prepareTaskProbe,
    // A task client's probe message; the state machine sends it (sqs:sendMessage.waitForTaskToken).
    needs: ['store:read', 'store:write', 'lock:read'],
    timeoutSeconds: 30,
    description: "build a task client's probe message (spec key, raw prefix, heartbeat and timeout)",
  },
  EndTaskProbe: {
    run: h.endTaskProbe,
    needs: ['store:read', 'store:write'],
    timeoutSeconds: 30,
    description: 'record the task that ran the probe and end the Probe step',
  },
  PollProbe: {
    run: h.pollProbe,
    needs: ['store:read', 'store:write', 'runner', 'runner:cancel', 'lock:read'],
    timeoutSeconds: 30,
    description: 'one bounded poll of the probe command',
  },
  CollectOutput: {
    run: h.collectOutput,
    needs: ['store:read', 'store:write', 'query'],
    // Streams raw → samples line by line: ~35 MB of heap whatever the file size. The handler
    // then writes the Parquet copy with its rank columns (two passes over the samples): a 1 M-line
    // sockperf log took 5 s + 39 s on the bench machine (docs/benchmarks.md), so 900 s (Lambda's
    // maximum) leaves room for about 7 M lines a path on a 512 MB Lambda's third of a vCPU.
    timeoutSeconds: 900,
    memoryMB: 512,
    description: 'parse raw tool output into sample records, register the partition',
  },
  RecordPathFailure: {
    run: h.recordPathFailure,
    // After a failed probe command it parses what raw output arrived (like CollectOutput).
    needs: ['store:read', 'store:write', 'query'],
    timeoutSeconds: 900,
    memoryMB: 512,
    description: 'record which step of a path failed and why; keep samples of probes that finished',
  },
  RestoreRoutes: {
    run: h.restoreRoutes,
    // Checks before and after each change that its run still holds the lock (route-journal.ts ownershipLost).
    needs: ['store:read', 'store:write', 'routes', 'lock:read'],
    timeoutSeconds: 120,
    description: 'put every route this run changed back to its original target',
  },
  SummarizeRun: {
    run: h.summarizeRun,
    needs: ['store:read', 'store:write', 'query', 'publish'],
    timeoutSeconds: 300,
    description: 'compute percentiles, write summary and reports, judge against earlier runs, publish',
  },
  ReleaseLock: {
    run: h.releaseLock,
    needs: ['store:read', 'store:write', 'lock'],
    timeoutSeconds: 15,
    description: 'finish the manifest and release the run lock',
  },
} satisfies Record<string, TaskWiring>;

export type TaskName = keyof typeof TASKS;
export const TASK_NAMES = Object.keys(TASKS) as TaskName[];

/**
 * The one Lambda that is not a task: an EventBridge rule runs it (functions/lambda.ts,
 * CleanupAfterExecution) after an execution ended FAILED, TIMED_OUT or ABORTED, when the ASL's
 * own RestoreRoutes/ReleaseLock may not have run.
 */
/** After an ABORTED/TIMED_OUT execution the cleanup sweeps routes again this long after SwapRoutes' timeout. */
export const CLEANUP_LATE_SWEEP_MARGIN_SECONDS = 10;

export const CLEANUP = {
  handler: 'CleanupAfterExecution',
  // runner:cancel and query: it cancels the probing path's command and salvages its output.
  needs: ['store:read', 'store:write', 'routes', 'lock', 'runner:cancel', 'query'],
  // Waits for the late route sweep (SwapRoutes' 120 s timeout + margin after the stop), then sweeps.
  timeoutSeconds: 300,
  description: 'after a FAILED/TIMED_OUT/ABORTED execution: restore its routes, mark it failed, release its lock',
} satisfies LambdaWiring & { handler: string };
