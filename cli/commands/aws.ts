/**
 * AWS commands: `pathbench deploy [--testbed]`, `pathbench start`, `pathbench status`, and
 * `pathbench report RUN_ID --aws` (the summary from S3). The state machine ARN and bucket come
 * from flags, then PATHBENCH_STATE_MACHINE_ARN / PATHBENCH_BUCKET, then the saved
 * `cdk deploy --outputs-file` (.pathbench/aws-outputs.json), then the stack's SSM parameter
 * /pathbench/config (the project ships the SSM client, not the CloudFormation one).
 * Missing credentials or region: one line on stderr, exit 2.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import {
  DescribeExecutionCommand,
  type ExecutionStatus,
  GetExecutionHistoryCommand,
  type HistoryEvent,
  SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import type { Command } from 'commander';
import { errorMessage } from '../../functions/core/errors.js';
import { checkRunId, keys } from '../../functions/core/keys.js';
import type { Summary } from '../../functions/core/model.js';
import { formatProblems } from '../../functions/core/plan.js';
import { loadPlanFile } from '../plan-file.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OUTPUTS_FILE = path.join(ROOT, '.pathbench', 'aws-outputs.json');
const CONFIG_PARAMETER = '/pathbench/config';
const DEFAULT_STACK = 'Pathbench';
const EXIT_USAGE = 2;

/** A problem the user can fix (credentials, region, missing stack, bad plan): one line, exit 2. */
export class AwsCliError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AwsCliError';
  }
}

/** True for the SDK's "no credentials" and "no region" failures. */
export function isCredentialsOrRegionError(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  return (
    e.name === 'CredentialsProviderError' ||
    e.name === 'ExpiredTokenException' ||
    e.name === 'UnrecognizedClientException' ||
    /could not load credentials|region is missing|unable to resolve region/i.test(e.message)
  );
}

/** Turn SDK failures into one clear line. */
export function explainAwsError(e: unknown): AwsCliError {
  if (e instanceof AwsCliError) return e;
  if (isCredentialsOrRegionError(e)) {
    const what = /region/i.test(errorMessage(e)) ? 'no AWS region' : 'no usable AWS credentials';
    return new AwsCliError(
      `${what}: ${errorMessage(e).split('\n')[0]} (set AWS_PROFILE / AWS_REGION or pass --region)`,
      { cause: e },
    );
  }
  return new AwsCliError(errorMessage(e).split('\n')[0], { cause: e });
}

export interface StackConfig {
  stateMachineArn: string;
  bucket: string;
  region: string;
}

export interface AwsClients {
  sfn: SFNClient;
  s3: S3Client;
  ssm: SSMClient;
}

export interface CommonFlags {
  region?: string;
  stateMachine?: string;
  bucket?: string;
  stack?: string;
}

function makeClients(region: string | undefined): AwsClients {
  // Node 20 is this project's engine; the SDK's Node 22 notice would break the one-line errors.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const cfg = region ? { region } : {};
  return { sfn: new SFNClient(cfg), s3: new S3Client(cfg), ssm: new SSMClient(cfg) };
}

function readOutputsFile(stack: string): Record<string, string> | undefined {
  if (!existsSync(OUTPUTS_FILE)) return undefined;
  const all = JSON.parse(readFileSync(OUTPUTS_FILE, 'utf8')) as Record<string, Record<string, string>>;
  return all[stack];
}

/** Region of an ARN ("arn:aws:states:<region>:…"). */
function arnRegion(arn: string): string | undefined {
  return arn.split(':')[3] || undefined;
}

