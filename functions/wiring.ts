/**
 * The one table that wires the state machine (docs/architecture.md). Every `${Placeholder}` in
 * statemachine/measurement.asl.json has exactly one entry here; CDK substitutions, IAM grants, each
 * Lambda's entry and adapters, and the local runner are all derived from it, so they cannot drift
 * apart. Metadata only: the run functions are functions/handlers/index.ts (TASK_RUNS), so that
 * infra and each Lambda entry can read this table without importing every handler.
 */

/**
 * What a Lambda touches. CDK grants each one as a fixed set of IAM statements
 * (infra/grants.ts), and nothing else; the local runner ignores them.
 *   store:read, store:write  the data bucket's run prefixes (raw output is the clients' to write)
 *   parquet   rewrite a path's Parquet copy whole: deleted when the path has no samples
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
  | 'parquet'
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

/**
 * The port of Deps (functions/ports.ts) each capability uses. A Lambda is built with the adapters
 * of its needs' ports only (functions/lambda-handler.ts), and runs with every other port absent
 * (functions/needs.ts), locally too.
 */
export const PORT_OF = {
  'store:read': 'store',
  'store:write': 'store',
  parquet: 'store',
  fleet: 'fleet',
  'fleet:read': 'fleet',
  routes: 'routes',
  'routes:read': 'routes',
  runner: 'runner',
  'runner:cancel': 'runner',
  query: 'query',
  lock: 'lock',
  'lock:read': 'lock',
  plans: 'plans',
  publish: 'publisher',
} as const satisfies Record<Capability, PortName>;

/** The ports of Deps that an adapter fills (the rest of Deps is configuration). */
export type PortName = 'store' | 'fleet' | 'routes' | 'runner' | 'query' | 'lock' | 'plans' | 'publisher';

/** What CDK needs to deploy one Lambda: its entry, its grants, its timeout, its description. */
export interface LambdaWiring {
  /**
   * The Lambda's entry file (repository-relative), exporting `handler`: it imports its own
   * handler and the AWS adapters of its needs only, so each function's bundle holds just that.
   */
  entry: string;
  needs: readonly Capability[];
  /** Lambda timeout; waiting happens in the state machine, so these stay short. */
  timeoutSeconds: number;
  /** Lambda memory in MB when not the default 512 (infra/constructs/pathbench-function.ts). */
  memoryMB?: number;
  description: string;
}

