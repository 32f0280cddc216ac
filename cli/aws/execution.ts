/**
 * Executions of the pipeline on AWS: start one (`pathbench start`, the run id is the execution
 * name), follow it to its end with progress lines, and show its status (`pathbench status`).
 */

import { readFileSync } from 'node:fs';
import { setTimeout as pause } from 'node:timers/promises';
import {
  DescribeExecutionCommand,
  type ExecutionStatus,
  GetExecutionHistoryCommand,
  type HistoryEvent,
  type SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import { z } from 'zod';
import { PlanInvalidError } from '../../core/errors.js';
import { checkRunId, newRunId } from '../../core/keys.js';
import { formatProblems } from '../../core/plan.js';
import { RUN_FAILED_ERROR } from '../../core/run-manifest.js';
import { parseSettings } from '../../core/settings.js';
import { AWS_POLL_SECONDS, executionArn } from '../../functions/adapters/aws/aws-deps.js';
import { loadPlanFile } from '../plan-file.js';
import { preflightAndPrint, type SettingsFlags } from '../run-settings.js';
import { AwsCliError, explainAwsError } from './aws-errors.js';
import { fetchFailureLines, fetchSummary, summaryText } from './aws-summary.js';
import { type ClientsFor, makeClients } from './clients.js';
import { type CommonFlags, resolveStackConfig } from './stack-config.js';

/**
 * One progress line per interesting history event (path starts, step entries, failures, the
 * end). A run's history holds its chunks, a chunk's its paths, a path's its steps
 * (docs/architecture.md, "Nested executions"); `counter` numbers the paths across chunks, and
 * `nested` marks the end of a child execution as such.
 */
export function progressLines(
  events: HistoryEvent[],
  opts: { counter?: { paths: number }; nested?: boolean } = {},
): string[] {
  const lines: string[] = [];
  const counter = opts.counter ?? { paths: 0 };
  for (const ev of events) {
    const entered = ev.stateEnteredEventDetails;
    if (ev.type === 'MapIterationStarted') {
      const d = ev.mapIterationStartedEventDetails;
      if (d?.name === 'MeasureChunks') lines.push(`chunk #${(d.index ?? 0) + 1} started`);
      else if (d?.name === 'MeasurePaths') lines.push(`path #${++counter.paths} started`);
      else if (d?.name === undefined) lines.push(`path #${(d?.index ?? 0) + 1} started`);
    } else if (ev.type === 'TaskStateEntered' && entered?.name) {
      if (entered.name === 'MeasureChunk' || entered.name === 'MeasurePath') continue;
      const pathId = pathIdOf(entered.input);
      lines.push(`  ${pathId ? `[${pathId}] ` : ''}${entered.name}`);
    } else if (ev.type === 'LambdaFunctionFailed' || ev.type === 'TaskFailed') {
      const d = ev.lambdaFunctionFailedEventDetails ?? ev.taskFailedEventDetails;
      lines.push(`  ! ${d?.error ?? 'error'}: ${(d?.cause ?? '').slice(0, 200)}`);
    } else if (ev.type === 'MapIterationFailed') {
      const d = ev.mapIterationFailedEventDetails;
      lines.push(`${d?.name === 'MeasureChunks' ? 'chunk' : 'path'} #${(d?.index ?? 0) + 1} failed`);
    } else if (opts.nested) {
    } else if (ev.type === 'ExecutionSucceeded') {
      lines.push('execution succeeded');
    } else if (ev.type === 'ExecutionFailed' || ev.type === 'ExecutionTimedOut' || ev.type === 'ExecutionAborted') {
      const d = ev.executionFailedEventDetails;
      lines.push(
        `execution ${ev.type.slice('Execution'.length).toLowerCase()}${d ? `: ${d.error} ${d.cause ?? ''}` : ''}`,
      );
    }
  }
  return lines;
}

/** The execution a `states:startExecution.sync:2` Task started: its TaskSubmitted output's ExecutionArn. */
export function startedExecutionArn(ev: HistoryEvent): string | undefined {
  const d = ev.taskSubmittedEventDetails;
  if (ev.type !== 'TaskSubmitted' || d?.resourceType !== 'states' || !d.output) return undefined;
  try {
    const r = startedSchema.safeParse(JSON.parse(d.output));
    return r.success ? r.data.ExecutionArn : undefined;
  } catch {
    return undefined;
  }
}

/** StartExecution's answer, as TaskSubmitted carries it. */
const startedSchema = z.looseObject({ ExecutionArn: z.string() });

/** The path a state's input is about: `pathId` (path tasks) or `path.id` (the Map's items); either may be absent. */
const pathInputSchema = z.object({
  pathId: z.string().optional().catch(undefined),
  path: z
    .object({ id: z.string().optional().catch(undefined) })
    .optional()
    .catch(undefined),
});

function pathIdOf(input: string | undefined): string | undefined {
  if (!input) return undefined;
  try {
    const o = pathInputSchema.safeParse(JSON.parse(input));
    return o.success ? (o.data.pathId ?? o.data.path?.id) : undefined;
  } catch {
    return undefined;
  }
}

const TERMINAL: ExecutionStatus[] = ['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'];

/** Every event of an execution's history so far. */
async function historyOf(sfn: SFNClient, arn: string): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  let token: string | undefined;
  do {
    const page = await sfn.send(
      new GetExecutionHistoryCommand({
        executionArn: arn,
        nextToken: token,
        maxResults: 1000,
        includeExecutionData: true,
      }),
    );
    events.push(...(page.events ?? []));
    token = page.nextToken;
  } while (token);
  return events;
}

