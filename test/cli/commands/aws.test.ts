/** The AWS CLI commands: progress lines, start with mocked clients, one-line errors without credentials. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
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
import { AwsCliError, executionArn, progressLines, startRun } from '../../../cli/commands/aws.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const SM = 'arn:aws:states:ap-northeast-1:123456789012:stateMachine:Measurement';

describe('aws cli helpers', () => {
  it('derives the execution ARN from the state machine ARN and run id', () => {
    expect(executionArn(SM, 'run-1')).toBe('arn:aws:states:ap-northeast-1:123456789012:execution:Measurement:run-1');
    expect(() => executionArn('arn:aws:s3:::bucket', 'run-1')).toThrow(AwsCliError);
  });

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
    expect(s3.commandCalls(GetObjectCommand)[0].args[0].input).toEqual({
      Bucket: 'pb-data',
      Key: 'reports/run=run-7/summary.json',
    });
    expect(out.join('')).toContain('execution succeeded');
    expect(out.join('')).toContain('run run-7: succeeded');

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
    expect(sfn.commandCalls(StartExecutionCommand)).toHaveLength(1);
    sfn.restore();
    s3.restore();
  });
});

describe('aws cli without credentials or region', () => {
  const bare = {
    PATH: process.env.PATH ?? '',
    HOME: mkdtempSync(path.join(tmpdir(), 'pb-home-')),
    AWS_EC2_METADATA_DISABLED: 'true',
  };
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [path.join(ROOT, 'cli/pathbench.mjs'), ...args], {
      env: bare,
      encoding: 'utf8',
      timeout: 60_000,
    });

  it('prints one line and exits 2 when credentials are missing', () => {
    const r = cli('start', '--plan-name', 'weekly', '--state-machine', SM, '--bucket', 'b');
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^pathbench: no usable AWS credentials/);
  });

  it('prints one line and exits 2 when the region is missing', () => {
    const r = cli('status', 'run-1', '--stack', 'PbNoSuchStack');
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^pathbench: no AWS region/);
  });
});