export const TASKS = {
  ValidatePlan: {
    entry: 'functions/handlers/validate-plan.lambda.ts',
    // The only task that resolves `{ planName }` inputs.
    needs: ['store:read', 'store:write', 'lock', 'plans', 'routes:read'],
    timeoutSeconds: 30,
    description: 'validate the plan, take the run lock, write plan, specs and manifest',
  },
  BeginPath: {
    entry: 'functions/handlers/begin-path.lambda.ts',
    // fleet:read: the client's instance type and baseline / peak bandwidth for the manifest.
    needs: ['store:read', 'store:write', 'fleet:read'],
    timeoutSeconds: 30,
    description: "mark a path running, record the client's instance type and baseline / peak bandwidth",
  },
  StopClient: {
    entry: 'functions/handlers/stop-client.lambda.ts',
    needs: ['store:read', 'store:write', 'fleet'],
    timeoutSeconds: 30,
    description: 'stop the client instance (reboot, part 1)',
  },
  StartClient: {
    entry: 'functions/handlers/start-client.lambda.ts',
    needs: ['store:read', 'store:write', 'fleet'],
    timeoutSeconds: 30,
    description: 'start the client instance (reboot, part 2)',
  },
  DescribeClient: {
    entry: 'functions/handlers/describe-client.lambda.ts',
    needs: ['store:read', 'store:write', 'fleet'],
    timeoutSeconds: 30,
    description: 'one bounded poll of the client state (stopped / running and command-ready)',
  },
  SwapRoutes: {
    entry: 'functions/handlers/swap-routes.lambda.ts',
    // Checks before and after each change that its run still holds the lock (route-journal.ts ownershipLost).
    needs: ['store:read', 'store:write', 'routes', 'lock:read'],
    timeoutSeconds: 120,
    description: "point the path's route entries at its targets, verify, remember the originals",
  },
  SendProbe: {
    entry: 'functions/handlers/send-probe.lambda.ts',
    // Cancels its own command when the run was stopped while it sent it.
    needs: ['store:read', 'store:write', 'runner', 'runner:cancel', 'lock:read'],
    timeoutSeconds: 30,
    description: 'send the probe command to the client',
  },
  PrepareTaskProbe: {
    entry: 'functions/handlers/prepare-task-probe.lambda.ts',
    // A task client's probe message; the state machine sends it (sqs:sendMessage.waitForTaskToken).
    needs: ['store:read', 'store:write', 'lock:read'],
    timeoutSeconds: 30,
    description: "build a task client's probe message (spec key, raw prefix, heartbeat and timeout)",
  },
  EndTaskProbe: {
    entry: 'functions/handlers/end-task-probe.lambda.ts',
    needs: ['store:read', 'store:write'],
    timeoutSeconds: 30,
    description: 'record the task that ran the probe and end the Probe step',
  },
  PollProbe: {
    entry: 'functions/handlers/poll-probe.lambda.ts',
    needs: ['store:read', 'store:write', 'runner', 'runner:cancel', 'lock:read'],
    timeoutSeconds: 30,
    description: 'one bounded poll of the probe command',
  },
  CollectOutput: {
    entry: 'functions/handlers/collect-output.lambda.ts',
    needs: ['store:read', 'store:write', 'parquet', 'query'],
    // Streams raw → samples line by line: ~35 MB of heap whatever the file size (a 1 M-line
    // sockperf log: 5 s on the bench machine, docs/benchmarks.md). It empties the partition's
    // Parquet prefix and returns the UNLOAD that CopyToParquet has Athena run: the rows never
    // pass through a Lambda, and no Lambda waits on the copy.
    timeoutSeconds: 900,
    memoryMB: 512,
    description: 'parse raw tool output into sample records, register the partition, prepare the Parquet copy',
  },
  EndPath: {
    entry: 'functions/handlers/end-path.lambda.ts',
    needs: ['store:read', 'store:write'],
    timeoutSeconds: 30,
    description: 'after CopyToParquet: end the Collect step and call the path succeeded',
  },
  RecordPathFailure: {
    entry: 'functions/handlers/record-path-failure.lambda.ts',
    // After a failed probe command it parses what raw output arrived (like CollectOutput).
    needs: ['store:read', 'store:write', 'parquet', 'query'],
    timeoutSeconds: 900,
    memoryMB: 512,
    description:
      'record which step of a path failed and why; keep samples of probes that finished, prepare their Parquet copy',
  },
  RestoreRoutes: {
    entry: 'functions/handlers/restore-routes.lambda.ts',
    // Checks before and after each change that its run still holds the lock (route-journal.ts ownershipLost).
    needs: ['store:read', 'store:write', 'routes', 'lock:read'],
    timeoutSeconds: 120,
    description: 'put every route this run changed back to its original target',
  },
  SummarizeRun: {
    entry: 'functions/handlers/summarize-run.lambda.ts',
    needs: ['store:read', 'store:write', 'query', 'publish'],
    timeoutSeconds: 300,
    description: 'compute percentiles, write summary and reports, judge against earlier runs, publish',
  },
  ReleaseLock: {
    entry: 'functions/handlers/release-lock.lambda.ts',
    needs: ['store:read', 'store:write', 'lock'],
    timeoutSeconds: 15,
    description: 'finish the manifest and release the run lock',
  },
} satisfies Record<string, LambdaWiring>;

export type TaskName = keyof typeof TASKS;
export const TASK_NAMES = Object.keys(TASKS) as TaskName[];

/** After an ABORTED/TIMED_OUT execution the cleanup sweeps routes again this long after SwapRoutes' timeout. */
export const CLEANUP_LATE_SWEEP_MARGIN_SECONDS = 10;

/**
 * The one Lambda that is not a task: an EventBridge rule runs it
 * (functions/handlers/cleanup-after-execution.lambda.ts) after an execution ended FAILED,
 * TIMED_OUT or ABORTED, when the ASL's own RestoreRoutes/ReleaseLock may not have run.
 */
export const CLEANUP = {
  name: 'CleanupAfterExecution',
  entry: 'functions/handlers/cleanup-after-execution.lambda.ts',
  // runner:cancel, parquet and query: it cancels the probing path's command and salvages its output.
  needs: ['store:read', 'store:write', 'parquet', 'routes', 'lock', 'runner:cancel', 'query'],
  // Waits for the late route sweep (SwapRoutes' 120 s timeout + margin after the stop), then sweeps.
  timeoutSeconds: 300,
  description: 'after a FAILED/TIMED_OUT/ABORTED execution: restore its routes, mark it failed, release its lock',
} satisfies LambdaWiring & { name: string };

/** Every Lambda function: the tasks and the cleanup. */
export const LAMBDAS = { ...TASKS, [CLEANUP.name]: CLEANUP } as typeof TASKS & {
  CleanupAfterExecution: typeof CLEANUP;
};
export type LambdaName = keyof typeof LAMBDAS;
export const LAMBDA_NAMES = Object.keys(LAMBDAS) as LambdaName[];

/** The ports a Lambda's needs use (PORT_OF), as a type: its entry must pass an adapter for each, and no other. */
export type PortsOf<N extends LambdaName> = (typeof PORT_OF)[(typeof LAMBDAS)[N]['needs'][number]];

/** The ports a Lambda's needs use, at run time. */
export function portsOf(name: LambdaName): PortName[] {
  return [...new Set(LAMBDAS[name].needs.map((c) => PORT_OF[c]))];
}
