/**
 * Builds the AWS Deps from environment variables, read once at cold start. A missing variable
 * fails fast with its name (ConfigError), before any event is handled.
 */
import { AthenaClient } from '@aws-sdk/client-athena';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EC2Client } from '@aws-sdk/client-ec2';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import { SSMClient } from '@aws-sdk/client-ssm';
import { costDefaultsFromEnv } from '../../../core/cost.js';
import { ConfigError } from '../../../core/errors.js';
import { SAFE_ID } from '../../../core/fields.js';
import { parseAllowedRoutes } from '../../../core/route-policy.js';
import { jsonLogger } from '../../log.js';
import { FirstPlanSource, PlanStore } from '../../pipeline/plan-store.js';
import type { Deps, PlanSource } from '../../ports.js';
import { AthenaQueryEngine } from './athena-query.js';
import { AwsRunPublisher } from './aws-publisher.js';
import { DynamoRunLock, executionActiveCheck, executionArn } from './dynamodb-lock.js';
import { Ec2SsmFleet } from './ec2-fleet.js';
import { Ec2Routes } from './ec2-routes.js';
import { S3ObjectStore } from './s3-store.js';
import { DEFAULT_PLAN_PREFIX, SsmPlanSource } from './ssm-plans.js';
import { type ProbeLocation, parseProbeRegions, SsmCommandRunner } from './ssm-runner.js';

/** Environment variable names the Lambda functions read (CDK sets exactly these). */
export const ENV = {
  region: 'AWS_REGION',
  bucket: 'PATHBENCH_BUCKET',
  workgroup: 'PATHBENCH_ATHENA_WORKGROUP',
  database: 'PATHBENCH_GLUE_DATABASE',
  table: 'PATHBENCH_SAMPLES_TABLE',
  lockTable: 'PATHBENCH_LOCK_TABLE',
  document: 'PATHBENCH_PROBE_DOCUMENT',
  agentBucket: 'PATHBENCH_AGENT_BUCKET',
  agentKey: 'PATHBENCH_AGENT_KEY',
  /** The agent's document and bundle bucket in the mesh's other regions (JSON, runner.ts parseProbeRegions). */
  probeRegions: 'PATHBENCH_PROBE_REGIONS',
  planPrefix: 'PATHBENCH_PLAN_PREFIX',
  /** Optional: lets the run lock be taken over from an execution that has ended. */
  stateMachineArn: 'PATHBENCH_STATE_MACHINE_ARN',
  /** The route changes the operator allowed (JSON, core/route-policy.ts); absent: none. */
  allowedRoutes: 'PATHBENCH_ALLOWED_ROUTES',
  /** The account of task clients' queues when a plan gives no queueUrl (core/ecs-client.ts). */
  accountId: 'PATHBENCH_ACCOUNT_ID',
} as const;

export interface AwsConfig {
  region: string;
  bucket: string;
  workgroup: string;
  database: string;
  table: string;
  lockTable: string;
  document: string;
  agentBucket: string;
  agentKey: string;
  probeRegions: Record<string, ProbeLocation>;
  planPrefix: string;
  holder: string;
  /** Absent: a lock held by an ended run stays until released or expired. */
  stateMachineArn?: string;
}

/** Read and check the configuration; throws ConfigError naming the first missing variable. */
export function readAwsConfig(env: Record<string, string | undefined>): AwsConfig {
  const need = (name: string): string => {
    const v = env[name];
    if (!v) throw new ConfigError(`environment variable ${name} is not set`);
    return v;
  };
  const stateMachineArn = env[ENV.stateMachineArn];
  // Fail at cold start, not at the first lock conflict weeks later.
  if (stateMachineArn) executionArn(stateMachineArn, 'check');
  return {
    region: need(ENV.region),
    bucket: need(ENV.bucket),
    workgroup: need(ENV.workgroup),
    database: need(ENV.database),
    table: env[ENV.table] || 'samples',
    lockTable: need(ENV.lockTable),
    document: need(ENV.document),
    agentBucket: need(ENV.agentBucket),
    agentKey: need(ENV.agentKey),
    probeRegions: (() => {
      try {
        return parseProbeRegions(env[ENV.probeRegions], ENV.probeRegions);
      } catch (e) {
        throw new ConfigError((e as Error).message);
      }
    })(),
    planPrefix: env[ENV.planPrefix] || DEFAULT_PLAN_PREFIX,
    holder: env.AWS_LAMBDA_FUNCTION_NAME ? `lambda:${env.AWS_LAMBDA_FUNCTION_NAME}` : 'pathbench',
    ...(stateMachineArn ? { stateMachineArn } : {}),
  };
}

/** AWS Deps plus the named-plan source (ValidatePlan reads `{ planName }` through it). */
export type AwsDeps = Deps & { plans: PlanSource };

/** Build every AWS adapter once; per-region EC2/SSM clients are created on first use. */
export function awsDeps(env: Record<string, string | undefined>): AwsDeps {
  const cfg = readAwsConfig(env);
  const regional = new Map<string, { ec2: EC2Client; ssm: SSMClient }>();
  const clientsFor = (region: string) => {
    let c = regional.get(region);
    if (!c) {
      c = { ec2: new EC2Client({ region }), ssm: new SSMClient({ region }) };
      regional.set(region, c);
    }
    return c;
  };
  const home = clientsFor(cfg.region);
  const log = jsonLogger();
  const isRunActive = cfg.stateMachineArn
    ? executionActiveCheck(new SFNClient({ region: cfg.region }), cfg.stateMachineArn)
    : undefined;
  const store = new S3ObjectStore(new S3Client({ region: cfg.region }), cfg.bucket);
  const ssmPlans = new SsmPlanSource(home.ssm, cfg.planPrefix);
  return {
    store,
    fleet: new Ec2SsmFleet(clientsFor),
    routes: new Ec2Routes((r) => clientsFor(r).ec2),
    runner: new SsmCommandRunner((r) => clientsFor(r).ssm, {
      documentName: cfg.document,
      bucket: cfg.bucket,
      agentBucket: cfg.agentBucket,
      agentKey: cfg.agentKey,
      homeRegion: cfg.region,
      regions: cfg.probeRegions,
    }),
    query: new AthenaQueryEngine(new AthenaClient({ region: cfg.region }), {
      workgroup: cfg.workgroup,
      database: cfg.database,
      bucket: cfg.bucket,
      table: cfg.table,
    }),
    lock: new DynamoRunLock(new DynamoDBClient({ region: cfg.region }), {
      table: cfg.lockTable,
      holder: cfg.holder,
      ...(isRunActive ? { isRunActive } : {}),
      log,
    }),
    // `pathbench plan put` stores plans in the bucket; plans in SSM parameters keep working.
    plans: new FirstPlanSource([
      new PlanStore(store),
      { get: async (name) => (SAFE_ID.test(name) ? ssmPlans.get(name) : undefined) },
    ]),
    publisher: new AwsRunPublisher(new EventBridgeClient({ region: cfg.region })),
    log,
    driver: 'aws',
    allowedRoutes: parseAllowedRoutes(env[ENV.allowedRoutes], ENV.allowedRoutes),
    ...(env[ENV.accountId] ? { accountId: env[ENV.accountId] } : {}),
    cost: costDefaultsFromEnv(env),
    now: () => new Date(),
  };
}
