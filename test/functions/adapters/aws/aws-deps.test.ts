/** Config reading, the named-plan source and the Lambda entry (error names intact). */
import { DeleteItemCommand, DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, NoSuchKey, S3Client } from '@aws-sdk/client-s3';
import { GetParameterCommand, ParameterNotFound, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { ConfigError, PlanInvalidError } from '../../../../core/errors.js';
import { awsDeps, ENV, readAwsConfig } from '../../../../functions/adapters/aws/aws-deps.js';
import { SsmPlanSource } from '../../../../functions/adapters/aws/ssm-plans.js';
import { FirstPlanSource } from '../../../../functions/pipeline/plan-store.js';
import { TASK_NAMES } from '../../../../functions/wiring.js';

const fullEnv = {
  [ENV.region]: 'ap-northeast-1',
  [ENV.bucket]: 'pb-data',
  [ENV.workgroup]: 'pathbench',
  [ENV.database]: 'pathbench',
  [ENV.lockTable]: 'locks',
  [ENV.document]: 'Pathbench-ProbeDocument-X',
  [ENV.agentBucket]: 'assets',
  [ENV.agentKey]: 'abc.cjs',
};

describe('awsDeps', () => {
  it('fails fast naming the missing variable', () => {
    const { PATHBENCH_LOCK_TABLE: _, ...partial } = fullEnv;
    expect(() => readAwsConfig(partial)).toThrow(ConfigError);
    expect(() => readAwsConfig(partial)).toThrow('environment variable PATHBENCH_LOCK_TABLE is not set');
  });

  it('builds every port with defaults for the optional variables', () => {
    const cfg = readAwsConfig(fullEnv);
    expect(cfg.table).toBe('samples');
    expect(cfg.planPrefix).toBe('/pathbench/plans/');
    const deps = awsDeps(fullEnv);
    expect(deps.driver).toBe('aws');
    expect(deps.store.location).toBe('s3://pb-data');
    expect(deps.fleet.rebootable).toBe(true);
    expect(deps.plans).toBeInstanceOf(FirstPlanSource);
    expect(cfg.stateMachineArn).toBeUndefined();
  });

  it('takes the optional state machine ARN, and refuses one that is not a state machine ARN', () => {
    const arn = 'arn:aws:states:ap-northeast-1:123456789012:stateMachine:Pathbench-Measurement';
    expect(readAwsConfig({ ...fullEnv, [ENV.stateMachineArn]: arn }).stateMachineArn).toBe(arn);
    expect(() => readAwsConfig({ ...fullEnv, [ENV.stateMachineArn]: 'Pathbench-Measurement' })).toThrow(ConfigError);
  });
});

describe('SsmPlanSource', () => {
  const ssm = mockClient(SSMClient);
  const plans = new SsmPlanSource(new SSMClient({ region: 'ap-northeast-1' }));

  it('reads and parses /pathbench/plans/<name>; missing → undefined', async () => {
    ssm.reset();
    ssm.on(GetParameterCommand, { Name: '/pathbench/plans/weekly' }).resolves({ Parameter: { Value: '{"name":"w"}' } });
    ssm
      .on(GetParameterCommand, { Name: '/pathbench/plans/none' })
      .rejects(new ParameterNotFound({ $metadata: {}, message: 'not found' }));
    ssm.on(GetParameterCommand, { Name: '/pathbench/plans/broken' }).resolves({ Parameter: { Value: '{' } });
    expect(await plans.get('weekly')).toEqual({ name: 'w' });
    expect(ssm.commandCalls(GetParameterCommand)[0].args[0].input).toEqual({
      Name: '/pathbench/plans/weekly',
      WithDecryption: true,
    });
    expect(await plans.get('none')).toBeUndefined();
    await expect(plans.get('broken')).rejects.toBeInstanceOf(PlanInvalidError);
    await expect(plans.get('../secret')).rejects.toBeInstanceOf(PlanInvalidError);
  });
});

describe('Lambda entry', () => {
  it('exports one handler per task and rethrows errors with their name', async () => {
    Object.assign(process.env, fullEnv);
    const mod = (await import('../../../../functions/lambda.js')) as unknown as Record<
      string,
      (e: unknown) => Promise<unknown>
    >;
    for (const name of TASK_NAMES) expect(typeof mod[name], name).toBe('function');
    // An empty event is invalid input for every task; the error keeps its class name.
    const e = await mod.ValidatePlan({}).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Error);
    expect((e as Error).name).toMatch(/Error$/);
    expect((e as Error).name).not.toBe('Error');
  });

  it('CleanupAfterExecution validates the EventBridge event and cleans up the execution it names', async () => {
    Object.assign(process.env, fullEnv);
    const mod = (await import('../../../../functions/lambda.js')) as unknown as Record<
      string,
      (e: unknown) => Promise<unknown>
    >;
    const bad = await mod.CleanupAfterExecution({ detail: { status: 'ABORTED' } }).catch((x: unknown) => x);
    expect((bad as Error).name).toBe('TaskInputError');
    expect((bad as Error).message).toBe(
      'CleanupAfterExecution: bad event at detail.name: Invalid input: expected string, received undefined',
    );
    const s3 = mockClient(S3Client);
    const ddb = mockClient(DynamoDBClient);
    try {
      s3.on(GetObjectCommand).rejects(new NoSuchKey({ $metadata: {}, message: 'no key' }));
      ddb.on(GetItemCommand).resolves({
        Item: { pk: { S: 'pathbench-run-lock' }, runId: { S: 'run-7' }, expiresAt: { N: '9999999999' } },
      });
      ddb.on(DeleteItemCommand).resolves({});
      const event = {
        source: 'aws.states',
        'detail-type': 'Step Functions Execution Status Change',
        detail: { name: 'run-7', status: 'ABORTED', stateMachineArn: 'arn:aws:states:…', executionArn: 'arn:…' },
      };
      expect(await mod.CleanupAfterExecution(event)).toEqual({
        restored: 0,
        released: true,
        // ABORTED: a ValidatePlan still running must find the stop marker (functions/pipeline/abandoned-run.ts)
        notes: ['no manifest: the run ended before ValidatePlan wrote one; marked stopped', 'lock released'],
      });
      expect(s3.commandCalls(GetObjectCommand)[0].args[0].input).toEqual({
        Bucket: 'pb-data',
        Key: 'runs/run=run-7/manifest.json',
      });
      expect(ddb.commandCalls(DeleteItemCommand)[0].args[0].input.ExpressionAttributeValues).toEqual({
        ':runId': { S: 'run-7' },
      });
    } finally {
      s3.restore();
      ddb.restore();
    }
  });

  it('CleanupAfterExecution of a refused second start (same name, later startDate) leaves the lock held', async () => {
    Object.assign(process.env, fullEnv);
    const mod = (await import('../../../../functions/lambda.js')) as unknown as Record<
      string,
      (e: unknown) => Promise<unknown>
    >;
    const s3 = mockClient(S3Client);
    const ddb = mockClient(DynamoDBClient);
    try {
      s3.on(GetObjectCommand).rejects(new NoSuchKey({ $metadata: {}, message: 'no key' }));
      ddb.on(GetItemCommand).resolves({
        Item: {
          pk: { S: 'pathbench-run-lock' },
          runId: { S: 'run-7' },
          runStartedAt: { S: '2026-12-01T00:00:00.000Z' },
          expiresAt: { N: '9999999999' },
        },
      });
      ddb.on(DeleteItemCommand).resolves({});
      const event = {
        source: 'aws.states',
        'detail-type': 'Step Functions Execution Status Change',
        detail: { name: 'run-7', status: 'FAILED', startDate: Date.parse('2026-12-01T00:10:00.000Z'), stopDate: null },
      };
      const out = (await mod.CleanupAfterExecution(event)) as { released: boolean; notes: string[] };
      expect(out.released).toBe(false);
      expect(out.notes).toContain('lock not held by this run');
      expect(ddb.commandCalls(DeleteItemCommand)).toHaveLength(0);
    } finally {
      s3.restore();
      ddb.restore();
    }
  });
});
