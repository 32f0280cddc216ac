/**
 * Ports: the interfaces between pipeline logic and the world. Each has an AWS adapter
 * (functions/adapters/aws) and local ones (local/, lab/lab-fleet.ts, lab/lab-routes.ts); docs/architecture.md.
 */

import type { ClientNetwork } from '../core/client-network.js';
import type { ClientRef, RouteEntry, RouteTarget } from '../core/resolved-plan.js';
import type { AllowedRoute } from '../core/route-policy.js';
import type { Summary } from '../core/run-summary.js';
import type { CostSettings } from '../core/settings.js';
import type { AllowedTargets } from '../core/target-policy.js';
import type { QueryExecutionCall } from '../queries/unload.js';

export interface ObjectStore {
  /** Human-readable location, e.g. "s3://bucket" or a directory. */
  readonly location: string;
  /** The S3 bucket, for a Distributed Map's ItemReader; absent for stores that are not S3. */
  readonly bucket?: string;
  put(key: string, body: string | Uint8Array, contentType?: string): Promise<void>;
  /** Returns undefined when the key does not exist. */
  get(key: string): Promise<Uint8Array | undefined>;
  getText(key: string): Promise<string | undefined>;
  /**
   * Streaming read (large raw files): the object's bytes in chunks, undefined when the key does
   * not exist. Optional: without it callers read the whole object with get().
   */
  getStream?(key: string): Promise<AsyncIterable<Uint8Array> | undefined>;
  /**
   * Streaming write: the body as it is produced, held in memory a part at a time at most; the
   * object appears whole or not at all, like put(). Optional: without it callers buffer and put().
   */
  putStream?(key: string, body: AsyncIterable<string | Uint8Array>, contentType?: string): Promise<void>;
  /**
   * Read with a version token for a conditional write (S3: the ETag); undefined when the key does
   * not exist. Optional, with putIfVersion: stores written by several processes at once (S3 under
   * parallel Lambdas) have both, and the run manifest is then updated by compare-and-swap.
   */
  getVersioned?(key: string): Promise<{ text: string; version: string } | undefined>;
  /** Write only if the object is still at `version`; false when another writer changed it first. */
  putIfVersion?(key: string, body: string, version: string, contentType?: string): Promise<boolean>;
  /** All keys under a prefix, sorted, across pages. */
  list(prefix: string): Promise<string[]>;
  delete(key: string): Promise<void>;
}

export type InstanceState = 'pending' | 'running' | 'stopping' | 'stopped' | 'shutting-down' | 'terminated';

export interface InstanceInfo {
  instanceId: string;
  state: InstanceState;
  /** True when running and the command channel (SSM agent / lab namespace) answers. */
  commandReady: boolean;
  azId?: string;
  instanceType?: string;
  stateReason?: string;
}

export interface Fleet {
  /** Whether stop/start does anything real here; a no-op fleet says so in the manifest. */
  readonly rebootable: boolean;
  /** Seconds between state polls the state machine should wait (AWS: 5–10; lab: 1). */
  readonly pollSeconds: number;
  stop(client: ClientRef): Promise<void>;
  start(client: ClientRef): Promise<void>;
  describe(client: ClientRef, since?: string): Promise<InstanceInfo>;
  /**
   * The client's network facts (instance type, AZ id, baseline and peak bandwidth in bit/s), or
   * undefined where there is no instance to ask about (loopback).
   */
  network(client: ClientRef): Promise<ClientNetwork | undefined>;
}

export interface Routes {
  /** Current target of (routeTableId, destination) as "kind:id", or "none". */
  read(route: Omit<RouteEntry, 'via'>): Promise<RouteTarget>;
  /** Point the destination at a target ("kind:id"); create the route when missing. */
  point(route: Omit<RouteEntry, 'via'>, target: RouteTarget): Promise<void>;
  /** True when the route points at target and is usable (active, not blackhole). */
  verify(route: Omit<RouteEntry, 'via'>, target: RouteTarget): Promise<boolean>;
  /** Remove a route this run created (original target "none"). */
  remove(route: Omit<RouteEntry, 'via'>): Promise<void>;
}

export type CommandStatus = 'Pending' | 'InProgress' | 'Success' | 'Failed' | 'TimedOut' | 'Cancelled';

export interface CommandInvocation {
  status: CommandStatus;
  /** Short reason on failure (never the probe data: that is in the object store). */
  detail?: string;
}

export interface ProbeCommand {
  runId: string;
  pathId: string;
  client: ClientRef;
  /** Object-store key of the spec the agent must execute. */
  specKey: string;
  /** Object-store prefix the raw outputs must land under (raw/path=<id>/run=<runId>/). */
  rawPrefix: string;
  /** Hard limit for the whole command. */
  timeoutSeconds: number;
}

export interface CommandRunner {
  /**
   * After a command reads TimedOut or Cancelled, how long its stop trap may still be uploading
   * the killed agent's files; it writes `interrupted.json` last. PollProbe waits for that marker
   * up to this long before the path fails (AWS: the SSM document's trap). Absent or 0: a stopped
   * command's files are all there when it reads stopped (the local runner copies them first).
   */
  readonly stopUploadGraceSeconds?: number;
  send(cmd: ProbeCommand): Promise<{ commandId: string }>;
  status(commandId: string, client: ClientRef): Promise<CommandInvocation>;
  /** Stop a command that overran its deadline, so it cannot overlap the next path. Idempotent. */
  cancel(commandId: string, client: ClientRef): Promise<void>;
}

