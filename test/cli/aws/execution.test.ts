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
import { progressLines, startRun } from '../../../cli/aws/execution.js';
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
