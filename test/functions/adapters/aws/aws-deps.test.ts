/** Config reading, a Lambda's Deps from the adapters of its needs, the named-plan source and the Lambda entries (error names intact). */
import { DeleteItemCommand, DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, NoSuchKey, S3Client } from '@aws-sdk/client-s3';
import { GetParameterCommand, ParameterNotFound, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { ConfigError, PlanInvalidError } from '../../../../core/errors.js';
import { AWS_POLL_SECONDS, awsDeps, ENV, readAwsConfig } from '../../../../functions/adapters/aws/aws-deps.js';
import { dynamoLock } from '../../../../functions/adapters/aws/dynamodb-lock.js';
import { ec2Routes } from '../../../../functions/adapters/aws/ec2-routes.js';
import { s3Store } from '../../../../functions/adapters/aws/s3-store.js';
import { namedPlans, SsmPlanSource } from '../../../../functions/adapters/aws/ssm-plans.js';
import { FirstPlanSource } from '../../../../functions/pipeline/plan-store.js';

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

  it("builds a function's ports from the adapters of its needs, with defaults for the optional variables", () => {
    const cfg = readAwsConfig(fullEnv);
    expect(cfg.table).toBe('samples');
    expect(cfg.planPrefix).toBe('/pathbench/plans/');
    expect(cfg.stateMachineArn).toBeUndefined();
    const deps = awsDeps(
      'ValidatePlan',
      { store: s3Store, routes: ec2Routes, lock: dynamoLock, plans: namedPlans },
      fullEnv,
    );
    expect(deps.driver).toBe('aws');
    expect(deps.store.location).toBe('s3://pb-data');
    expect(deps.plans).toBeInstanceOf(FirstPlanSource);
    // No PATHBENCH_ALLOWED_TARGETS: no target is allowed (the stack always sets the list).
    expect(deps.allowedTargets?.entries).toEqual([]);
    const listed = awsDeps(
      'ValidatePlan',
      { store: s3Store, routes: ec2Routes, lock: dynamoLock, plans: namedPlans },
      { ...fullEnv, [ENV.allowedTargets]: '["10.1.0.0/16"]' },
    );
    expect(listed.allowedTargets?.entries).toEqual(['10.1.0.0/16']);
    // ValidatePlan has no fleet: only the poll interval its limits are computed with.
    expect(deps.fleet.pollSeconds).toBe(AWS_POLL_SECONDS);
    expect(() => deps.fleet.describe({ region: 'ap-northeast-1', instanceId: 'i-1' })).toThrow(
      'ValidatePlan has no fleet port (fleet.describe): its needs in functions/wiring.ts are store:read, store:write, lock, plans, routes:read',
    );
  });

  it('leaves out every port a function does not need', () => {
    const deps = awsDeps('ReleaseLock', { store: s3Store, lock: dynamoLock }, fullEnv);
    expect(() =>
      deps.routes.read({ region: 'ap-northeast-1', routeTableId: 'rtb-1', destination: '10.0.0.0/16' }),
    ).toThrow(ConfigError);
    expect(() => deps.query.registerPartition('A', 'r1')).toThrow(
      'ReleaseLock has no query port (query.registerPartition)',
    );
    expect(() => deps.runner.cancel('c', { region: 'ap-northeast-1', instanceId: 'i-1' })).toThrow(ConfigError);
    expect(deps.plans).toBeUndefined();
    expect(deps.publisher).toBeUndefined();
    // Built without an adapter its needs require: refused before any event.
    expect(() => awsDeps('ReleaseLock', { store: s3Store } as never, fullEnv)).toThrow(
      'ReleaseLock needs the lock port but was built without it',
    );
    expect(() =>
      awsDeps('ReleaseLock', { store: s3Store, lock: dynamoLock, routes: ec2Routes } as never, fullEnv),
    ).toThrow('ReleaseLock was built with adapters its needs do not use: routes');
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

type Entry = { handler: (e: unknown) => Promise<unknown> };
const cleanupEntry = async () =>
  ((await import('../../../../functions/handlers/cleanup-after-execution.lambda.js')) as Entry).handler;

describe('Lambda entries', () => {
  it('rethrow errors with their name', async () => {
    Object.assign(process.env, fullEnv);
    const { handler } = (await import('../../../../functions/handlers/validate-plan.lambda.js')) as Entry;
    // An empty event is invalid input for every task; the error keeps its class name.
    const e = await handler({}).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Error);
    expect((e as Error).name).toMatch(/Error$/);
    expect((e as Error).name).not.toBe('Error');
  });

  it('CleanupAfterExecution validates the EventBridge event and cleans up the execution it names', async () => {
    Object.assign(process.env, fullEnv);
    const cleanup = await cleanupEntry();
    const bad = await cleanup({ detail: { status: 'ABORTED' } }).catch((x: unknown) => x);
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
      expect(await cleanup(event)).toEqual({
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
    const cleanup = await cleanupEntry();
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
      const out = (await cleanup(event)) as { released: boolean; notes: string[] };
      expect(out.released).toBe(false);
      expect(out.notes).toContain('lock not held by this run');
      expect(ddb.commandCalls(DeleteItemCommand)).toHaveLength(0);
    } finally {
      s3.restore();
      ddb.restore();
    }
  });
});