/** Find the state machine and bucket: flags > env > outputs file > SSM /pathbench/config. */
export async function resolveStackConfig(
  flags: CommonFlags,
  env: Record<string, string | undefined>,
  clientsFor: (region: string | undefined) => AwsClients = makeClients,
): Promise<StackConfig> {
  let sm = flags.stateMachine ?? env.PATHBENCH_STATE_MACHINE_ARN;
  let bucket = flags.bucket ?? env.PATHBENCH_BUCKET;
  if (!sm || !bucket) {
    const saved = readOutputsFile(flags.stack ?? DEFAULT_STACK);
    sm ??= saved?.StateMachineArn;
    bucket ??= saved?.BucketName;
  }
  const region = flags.region ?? (sm ? arnRegion(sm) : undefined) ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  if (!sm || !bucket) {
    let value: string | undefined;
    try {
      const out = await clientsFor(region).ssm.send(new GetParameterCommand({ Name: CONFIG_PARAMETER }));
      value = out.Parameter?.Value;
    } catch (e) {
      if (e instanceof Error && e.name === 'ParameterNotFound') {
        throw new AwsCliError(
          `the pipeline is not deployed in ${region ?? 'this region'} (no ${CONFIG_PARAMETER}); run \`pathbench deploy\` or pass --state-machine and --bucket`,
        );
      }
      throw explainAwsError(e);
    }
    const cfg = JSON.parse(value ?? '{}') as Record<string, string>;
    sm ??= cfg.StateMachineArn;
    bucket ??= cfg.BucketName;
  }
  if (!sm || !bucket) throw new AwsCliError(`${CONFIG_PARAMETER} lacks StateMachineArn or BucketName`);
  const finalRegion = region ?? arnRegion(sm);
  if (!finalRegion) throw new AwsCliError('no AWS region: set AWS_REGION or pass --region');
  return { stateMachineArn: sm, bucket, region: finalRegion };
}

/** arn:…:stateMachine:Name + run id → arn:…:execution:Name:runId. */
export function executionArn(stateMachineArn: string, runId: string): string {
  const parts = stateMachineArn.split(':');
  if (parts.length < 7 || parts[5] !== 'stateMachine')
    throw new AwsCliError(`not a state machine ARN: ${stateMachineArn}`);
  return [...parts.slice(0, 5), 'execution', parts[6], checkRunId(runId)].join(':');
}

/** Default run id: sortable UTC time, valid as an execution name and in S3 keys. */
export function defaultRunId(now = new Date()): string {
  return `run-${now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}-${randomUUID().slice(0, 4)}`;
}

