/** AWS executions from the CLI: progress lines, and start with mocked clients. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import {
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import { SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { noSummaryText, reportAws } from '../../../cli/aws/aws-summary.js';
import { followExecution, progressLines, runStatus, startRun } from '../../../cli/aws/execution.js';
import { keys } from '../../../core/keys.js';
import { type ManifestIndex, manifestIndexSchema } from '../../../core/run-manifest.js';
import { executionArn } from '../../../functions/adapters/aws/aws-deps.js';

const SM = 'arn:aws:states:ap-northeast-1:123456789012:stateMachine:Measurement';

describe('aws cli helpers', () => {
  it('turns history events into progress lines naming the path and step', () => {
    const lines = progressLines([
      { type: 'MapIterationStarted', id: 1, timestamp: new Date(), mapIterationStartedEventDetails: { index: 0 } },
      {
        type: 'TaskStateEntered',
        id: 2,
        timestamp: new Date(),
        stateEnteredEventDetails: { name: 'StartClient', input: JSON.stringify({ runId: 'r', path: { id: 'C' } }) },
      },
      {
        type: 'LambdaFunctionFailed',
        id: 3,
        timestamp: new Date(),
        lambdaFunctionFailedEventDetails: { error: 'InstanceCapacityError', cause: 'no capacity' },
      },
      { type: 'ExecutionSucceeded', id: 4, timestamp: new Date() },
    ]);
    expect(lines).toEqual([
      'path #1 started',
      '  [C] StartClient',
      '  ! InstanceCapacityError: no capacity',
      'execution succeeded',
    ]);
  });

  it('follows the chunk and path executions the run starts, numbering paths across chunks', async () => {
    const sfn = mockClient(SFNClient);
    const run = executionArn(SM, 'run-8');
    const chunkArn = (n: number) => `arn:aws:states:ap-northeast-1:123456789012:execution:Pathbench-Chunk:c${n}`;
    const pathArn = (id: string) => `arn:aws:states:ap-northeast-1:123456789012:execution:Pathbench-Path:${id}`;
    const t = new Date();
    const submitted = (id: number, arn: string) => ({
      type: 'TaskSubmitted' as const,
      id,
      timestamp: t,
      taskSubmittedEventDetails: {
        resourceType: 'states',
        resource: 'startExecution.sync:2',
        output: JSON.stringify({ ExecutionArn: arn, StartDate: 1 }),
      },
    });
    const iteration = (id: number, name: string, index: number) => ({
      type: 'MapIterationStarted' as const,
      id,
      timestamp: t,
      mapIterationStartedEventDetails: { name, index },
    });
    const entered = (id: number, name: string, pathId: string) => ({
      type: 'TaskStateEntered' as const,
      id,
      timestamp: t,
      stateEnteredEventDetails: { name, input: JSON.stringify({ runId: 'run-8', path: { id: pathId } }) },
    });
    const ended = (id: number) => ({ type: 'ExecutionSucceeded' as const, id, timestamp: t });
    const histories: Record<string, object[]> = {
      [run]: [
        iteration(1, 'MeasureChunks', 0),
        submitted(2, chunkArn(0)),
        iteration(3, 'MeasureChunks', 1),
        submitted(4, chunkArn(1)),
        ended(5),
      ],
      [chunkArn(0)]: [
        iteration(1, 'MeasurePaths', 0),
        submitted(2, pathArn('A')),
        iteration(3, 'MeasurePaths', 1),
        submitted(4, pathArn('B')),
        ended(5),
      ],
      [chunkArn(1)]: [iteration(1, 'MeasurePaths', 0), submitted(2, pathArn('C')), ended(3)],
      [pathArn('A')]: [entered(1, 'BeginPath', 'A'), entered(2, 'SendProbe', 'A'), ended(3)],
      [pathArn('B')]: [entered(1, 'BeginPath', 'B'), ended(2)],
      [pathArn('C')]: [entered(1, 'BeginPath', 'C'), ended(2)],
    };
    for (const [arn, events] of Object.entries(histories))
      sfn.on(GetExecutionHistoryCommand, { executionArn: arn }).resolves({ events: events as never });
    sfn
      .on(DescribeExecutionCommand)
      .resolves({ status: 'SUCCEEDED', executionArn: run, stateMachineArn: SM, startDate: t });
    const lines: string[] = [];
    const status = await followExecution(new SFNClient({ region: 'ap-northeast-1' }), run, (l) => lines.push(l), {
      sleep: async () => undefined,
    });
    expect(status).toEqual({ status: 'SUCCEEDED' });
    expect(lines).toEqual([
      'chunk #1 started',
      'chunk #2 started',
      'execution succeeded',
      'path #1 started',
      'path #2 started',
      '  [A] BeginPath',
      '  [A] SendProbe',
      '  [B] BeginPath',
      'path #3 started',
      '  [C] BeginPath',
    ]);
    // every execution's history was read
    const read = new Set(sfn.commandCalls(GetExecutionHistoryCommand).map((c) => c.args[0].input.executionArn));
    expect([...read].sort()).toEqual(Object.keys(histories).sort());
  });

  it('validates the plan locally, starts with name = run id, follows, prints the summary', async () => {
    const sfn = mockClient(SFNClient);
    const s3 = mockClient(S3Client);
    sfn.on(StartExecutionCommand).resolves({ executionArn: executionArn(SM, 'run-7'), startDate: new Date() });
    sfn.on(GetExecutionHistoryCommand).resolves({
      events: [{ type: 'ExecutionSucceeded', id: 1, timestamp: new Date() }],
    });
    sfn
      .on(DescribeExecutionCommand)
      .resolves({ status: 'SUCCEEDED', executionArn: 'x', stateMachineArn: SM, startDate: new Date() });
    s3.on(GetObjectCommand).resolves({
      Body: {
        transformToString: async () => JSON.stringify({ runId: 'run-7', status: 'succeeded', paths: [] }),
      } as never,
    });
    const dir = mkdtempSync(path.join(tmpdir(), 'pb-cli-'));
    const planFile = path.join(dir, 'plan.json');
    writeFileSync(
      planFile,
      JSON.stringify({
        name: 'one',
        defaults: { probes: [{ kind: 'tcp-connect', count: 3 }] },
        paths: [
          {
            id: 'A',
            label: 'a',
            client: { instanceId: 'i-0abc', region: 'ap-northeast-1' },
            target: { host: '10.0.0.1', port: 5201 },
          },
        ],
      }),
    );
    const out: string[] = [];
    const clients = {
      sfn: new SFNClient({ region: 'ap-northeast-1' }),
      s3: new S3Client({ region: 'ap-northeast-1' }),
      ssm: new SSMClient({ region: 'ap-northeast-1' }),
    };
    const code = await startRun(
      { plan: planFile, runId: 'run-7', follow: true, stateMachine: SM, bucket: 'pb-data' },
      {},
      (t) => out.push(t),
      () => clients,
    );
    expect(code).toBe(0);
    const start = sfn.commandCalls(StartExecutionCommand)[0].args[0].input;
    expect(start.name).toBe('run-7');
    expect(start.stateMachineArn).toBe(SM);
    expect(JSON.parse(start.input ?? '')).toHaveProperty('plan.name', 'one');
    expect(JSON.parse(start.input ?? '')).toHaveProperty('trigger', 'cli');
    expect(s3.commandCalls(GetObjectCommand)[0].args[0].input).toEqual({
      Bucket: 'pb-data',
      Key: 'reports/run=run-7/summary.json',
    });
    expect(out.join('')).toContain('execution succeeded');
    expect(out.join('')).toContain('run run-7: succeeded');

    // Without --run-id the execution is named like a local run (one generator in the core).
    await startRun(
      { planName: 'weekly', stateMachine: SM, bucket: 'b' },
      {},
      () => undefined,
      () => clients,
    );
    expect(sfn.commandCalls(StartExecutionCommand)[1].args[0].input.name).toMatch(/^\d{8}T\d{6}Z-[0-9a-f]{6}$/);

    // An invalid plan never reaches Step Functions.
    writeFileSync(planFile, JSON.stringify({ name: 'bad', paths: [] }));
    await expect(
      startRun(
        { plan: planFile, stateMachine: SM, bucket: 'b' },
        {},
        () => undefined,
        () => clients,
      ),
    ).rejects.toThrow(/is invalid/);
    expect(sfn.commandCalls(StartExecutionCommand)).toHaveLength(2);

    // Nor does a plan over the service limits (here: 10,000 paths), with the limit named.
    writeFileSync(
      planFile,
      JSON.stringify({
        name: 'huge',
        defaults: {
          probes: [{ kind: 'tcp-connect', count: 3 }],
          client: { instanceId: 'i-0abc', region: 'ap-northeast-1' },
        },
        paths: Array.from({ length: 10_000 }, (_, i) => ({ id: `p${i}`, target: { host: '10.0.0.1', port: 5201 } })),
      }),
    );
    await expect(
      startRun(
        { plan: planFile, stateMachine: SM, bucket: 'b' },
        {},
        () => undefined,
        () => clients,
      ),
    ).rejects.toThrow(/the first [\d,]+ paths fit — split the plan/);
    expect(sfn.commandCalls(StartExecutionCommand)).toHaveLength(2);
    sfn.restore();
    s3.restore();
  });
});

describe('a failed AWS run says why, from its manifest', () => {
  const manifestOf = (runId: string): ManifestIndex =>
    manifestIndexSchema.parse({
      runId,
      planName: 'one',
      driver: 'aws',
      status: 'succeeded',
      startedAt: '2026-12-01T00:00:00.000Z',
      endedAt: '2026-12-01T00:05:00.000Z',
      routeChanges: [],
      pathIds: ['A'],
      summaryFailure: {
        at: '2026-12-01T00:05:00.000Z',
        error: 'States.ExceedToleratedFailureThreshold: 1 of 9 child executions of SummaryQueries failed',
      },
    });

  function clientsWith(runId: string) {
    const sfn = mockClient(SFNClient);
    const s3 = mockClient(S3Client);
    sfn.on(DescribeExecutionCommand).resolves({
      status: 'FAILED',
      executionArn: executionArn(SM, runId),
      stateMachineArn: SM,
      startDate: new Date('2026-12-01T00:00:00Z'),
      stopDate: new Date('2026-12-01T00:05:00Z'),
      error: 'RunFailedError',
      cause: 'see the run manifest and the execution history',
    });
    s3.on(GetObjectCommand, { Bucket: 'pb-data', Key: keys.manifest(runId) }).resolves({
      Body: { transformToByteArray: async () => new TextEncoder().encode(JSON.stringify(manifestOf(runId))) } as never,
    });
    s3.on(GetObjectCommand, { Bucket: 'pb-data', Key: keys.report(runId, 'json') }).rejects(
      Object.assign(new Error('The specified key does not exist.'), { name: 'NoSuchKey' }),
    );
    const clients = {
      sfn: new SFNClient({ region: 'ap-northeast-1' }),
      s3: new S3Client({ region: 'ap-northeast-1' }),
      ssm: new SSMClient({ region: 'ap-northeast-1' }),
    };
    return { sfn, s3, clients };
  }

  it('status prints the summary failure the manifest records', async () => {
    const { s3, clients } = clientsWith('run-9');
    const out: string[] = [];
    await runStatus(
      'run-9',
      { stateMachine: SM, bucket: 'pb-data' },
      {},
      (t) => out.push(t),
      () => clients,
    );
    expect(out.join('')).toContain('run run-9: FAILED');
    expect(out.join('')).toContain(
      '  the summary failed: States.ExceedToleratedFailureThreshold: 1 of 9 child executions of SummaryQueries failed\n',
    );
    expect(s3.commandCalls(GetObjectCommand).map((c) => c.args[0].input.Key)).toEqual([keys.manifest('run-9')]);
  });

  it('status reads no manifest for an execution refused before it began, and an unreadable one is a line, not an error', async () => {
    const refused = clientsWith('run-11');
    refused.sfn.on(DescribeExecutionCommand).resolves({
      status: 'FAILED',
      executionArn: executionArn(SM, 'run-11'),
      stateMachineArn: SM,
      startDate: new Date('2026-12-01T00:00:00Z'),
      error: 'RunExistsError',
      cause: 'run run-11 already exists',
    });
    const out: string[] = [];
    await runStatus(
      'run-11',
      { stateMachine: SM, bucket: 'pb-data' },
      {},
      (t) => out.push(t),
      () => refused.clients,
    );
    // The manifest at that key is the earlier run's: none of its lines are this execution's.
    expect(refused.s3.commandCalls(GetObjectCommand)).toHaveLength(0);
    expect(out.join('')).not.toContain('the summary failed');

    const denied = clientsWith('run-12');
    denied.s3
      .on(GetObjectCommand)
      .rejects(Object.assign(new Error('Access Denied'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }));
    const lines: string[] = [];
    const code = await runStatus(
      'run-12',
      { stateMachine: SM, bucket: 'pb-data' },
      {},
      (t) => lines.push(t),
      () => denied.clients,
    );
    expect(code).toBe(0);
    expect(lines.join('')).toContain('run run-12: FAILED');
    expect(lines.join('')).toContain("  (the run's manifest could not be read: Access Denied)\n");
  });

  it('report --aws says why there is no summary: the summary failure, a run under way, no run at all', async () => {
    const report = (runId: string, clients: ReturnType<typeof clientsWith>['clients']) =>
      reportAws(
        runId,
        { stateMachine: SM, bucket: 'pb-data' },
        {},
        () => undefined,
        () => clients,
      );
    const failed = clientsWith('run-13');
    await expect(report('run-13', failed.clients)).rejects.toThrow(
      'run run-13 has no summary: its summary step failed at 2026-12-01T00:05:00.000Z: ' +
        'States.ExceedToleratedFailureThreshold: 1 of 9 child executions of SummaryQueries failed. ' +
        'Its samples are stored (measurements succeeded); query them with `pathbench sql --aws`',
    );
    expect(failed.s3.commandCalls(GetObjectCommand).map((c) => c.args[0].input.Key)).toEqual([
      keys.report('run-13', 'json'),
      keys.manifest('run-13'),
    ]);

    const running = clientsWith('run-14');
    const { endedAt: _, summaryFailure: __, ...started } = manifestOf('run-14');
    running.s3.on(GetObjectCommand, { Bucket: 'pb-data', Key: keys.manifest('run-14') }).resolves({
      Body: { transformToByteArray: async () => new TextEncoder().encode(JSON.stringify(started)) } as never,
    });
    await expect(report('run-14', running.clients)).rejects.toThrow(
      'no summary for run run-14 in s3://pb-data yet: it started at 2026-12-01T00:00:00.000Z and has not ended (`pathbench status run-14`)',
    );

    const none = clientsWith('run-15');
    none.s3
      .on(GetObjectCommand)
      .rejects(Object.assign(new Error('The specified key does not exist.'), { name: 'NoSuchKey' }));
    await expect(report('run-15', none.clients)).rejects.toThrow(
      'no summary for run run-15 in s3://pb-data: no manifest either (no such run, or refused before it began)',
    );
    const { summaryFailure: ___, ...ended } = manifestOf('run-16');
    expect(noSummaryText('run-16', 'pb-data', { ...ended, status: 'failed' })).toBe(
      'run run-16 ended failed at 2026-12-01T00:05:00.000Z with no summary in s3://pb-data (`pathbench status run-16` says how its execution ended)',
    );
  });

  it('start --follow prints it when the execution failed, and exits 1', async () => {
    const { sfn, clients } = clientsWith('run-10');
    sfn.on(StartExecutionCommand).resolves({ executionArn: executionArn(SM, 'run-10'), startDate: new Date() });
    sfn.on(GetExecutionHistoryCommand).resolves({
      events: [{ type: 'ExecutionFailed', id: 1, timestamp: new Date() }],
    });
    const out: string[] = [];
    const code = await startRun(
      { planName: 'one', runId: 'run-10', follow: true, stateMachine: SM, bucket: 'pb-data' },
      {},
      (t) => out.push(t),
      () => clients,
    );
    expect(code).toBe(1);
    expect(out.join('')).toContain('  the summary failed: States.ExceedToleratedFailureThreshold');
  });
});