const ENDED = new Set(['ExecutionSucceeded', 'ExecutionFailed', 'ExecutionTimedOut', 'ExecutionAborted']);

/**
 * Print progress until the execution ends; resolves with its final status. The chunk and path
 * executions it starts are followed too, in the order they started (one runs at a time), until
 * each has ended.
 */
export async function followExecution(
  sfn: SFNClient,
  arn: string,
  write: (line: string) => void,
  opts: { sleep?: (ms: number) => Promise<void>; pollMs?: number } = {},
): Promise<{ status: ExecutionStatus; error?: string }> {
  const sleep = opts.sleep ?? pause;
  const counter = { paths: 0 };
  type Followed = { arn: string; seen: number; ended: boolean; nested: boolean; parent?: Followed };
  const followed: Followed[] = [{ arn, seen: 0, ended: false, nested: false }];
  const descends = (x: Followed | undefined, from: Followed): boolean =>
    x !== undefined && (x.parent === from || descends(x.parent, from));
  for (;;) {
    for (let i = 0; i < followed.length; i++) {
      const f = followed[i];
      if (f.ended) continue;
      const events = await historyOf(sfn, f.arn);
      const fresh = events.slice(f.seen);
      // A child's lines as they come, then the children it started (followed in this same pass).
      for (const line of progressLines(fresh, { counter, nested: f.nested })) write(line);
      for (const ev of fresh) {
        const child = startedExecutionArn(ev);
        if (!child || followed.some((x) => x.arn === child)) continue;
        // After this execution's earlier children and theirs: the order they ran in.
        let at = i + 1;
        while (at < followed.length && descends(followed[at], f)) at++;
        followed.splice(at, 0, { arn: child, seen: 0, ended: false, nested: true, parent: f });
      }
      f.seen = events.length;
      if (f.nested && fresh.some((ev) => ENDED.has(String(ev.type)))) f.ended = true;
    }
    const d = await sfn.send(new DescribeExecutionCommand({ executionArn: arn }));
    if (d.status && TERMINAL.includes(d.status)) return { status: d.status, ...(d.error ? { error: d.error } : {}) };
    await sleep(opts.pollMs ?? 5_000);
  }
}

export interface StartFlags extends CommonFlags, SettingsFlags {
  plan?: string;
  planName?: string;
  /** Run a named plan (`--plan-name`) on the mesh machine; a plan file's own paths decide otherwise. */
  mesh?: boolean;
  runId?: string;
  follow?: boolean;
}

