/**
 * The AWS configuration of the Lambda functions, read from environment variables once at cold
 * start (a missing variable fails fast with its name, ConfigError, before any event is handled),
 * and awsDeps, which builds one function's Deps from the adapters of its needs. This module
 * imports no AWS SDK client: each adapter module brings its own (AwsPort), and a function's entry
 * imports only the adapters its needs use, so its bundle holds only their clients.
 */

import { ConfigError } from '../../../core/errors.js';
import { parseAllowedRoutes } from '../../../core/route-policy.js';
import { costSettings, parseSettings } from '../../../core/settings.js';
import { parseAllowedTargets } from '../../../core/target-policy.js';
import { jsonLogger } from '../../log.js';
import { depsForNeeds } from '../../needs.js';
import type { Deps, Logger, ObjectStore } from '../../ports.js';
import { type Capability, LAMBDAS, type LambdaName, type PortName, type PortsOf } from '../../wiring.js';

/** Seconds between instance state polls on AWS (the limits a plan must fit depend on it). */
export const AWS_POLL_SECONDS = 10;

/** The default SSM parameter prefix of named plans. */
export const DEFAULT_PLAN_PREFIX = '/pathbench/plans/';

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
  /** The agent's document and bundle bucket in the mesh's other regions (JSON, parseProbeRegions). */
  probeRegions: 'PATHBENCH_PROBE_REGIONS',
  planPrefix: 'PATHBENCH_PLAN_PREFIX',
  /** Optional: lets the run lock be taken over from an execution that has ended. */
  stateMachineArn: 'PATHBENCH_STATE_MACHINE_ARN',
  /** The route changes the operator allowed (JSON, core/route-policy.ts); absent: none. */
  allowedRoutes: 'PATHBENCH_ALLOWED_ROUTES',
  /** The targets the operator allowed (JSON list of CIDRs and hostnames, core/target-policy.ts); absent: none. */
  allowedTargets: 'PATHBENCH_ALLOWED_TARGETS',
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

/** Where the probe document and the agent bundle are in one region. */
export interface ProbeLocation {
  documentName: string;
  agentBucket: string;
}

/** Parse PATHBENCH_PROBE_REGIONS (JSON `{ "<region>": { documentName, agentBucket } }`); absent: none. */
export function parseProbeRegions(text: string | undefined, what: string): Record<string, ProbeLocation> {
  if (!text) return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new Error(
      `${what}: expected JSON { "<region>": { "documentName", "agentBucket" } }, got ${text.slice(0, 80)}`,
    );
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new Error(`${what}: expected an object keyed by region, got ${JSON.stringify(v).slice(0, 80)}`);
  }
  const out: Record<string, ProbeLocation> = {};
  for (const [region, loc] of Object.entries(v)) {
    const l = loc as Partial<ProbeLocation> | null;
    if (
      !/^[a-z]{2}(-[a-z]+)+-\d$/.test(region) ||
      typeof l?.documentName !== 'string' ||
      typeof l.agentBucket !== 'string'
    ) {
      throw new Error(
        `${what}: expected "<region>": { "documentName": string, "agentBucket": string }, got "${region}": ${JSON.stringify(loc).slice(0, 80)}`,
      );
    }
    out[region] = { documentName: l.documentName, agentBucket: l.agentBucket };
  }
  return out;
}

/** The execution ARN of `name` under a state machine: `…:stateMachine:<sm>` → `…:execution:<sm>:<name>`. */
export function executionArn(stateMachineArn: string, name: string): string {
  const m = /^(arn:[^:]+:states:[^:]*:[^:]*):stateMachine:([^:]+)$/.exec(stateMachineArn);
  if (!m) throw new ConfigError(`not a state machine ARN: ${JSON.stringify(stateMachineArn)}`);
  return `${m[1]}:execution:${m[2]}:${name}`;
}

/** What an adapter is built from: the configuration, the logger, the function's needs. */
export interface AwsPortContext {
  cfg: AwsConfig;
  log: Logger;
  needs: readonly Capability[];
  /** The object store, built first: the named-plan source reads plans from it. */
  store?: ObjectStore;
}

/** Builds one port's AWS adapter; each adapter module exports its own (s3Store, ec2Fleet …). */
export type AwsPort<P extends PortName> = (ctx: AwsPortContext) => NonNullable<Deps[P]>;

/** The adapters a Lambda is built with: one for each port of its needs, no other (functions/wiring.ts PortsOf). */
export type AwsPorts<N extends LambdaName> = { [P in PortsOf<N>]: AwsPort<P> };

/**
 * The Deps of the Lambda `name`: the ports of its needs from the given adapters (the store first),
 * every other port absent (functions/needs.ts), the configuration read from `env`.
 */
export function awsDeps<N extends LambdaName>(
  name: N,
  ports: AwsPorts<N>,
  env: Record<string, string | undefined>,
): Deps {
  const cfg = readAwsConfig(env);
  const log = jsonLogger();
  const ctx: AwsPortContext = { cfg, log, needs: LAMBDAS[name].needs };
  const adapters = ports as Partial<Record<PortName, AwsPort<PortName>>>;
  const store = adapters.store?.(ctx) as ObjectStore | undefined;
  const built: Partial<Record<PortName, unknown>> = { store };
  for (const [port, make] of Object.entries(adapters) as [PortName, AwsPort<PortName>][]) {
    if (port !== 'store') built[port] = make({ ...ctx, ...(store ? { store } : {}) });
  }
  return depsForNeeds(
    name,
    built as Partial<Pick<Deps, PortName>>,
    {
      log,
      driver: 'aws',
      allowedRoutes: parseAllowedRoutes(env[ENV.allowedRoutes], ENV.allowedRoutes),
      allowedTargets: parseAllowedTargets(env[ENV.allowedTargets], ENV.allowedTargets),
      ...(env[ENV.accountId] ? { accountId: env[ENV.accountId] } : {}),
      // The stack's defaults; the override is each execution's own input (ValidatePlan reads it).
      cost: costSettings(parseSettings({}, env)),
      now: () => new Date(),
    },
    // ValidatePlan and PollProbe read the fleet's poll interval without touching an instance.
    { fleet: { rebootable: true, pollSeconds: AWS_POLL_SECONDS } },
  );
}