/** One progress line per interesting history event (path starts, step entries, failures, the end). */
export function progressLines(events: HistoryEvent[]): string[] {
  const lines: string[] = [];
  for (const ev of events) {
    const entered = ev.stateEnteredEventDetails;
    if (ev.type === 'MapIterationStarted') {
      lines.push(`path #${(ev.mapIterationStartedEventDetails?.index ?? 0) + 1} started`);
    } else if (ev.type === 'TaskStateEntered' && entered?.name) {
      const pathId = pathIdOf(entered.input);
      lines.push(`  ${pathId ? `[${pathId}] ` : ''}${entered.name}`);
    } else if (ev.type === 'LambdaFunctionFailed' || ev.type === 'TaskFailed') {
      const d = ev.lambdaFunctionFailedEventDetails ?? ev.taskFailedEventDetails;
      lines.push(`  ! ${d?.error ?? 'error'}: ${(d?.cause ?? '').slice(0, 200)}`);
    } else if (ev.type === 'MapIterationFailed') {
      lines.push(`path #${(ev.mapIterationFailedEventDetails?.index ?? 0) + 1} failed`);
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

function pathIdOf(input: string | undefined): string | undefined {
  if (!input) return undefined;
  try {
    const o = JSON.parse(input) as { pathId?: unknown; path?: { id?: unknown } };
    const id = o.pathId ?? o.path?.id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

const TERMINAL: ExecutionStatus[] = ['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'];

/** Print progress until the execution ends; resolves with its final status. */
export async function followExecution(
  sfn: SFNClient,
  arn: string,
  write: (line: string) => void,
  opts: { sleep?: (ms: number) => Promise<void>; pollMs?: number } = {},
): Promise<ExecutionStatus> {
  let seen = 0;
  for (;;) {
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
    for (const line of progressLines(events.slice(seen))) write(line);
    seen = events.length;
    const d = await sfn.send(new DescribeExecutionCommand({ executionArn: arn }));
    if (d.status && TERMINAL.includes(d.status)) return d.status;
    await (opts.sleep ?? sleep)(opts.pollMs ?? 5_000);
  }
}

/** The run summary from S3; undefined while it does not exist yet. */
export async function fetchSummary(s3: S3Client, bucket: string, runId: string): Promise<Summary | undefined> {
  try {
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: keys.report(runId, 'json') }));
    return JSON.parse((await out.Body?.transformToString()) ?? '{}') as Summary;
  } catch (e) {
    if (e instanceof Error && (e.name === 'NoSuchKey' || e.name === 'NotFound')) return undefined;
    throw e;
  }
}

function summaryText(s: Summary): string {
  const lines = [`run ${s.runId}: ${s.status}`];
  for (const p of s.paths) {
    lines.push(`  ${p.id} ${p.label}: ${p.status}${p.failedStep ? ` at ${p.failedStep} (${p.error ?? ''})` : ''}`);
    for (const r of p.results) {
      lines.push(`    ${r.probe} ${r.metric} n=${r.n} p50=${r.p50} p95=${r.p95} p99=${r.p99} ${r.unit}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export interface StartFlags extends CommonFlags {
  plan?: string;
  planName?: string;
  runId?: string;
  follow?: boolean;
}

/** Validate locally, start the execution (name = run id), optionally follow it. */
export async function startRun(
  flags: StartFlags,
  env: Record<string, string | undefined>,
  out: (text: string) => void,
  clientsFor: (region: string | undefined) => AwsClients = makeClients,
): Promise<number> {
  if (!flags.plan === !flags.planName) throw new AwsCliError('pass exactly one of --plan FILE or --plan-name NAME');
  let input: Record<string, unknown>;
  if (flags.plan) {
    const result = await loadPlanFile(flags.plan);
    if (!result.ok) throw new AwsCliError(`plan ${flags.plan} is invalid:\n${formatProblems(result.problems)}`);
    input = { plan: JSON.parse(readFileSync(flags.plan, 'utf8')) as unknown };
  } else {
    input = { planName: flags.planName };
  }
  const runId = checkRunId(flags.runId ?? defaultRunId());
  const cfg = await resolveStackConfig(flags, env, clientsFor);
  const { sfn, s3 } = clientsFor(cfg.region);
  let arn: string;
  try {
    const res = await sfn.send(
      new StartExecutionCommand({ stateMachineArn: cfg.stateMachineArn, name: runId, input: JSON.stringify(input) }),
    );
    arn = res.executionArn ?? executionArn(cfg.stateMachineArn, runId);
  } catch (e) {
    if (e instanceof Error && e.name === 'ExecutionAlreadyExists') throw new AwsCliError(`run ${runId} already exists`);
    throw explainAwsError(e);
  }
  out(`started run ${runId}\n  ${arn}\n`);
  if (!flags.follow) return 0;
  const status = await followExecution(sfn, arn, (l) => out(`${l}\n`));
  const summary = await fetchSummary(s3, cfg.bucket, runId);
  if (summary) out(`\n${summaryText(summary)}`);
  return status === 'SUCCEEDED' ? 0 : 1;
}

function runCdk(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['cdk', ...args], { cwd: ROOT, stdio: 'inherit' });
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? 1));
  });
}

async function deploy(o: { testbed?: boolean; yes?: boolean; stack?: string }): Promise<number> {
  if (o.testbed) {
    let deployTestbed: ((opts: { yes?: boolean }) => Promise<number>) | undefined;
    try {
      ({ deployTestbed } = await import('./testbed.js'));
    } catch (e) {
      throw new AwsCliError(`--testbed is not available: cli/commands/testbed.ts failed to load (${errorMessage(e)})`);
    }
    const code = await deployTestbed({ yes: o.yes });
    if (code !== 0) return code;
  }
  return runCdk([
    'deploy',
    o.stack ?? DEFAULT_STACK,
    '--outputs-file',
    OUTPUTS_FILE,
    ...(o.yes ? ['--require-approval', 'never'] : []),
  ]);
}

/** Run an action; AwsCliError and credential/region failures become one line and exit 2. */
async function guarded(fn: () => Promise<number>): Promise<never> {
  try {
    process.exit(await fn());
  } catch (e) {
    const err = explainAwsError(e);
    process.stderr.write(`pathbench: ${err.message}\n`);
    process.exit(EXIT_USAGE);
  }
}

function common(cmd: Command): Command {
  return cmd
    .option('--region <region>', 'AWS region (default: from the state machine ARN or AWS_REGION)')
    .option('--state-machine <arn>', 'state machine ARN (default: stack outputs)')
    .option('--bucket <name>', 'data bucket (default: stack outputs)')
    .option('--stack <name>', 'pipeline stack name', DEFAULT_STACK);
}

/** Register deploy / start / status, and `--aws` on `report`. */
export function registerAws(program: Command): void {
  program
    .command('deploy')
    .description('deploy the pipeline stack with cdk (and the seed-000 testbed with --testbed)')
    .option('--testbed', 'also deploy the Tokyo/Osaka testbed (costs money; prints an estimate first)')
    .option('--yes', 'do not ask for approval of security changes')
    .option('--stack <name>', 'pipeline stack name', DEFAULT_STACK)
    .action((o: { testbed?: boolean; yes?: boolean; stack?: string }) => guarded(() => deploy(o)));

  common(
    program
      .command('start')
      .description('start a run on AWS (the plan is validated locally first)')
      .option('--plan <file>', 'plan JSON file')
      .option('--plan-name <name>', 'named plan in SSM Parameter Store (/pathbench/plans/<name>)')
      .option('--run-id <id>', 'run id = execution name (default: time-based)')
      .option('--follow', 'show progress until the run ends, then the summary'),
  ).action((o: StartFlags) => guarded(() => startRun(o, process.env, (t) => process.stdout.write(t))));

  common(program.command('status').description('status of an AWS run').argument('<runId>')).action(
    (runId: string, o: CommonFlags) =>
      guarded(async () => {
        const cfg = await resolveStackConfig(o, process.env);
        const { sfn } = makeClients(cfg.region);
        const arn = executionArn(cfg.stateMachineArn, runId);
        const d = await sfn.send(new DescribeExecutionCommand({ executionArn: arn })).catch((e: unknown) => {
          if (e instanceof Error && e.name === 'ExecutionDoesNotExist') throw new AwsCliError(`no run ${runId}`);
          throw e;
        });
        process.stdout.write(
          `run ${runId}: ${d.status}\n  started ${d.startDate?.toISOString()}${d.stopDate ? `\n  stopped ${d.stopDate.toISOString()}` : ''}${d.error ? `\n  ${d.error}: ${d.cause ?? ''}` : ''}\n`,
        );
        return 0;
      }),
  );

  const reportAws = (runId: string, o: CommonFlags & { json?: boolean }) =>
    guarded(async () => {
      const cfg = await resolveStackConfig(o, process.env);
      const summary = await fetchSummary(makeClients(cfg.region).s3, cfg.bucket, checkRunId(runId));
      if (!summary) throw new AwsCliError(`no summary for run ${runId} in s3://${cfg.bucket} (still running?)`);
      process.stdout.write(o.json ? `${JSON.stringify(summary, null, 2)}\n` : summaryText(summary));
      return 0;
    });
  const existing = program.commands.find((c) => c.name() === 'report');
  if (existing) {
    // The local driver owns `report`; --aws switches it to the summary in S3.
    common(existing.option('--aws', 'read the summary of an AWS run from S3'));
    existing.hook('preAction', async (cmd) => {
      const o = cmd.opts<CommonFlags & { json?: boolean; aws?: boolean }>();
      if (o.aws) await reportAws(cmd.args[0], o);
    });
  } else {
    common(program.command('report').description('summary of an AWS run from S3').argument('<runId>'))
      .option('--json', 'print the summary JSON')
      .action((runId: string, o: CommonFlags & { json?: boolean }) => reportAws(runId, o));
  }
}
