/**
 * Named plans over S3 (s3rver on loopback, the SDK's real S3 client): a plan over 4 KB (the old
 * SSM parameter's limit) stored with the plan store, then started with `{ "planName": … }`
 * through the real ASL and handlers (fakes only for the instance, routes and remote command);
 * a plan still in SSM (aws-sdk-client-mock at the SSM boundary) starts as before.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { GetParameterCommand, ParameterNotFound, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Summary } from '../../../core/run-summary.js';
import { AWS_POLL_SECONDS } from '../../../functions/adapters/aws/aws-deps.js';
import { S3ObjectStore } from '../../../functions/adapters/aws/s3-store.js';
import { SsmPlanSource } from '../../../functions/adapters/aws/ssm-plans.js';
import { FirstPlanSource, PlanStore } from '../../../functions/pipeline/plan-store.js';
import { runStateMachine } from '../../../local/asl-interpreter.js';
import { noWaits, scenarioDeps, scenarioPlan } from '../../helpers/fakes.js';

/** s3rver ships no types: the two methods used here. */
type S3rverServer = { run(): Promise<AddressInfo>; close(): Promise<void> };
const S3rver = createRequire(import.meta.url)('s3rver') as new (opts: Record<string, unknown>) => S3rverServer;

let server: S3rverServer;
let dir: string;
let s3: S3Client;
const BUCKET = 'pathbench-data';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pb-s3rver-'));
  server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory: dir,
    configureBuckets: [{ name: BUCKET }],
  });
  const { port } = await server.run();
  s3 = new S3Client({
    region: 'ap-northeast-1',
    endpoint: `http://127.0.0.1:${port}`,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
});

afterAll(async () => {
  s3?.destroy();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

/** The scenario plan with enough paths and labels to pass 4 KB (12 paths: within one execution's history limit, functions/pipeline/limits.ts). */
function bigPlan() {
  const plan = scenarioPlan([...'ABCDEFGHIJKL']) as Record<string, unknown> & {
    paths: Record<string, unknown>[];
  };
  plan.name = 'weekly tokyo osaka';
  for (const p of plan.paths) p.label = `Tokyo → Osaka via ${p.id}: ${'a long description of the path '.repeat(5)}`;
  return plan;
}

describe('named plans in S3', () => {
  it('a plan over 4 KB stores in the bucket and runs by its name', async () => {
    const text = JSON.stringify(bigPlan(), null, 2);
    expect(Buffer.byteLength(text)).toBeGreaterThan(4096);
    // As `plan put --aws` stores it: held to the limits at the AWS fleet's poll interval.
    const plans = new PlanStore(new S3ObjectStore(s3, BUCKET), { pollSeconds: AWS_POLL_SECONDS });
    await plans.put('weekly tokyo osaka', text);
    expect(await plans.list()).toEqual(['weekly tokyo osaka']);
    expect(await plans.text('weekly tokyo osaka')).toBe(text);

    const ssm = mockClient(SSMClient);
    ssm.on(GetParameterCommand).rejects(new ParameterNotFound({ message: 'not found', $metadata: {} }));
    const { deps, dir: data, query } = await scenarioDeps();
    try {
      deps.plans = new FirstPlanSource([plans, new SsmPlanSource(new SSMClient({ region: 'ap-northeast-1' }))]);
      const r = await runStateMachine({
        deps,
        input: { planName: 'weekly tokyo osaka' },
        runId: 'named-big',
        waitTimeOverrides: noWaits(),
      });
      expect(r.status, JSON.stringify(r.error)).toBe('SUCCEEDED');
      const s = JSON.parse((await deps.store.getText('reports/run=named-big/summary.json')) ?? '{}') as Summary;
      expect(s.planName).toBe('weekly tokyo osaka');
      expect(s.paths.map((p) => p.status)).toEqual(Array(12).fill('succeeded'));
      // the S3 plan was found first: SSM was never asked
      expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(0);
    } finally {
      ssm.restore();
      query.close();
      await rm(data, { recursive: true, force: true });
    }
  });

  it('a plan still in an SSM parameter starts as before; an unknown name is a bad plan', async () => {
    const ssm = mockClient(SSMClient);
    ssm.on(GetParameterCommand, { Name: '/pathbench/plans/legacy' }).resolves({
      Parameter: {
        Name: '/pathbench/plans/legacy',
        Type: 'String',
        Value: JSON.stringify(scenarioPlan(['A'])),
        Version: 3,
      },
    });
    ssm
      .on(GetParameterCommand, { Name: '/pathbench/plans/nothing' })
      .rejects(new ParameterNotFound({ message: 'not found', $metadata: {} }));
    const { deps, dir: data, query } = await scenarioDeps();
    try {
      deps.plans = new FirstPlanSource([
        new PlanStore(new S3ObjectStore(s3, BUCKET)),
        new SsmPlanSource(new SSMClient({ region: 'ap-northeast-1' })),
      ]);
      const ok = await runStateMachine({
        deps,
        input: { planName: 'legacy' },
        runId: 'legacy',
        waitTimeOverrides: noWaits(),
      });
      expect(ok.status).toBe('SUCCEEDED');
      const bad = await runStateMachine({
        deps,
        input: { planName: 'nothing' },
        runId: 'nothing',
        waitTimeOverrides: noWaits(),
      });
      expect(bad.status).toBe('FAILED');
      expect(JSON.stringify(bad.error ?? bad)).toMatch(/no plan named \\"nothing\\"|no plan named "nothing"/);
    } finally {
      ssm.restore();
      query.close();
      await rm(data, { recursive: true, force: true });
    }
  });
});