/** Validate locally, start the execution (name = run id), optionally follow it. */
export async function startRun(
  flags: StartFlags,
  env: Record<string, string | undefined>,
  out: (text: string) => void,
  clientsFor: ClientsFor = makeClients,
  err: (text: string) => void = (t) => process.stderr.write(t),
): Promise<number> {
  if (!flags.plan === !flags.planName) throw new AwsCliError('pass exactly one of --plan FILE or --plan-name NAME');
  let input: Record<string, unknown>;
  const runId = checkRunId(flags.runId ?? newRunId());
  // A mesh plan (its paths carry `mesh`) runs on the mesh machine, round by round; others on the sequential one.
  let mesh = flags.mesh ?? false;
  if (flags.plan) {
    const result = await loadPlanFile(flags.plan);
    if (!result.ok) throw new AwsCliError(`plan ${flags.plan} is invalid:\n${formatProblems(result.problems)}`);
    mesh = result.plan.paths.some((p) => p.mesh);
    const plan: unknown = JSON.parse(readFileSync(flags.plan, 'utf8').replace(/^\uFEFF/, ''));
    // ValidatePlan's own checks (limits on the machine it will run on, the cost guard), before an
    // execution exists; ValidatePlan makes them again with the stack's default budget.
    try {
      preflightAndPrint(plan, parseSettings(flags, env), { runId, pollSeconds: AWS_POLL_SECONDS }, err);
    } catch (e) {
      if (e instanceof PlanInvalidError)
        throw new AwsCliError(`plan ${flags.plan} is invalid:\n${formatProblems(e.problems)}`);
      throw new AwsCliError((e as Error).message);
    }
    input = { plan };
  } else {
    input = { planName: flags.planName };
  }
  if (flags.allowOverBudget) input.allowOverBudget = true;
  input.trigger = 'cli';
  const cfg = await resolveStackConfig(flags, env, clientsFor);
  const { sfn, s3 } = clientsFor(cfg.region);
  const machine = mesh ? cfg.meshStateMachineArn : cfg.stateMachineArn;
  if (!machine) {
    throw new AwsCliError(
      `a mesh plan runs on the mesh state machine, and none is known for ${cfg.stateMachineArn}: pass --mesh-state-machine ARN (stack output MeshStateMachineArn)`,
    );
  }
  let arn: string;
  try {
    const res = await sfn.send(
      new StartExecutionCommand({ stateMachineArn: machine, name: runId, input: JSON.stringify(input) }),
    );
    arn = res.executionArn ?? executionArn(machine, runId);
  } catch (e) {
    if (e instanceof Error && e.name === 'ExecutionAlreadyExists') throw new AwsCliError(`run ${runId} already exists`);
    throw explainAwsError(e);
  }
  out(`started run ${runId}${mesh ? ' on the mesh state machine' : ''}\n  ${arn}\n`);
  if (!flags.follow) return 0;
  const { status, error } = await followExecution(sfn, arn, (l) => out(`${l}\n`));
  if (error === RUN_FAILED_ERROR) for (const line of await fetchFailureLines(s3, cfg.bucket, runId)) out(`  ${line}\n`);
  const summary = await fetchSummary(s3, cfg.bucket, runId);
  if (summary) out(`\n${summaryText(summary)}`);
  return status === 'SUCCEEDED' ? 0 : 1;
}

/** Print the status of a run's execution: when it started and stopped, and its error. */
export async function runStatus(
  runId: string,
  flags: CommonFlags,
  env: Record<string, string | undefined>,
  out: (text: string) => void,
  clientsFor: ClientsFor = makeClients,
): Promise<number> {
  const cfg = await resolveStackConfig(flags, env, clientsFor);
  const { sfn, s3 } = clientsFor(cfg.region);
  // The run id is the execution name.
  checkRunId(runId);
  // A run is an execution of the measurement machine or, for a mesh plan, of the mesh machine.
  const machines = [cfg.stateMachineArn, ...(cfg.meshStateMachineArn ? [cfg.meshStateMachineArn] : [])];
  let d: Awaited<ReturnType<typeof describe>> | undefined;
  async function describe(machine: string) {
    return sfn.send(new DescribeExecutionCommand({ executionArn: executionArn(machine, runId) }));
  }
  for (const machine of machines) {
    try {
      d = await describe(machine);
      break;
    } catch (e) {
      if (!(e instanceof Error && e.name === 'ExecutionDoesNotExist')) throw e;
    }
  }
  if (!d) throw new AwsCliError(`no run ${runId}`);
  out(
    `run ${runId}: ${d.status}\n  started ${d.startDate?.toISOString()}${d.stopDate ? `\n  stopped ${d.stopDate.toISOString()}` : ''}${d.error ? `\n  ${d.error}: ${d.cause ?? ''}` : ''}\n`,
  );
  if (d.error === RUN_FAILED_ERROR)
    for (const line of await fetchFailureLines(s3, cfg.bucket, runId)) out(`  ${line}\n`);
  return 0;
}