export type QueryParam = string | number;

export interface QueryEngine {
  /** Run one SQL statement from queries/ with positional `?` parameters; rows as objects. */
  query(sql: string, params: QueryParam[], label: string): Promise<Record<string, unknown>[]>;
  /** Make (path, run) visible to queries (Athena: ADD IF NOT EXISTS PARTITION). */
  registerPartition(pathId: string, runId: string): Promise<void>;
  /**
   * The StartQueryExecution call that writes the Parquet copy of (path, run) from its JSONL by
   * the engine itself: an UNLOAD of queries/parquet_copy.sql (the records with their rank
   * columns) into keys.parquetPrefix (queries/unload.ts). The state machine's CopyToParquet
   * state runs it through its Athena integration; `execute` runs it here.
   */
  copyCall(pathId: string, runId: string): QueryExecutionCall;
  /**
   * Run one StartQueryExecution call to its end, as the state machine's
   * `athena:startQueryExecution.sync` does (Athena: start, then wait; DuckDB: the copy's UNLOAD,
   * or a SELECT of selectCall, whose rows it keeps for resultRows). The UNLOAD's prefix must hold
   * no copy (the caller empties it: Athena refuses a non-empty location). `rows` is how many were
   * written or selected, when the engine says (DuckDB: always; Athena: not), and nothing is left
   * under the prefix when none were written.
   */
  execute(call: QueryExecutionCall): Promise<{ rows?: number; queryExecutionId: string }>;
  /**
   * The StartQueryExecution call of one SELECT from queries/, its `?` parameters as
   * ExecutionParameters, in this engine's workgroup and database: the summary's queries, which
   * the state machine's SummaryQueries Map runs through its Athena integration
   * (functions/pipeline/summary-queries.ts), so no Lambda waits on the engine.
   */
  selectCall(sql: string, params: QueryParam[]): QueryExecutionCall;
  /**
   * The rows of a SELECT that `execute` (or the state machine) ran to success, by its
   * QueryExecutionId, typed as `query` types them (Athena: GetQueryResults, paged; no waiting).
   */
  resultRows(queryExecutionId: string): Promise<Record<string, unknown>[]>;
  /**
   * Wait until no run of this very call is under way, stopping any; how many were stopped. On
   * AWS a stopped execution's CopyToParquet may leave its UNLOAD running (Step Functions stops it
   * best effort): a copy written in-process (the cleanup's salvage, `pathbench parquet`) settles
   * first, so the old UNLOAD cannot write into the prefix after it was emptied. Locally each DuckDB
   * queue runs one statement at a time, so nothing of it is under way once they drain.
   */
  settle(call: QueryExecutionCall): Promise<number>;
}

export interface LockInfo {
  runId: string;
  holder: string;
  acquiredAt: string;
  /** The holder execution's start time: with the run id, it names the execution that holds the lock. */
  startedAt?: string;
}

export interface RunLock {
  /**
   * Throws RunLockedError when another live run holds the lock. `startedAt` (the execution's start
   * time) tells a retry of the same execution (keeps the lock) from a second start that reuses
   * the run id (refused).
   */
  acquire(runId: string, startedAt?: string): Promise<void>;
  /** Releases only when runId (and startedAt, when given) holds it; idempotent. */
  release(runId: string, startedAt?: string): Promise<void>;
  current(): Promise<LockInfo | undefined>;
}

export interface PlanSource {
  /** The plan JSON stored under that name; undefined when there is none. */
  get(name: string): Promise<unknown | undefined>;
}

/** Tells the world about a summarized run: its figures as metrics, its regressions as events (AWS: publisher.ts). */
export interface RunPublisher {
  publish(summary: Summary): Promise<void>;
}

/** A pause that tests can replace; the real one is setTimeout from node:timers/promises. */
export type Sleep = (ms: number) => Promise<void>;

export interface Logger {
  info(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
  error(message: string, data?: Record<string, unknown>): void;
}

/** Everything a handler may touch. Built once per process (Lambda cold start / local run). */
export interface Deps {
  store: ObjectStore;
  fleet: Fleet;
  routes: Routes;
  runner: CommandRunner;
  query: QueryEngine;
  lock: RunLock;
  log: Logger;
  /** Named plans ({ "planName": … } inputs); AWS: SSM Parameter Store. */
  plans?: PlanSource;
  /** Metrics and regression events after the summary step (AWS only; locally the report is the output). */
  publisher?: RunPublisher;
  driver: 'local' | 'aws';
  /**
   * Route changes the operator allowed at deploy (core/route-policy.ts); ValidatePlan and
   * SwapRoutes refuse any other. Undefined: no restriction (local runs).
   */
  allowedRoutes?: readonly AllowedRoute[];
  /**
   * Targets the operator allowed at deploy (core/target-policy.ts); preflight refuses any other.
   * Undefined: every target that is not forbidden (local runs).
   */
  allowedTargets?: AllowedTargets;
  /** The account a task client's queue lives in when the plan gives no queueUrl (AWS: PATHBENCH_ACCOUNT_ID). */
  accountId?: string;
  /**
   * The cost guard's stack default (core/settings.ts): the budget in USD for plans without
   * their own budgetUsd, and the clients' instance type / iperf3 bandwidth bound for the estimate.
   */
  cost?: CostSettings;
  now: () => Date;
  /** Short in-task pauses (route verification back-off); tests pass a no-op. */
  sleep?: Sleep;
}
