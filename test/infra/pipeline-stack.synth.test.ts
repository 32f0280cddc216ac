/**
 * Synthesizes the pipeline stack offline (local esbuild bundling, no Docker, no account) once,
 * and checks the parts that matter with targeted assertions plus cdk-nag AwsSolutions.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBE_DOCUMENT_PATTERNS } from '../../functions/adapters/aws/probe-document.js';
import { type Capability, TASK_NAMES, TASKS } from '../../functions/wiring.js';
import { type AgentRegionStack, addAgentRegions } from '../../infra/agent-region-stack.js';
import { CLEANUP_STATUSES, clientQueueGrant } from '../../infra/constructs/orchestration.js';
import { MANAGED_TAG } from '../../infra/grants.js';
import { QUERIES_DIR } from '../../infra/infra-paths.js';
import { PipelineStack } from '../../infra/pipeline-stack.js';
import { RUN_TABLES, runTableColumns, samplesColumns, trinoType, viewDefinitions } from '../../queries/sql.js';
import { definitionFile, definitionText, MACHINE_PLACEHOLDERS, placeholdersIn } from '../../statemachine/asl.js';

type Resource = { Type: string; Properties: Record<string, unknown> };

/** The route changes this test stack allows (stack configuration `allowedRoutes`). */
const ALLOWED_ROUTES = [
  {
    region: 'ap-northeast-1',
    routeTableId: 'rtb-0tokyo',
    destination: '10.1.0.0/16',
    targets: ['transitGatewayId:tgw-1'],
  },
  {
    region: 'ap-northeast-3',
    routeTableId: 'rtb-0osaka',
    destination: '10.0.0.0/16',
    targets: ['transitGatewayId:tgw-3'],
  },
];

/** The agent's other regions of a mesh (context meshRegions): one agent region stack each. */
const AGENT_REGIONS = ['eu-west-1', 'sa-east-1'];

let outdir: string;
let stack: PipelineStack;
let agentStacks: AgentRegionStack[];
let template: Template;
let resources: Record<string, Resource>;

function ofType(type: string): [string, Resource][] {
  return Object.entries(resources).filter(([, r]) => r.Type === type);
}

/** The state machine named `Pathbench-<suffix>`: [logical id, resource]. */
function machineNamed(suffix: 'Measurement' | 'Chunk' | 'Path' | 'Mesh'): [string, Resource] {
  const found = ofType('AWS::StepFunctions::StateMachine').find(
    ([, r]) => r.Properties.StateMachineName === `Pathbench-${suffix}`,
  );
  if (!found) throw new Error(`no state machine Pathbench-${suffix}`);
  return found;
}

/** All IAM statements of a state machine's role. */
function machineStatements(m: Resource): Record<string, unknown>[] {
  const roleRef = (m.Properties.RoleArn as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
  return ofType('AWS::IAM::Policy')
    .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleRef))
    .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement);
}

/** All IAM statements of the function role for a task. */
function statementsOf(task: string): Record<string, unknown>[] {
  const policies = ofType('AWS::IAM::Policy').filter(([id]) => id.startsWith(`${task}FnServiceRoleDefaultPolicy`));
  expect(policies).toHaveLength(1);
  const doc = policies[0][1].Properties.PolicyDocument as { Statement: Record<string, unknown>[] };
  return doc.Statement;
}

function actionsOf(s: Record<string, unknown>): string[] {
  return ([] as string[]).concat(s.Action as string | string[]);
}

/** Asset bundling skipped: no test here reads a function's bundle. */
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

beforeAll(() => {
  outdir = mkdtempSync(path.join(tmpdir(), 'pb-cdk-'));
  // The functions' bundles are checked where they are built (constructs/pathbench-function.synth.test.ts).
  const app = new App({ outdir, context: NO_BUNDLING });
  stack = new PipelineStack(app, 'Pathbench', {
    env: { account: '123456789012', region: 'ap-northeast-1' },
    alarmEmail: 'netops@example.com',
    allowedRoutes: ALLOWED_ROUTES,
    allowedTargets: ['10.1.0.0/16', 'target.example.internal'],
    clientInstanceIds: ['i-0aaaaaaaaaaaaaaa1', 'i-0bbbbbbbbbbbbbbb2'],
    agentRegions: AGENT_REGIONS,
  });
  agentStacks = addAgentRegions(app, stack, AGENT_REGIONS);
  app.synth();
  template = Template.fromStack(stack);
  resources = template.toJSON().Resources as Record<string, Resource>;
}, 600_000);

afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

describe('pipeline stack', () => {
  it('builds the state machines from our ASL with every placeholder resolved to its function or machine', () => {
    for (const [suffix, name] of [
      ['Measurement', 'measurement'],
      ['Chunk', 'chunk'],
      ['Path', 'path'],
      ['Mesh', 'mesh'],
    ] as const) {
      const [, sm] = machineNamed(suffix);
      const subs = sm.Properties.DefinitionSubstitutions as Record<string, Record<string, [string, string]>>;
      const placeholders = placeholdersIn(definitionText(name));
      expect(placeholders.length, name).toBeGreaterThan(0);
      for (const p of placeholders) {
        if (p in MACHINE_PLACEHOLDERS) {
          // The machine it starts: a Ref to that state machine.
          const target = MACHINE_PLACEHOLDERS[p as keyof typeof MACHINE_PLACEHOLDERS];
          const [targetId] = machineNamed(target === 'chunk' ? 'Chunk' : 'Path');
          expect(subs[p], `${name} ${p}`).toEqual({ Ref: targetId });
          continue;
        }
        // A task: the function of the same name.
        expect(subs[p]['Fn::GetAtt'][0]).toMatch(new RegExp(`^${p}Fn[0-9A-F]{8}$`));
        expect(resources[subs[p]['Fn::GetAtt'][0]].Type).toBe('AWS::Lambda::Function');
      }
      // The uploaded definition is our file, byte for byte, and nothing is left after substitution.
      const loc = sm.Properties.DefinitionS3Location as { Key: string };
      const uploaded = readFileSync(path.join(outdir, `asset.${loc.Key}`), 'utf8');
      expect(uploaded).toBe(readFileSync(definitionFile(name), 'utf8'));
      const substituted = uploaded.replace(/\$\{([A-Za-z0-9_]+)\}/g, (m, k: string) => (k in subs ? 'arn' : m));
      expect(substituted).not.toMatch(/\$\{/);
      expect(sm.Properties.LoggingConfiguration).toMatchObject({ Level: 'ALL', IncludeExecutionData: true });
      expect(sm.Properties.TracingConfiguration).toEqual({ Enabled: true });
    }
    // Every task's function is called by some machine.
    const used = new Set(['measurement', 'path'].flatMap((n) => placeholdersIn(definitionText(n as 'path'))));
    expect(TASK_NAMES.filter((t) => !used.has(t))).toEqual([]);
  });

  it('lets the run start its chunks and a chunk its paths (.sync:2: start, describe, stop, the managed rule)', () => {
    for (const [parent, child] of [
      ['Measurement', 'Chunk'],
      ['Chunk', 'Path'],
    ] as const) {
      const text = JSON.stringify(machineStatements(machineNamed(parent)[1]));
      expect(text).toContain('states:StartExecution');
      expect(text).toContain(`stateMachine:Pathbench-${child}`);
      expect(text).toContain(`execution:Pathbench-${child}:*`);
      expect(text).toContain('states:StopExecution');
      expect(text).toContain('rule/StepFunctionsGetEventsForStepFunctionsExecutionRule');
    }
    // The chunk calls no function: it only starts path executions.
    expect(JSON.stringify(machineStatements(machineNamed('Chunk')[1]))).not.toContain('lambda:InvokeFunction');
  });

  it('creates one arm64 function per task (plus the cleanup) with the wiring timeout and kept class names', () => {
    const fns = ofType('AWS::Lambda::Function');
    expect(fns).toHaveLength(TASK_NAMES.length + 1);
    for (const name of [...TASK_NAMES, 'CleanupAfterExecution']) {
      template.hasResourceProperties('AWS::Lambda::Function', {
        Handler: 'index.handler',
        Description: Match.stringLikeRegexp(`^pathbench ${name}: `),
        Architectures: ['arm64'],
        Runtime: Match.stringLikeRegexp('^nodejs'),
        LoggingConfig: { LogGroup: Match.anyValue() },
        Environment: {
          Variables: Match.objectLike({
            PATHBENCH_ATHENA_WORKGROUP: 'pathbench',
            // Built from the fixed name, not a Ref: the state machine already references the functions.
            PATHBENCH_STATE_MACHINE_ARN: {
              'Fn::Join': [
                '',
                [
                  'arn:',
                  { Ref: 'AWS::Partition' },
                  ':states:ap-northeast-1:123456789012:stateMachine:Pathbench-Measurement',
                ],
              ],
            },
          }),
        },
      });
    }
    expect(machineNamed('Measurement')[1].Properties.StateMachineName).toBe('Pathbench-Measurement');
  });

  it('gives the collecting tasks the timeout and memory the collect bench sized (1 M lines in a 512 MB heap)', () => {
    for (const name of ['CollectOutput', 'RecordPathFailure']) {
      template.hasResourceProperties('AWS::Lambda::Function', {
        Description: Match.stringLikeRegexp(`^pathbench ${name}: `),
        Timeout: 900,
        MemorySize: 512,
      });
    }
  });

  it('schedules runs DISABLED by default, with a dead-letter queue and a retry policy', () => {
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      State: 'DISABLED',
      Target: {
        Arn: { Ref: Match.stringLikeRegexp('^Measurement') },
        Input: JSON.stringify({ planName: 'default', trigger: 'schedule' }),
        DeadLetterConfig: { Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ScheduleDlq'), 'Arn'] } },
        RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 },
      },
    });
  });

  it('lets the scheduler role start either machine, and the stack schedule a mesh plan', () => {
    const roles = template.findResources('AWS::IAM::Role', {
      Properties: { AssumeRolePolicyDocument: { Statement: [{ Principal: { Service: 'scheduler.amazonaws.com' } }] } },
    });
    const [roleId] = Object.keys(roles);
    const started = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Record<string, unknown>[])
      .filter((st) => actionsOf(st).includes('states:StartExecution'))
      .map((st) => JSON.stringify(st.Resource));
    expect(started.join(' ')).toMatch(/Measurement/);
    expect(started.join(' ')).toMatch(/Mesh/);
    const app = new App({ outdir: mkdtempSync(path.join(tmpdir(), 'pb-cdk-')), context: NO_BUNDLING });
    const mesh = new PipelineStack(app, 'MeshScheduled', {
      env: { account: '123456789012', region: 'ap-northeast-1' },
      scheduleMachine: 'mesh',
      schedulePlanName: 'weekly-mesh',
    });
    Template.fromStack(mesh).hasResourceProperties('AWS::Scheduler::Schedule', {
      Target: {
        Arn: { Ref: Match.stringLikeRegexp('Mesh') },
        Input: JSON.stringify({ planName: 'weekly-mesh', trigger: 'schedule' }),
      },
    });
  });

  it('encrypts the data bucket with its own rotated KMS key, usable only through S3 by this account', () => {
    const dataKey = { 'Fn::GetAtt': [Match.stringLikeRegexp('DataKey'), 'Arn'] };
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          {
            BucketKeyEnabled: true,
            ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: dataKey },
          },
        ],
      },
      VersioningConfiguration: { Status: 'Enabled' },
    });
    const keys = template.findResources('AWS::KMS::Key', {
      Properties: { Description: Match.stringLikeRegexp('data bucket') },
    });
    expect(Object.keys(keys)).toHaveLength(1);
    const [key] = Object.values(keys);
    expect(key.Properties.EnableKeyRotation).toBe(true);
    expect(key.DeletionPolicy).toBe('Retain');
    const statements = key.Properties.KeyPolicy.Statement as Record<string, unknown>[];
    // Besides the account root's statement (kms:*, which delegates to IAM): anyone, but only
    // through S3, in this region, from this account.
    const others = statements.filter((st) => st.Action !== 'kms:*');
    expect(others).toEqual([
      expect.objectContaining({
        Principal: { AWS: '*' },
        Condition: {
          StringEquals: {
            'kms:CallerAccount': { Ref: 'AWS::AccountId' },
            'kms:ViaService': { 'Fn::Join': ['', ['s3.', { Ref: 'AWS::Region' }, '.amazonaws.com']] },
          },
        },
      }),
    ]);
  });

  it('enforces the Athena workgroup configuration with encrypted results and a scan cutoff', () => {
    template.hasResourceProperties('AWS::Athena::WorkGroup', {
      Name: 'pathbench',
      WorkGroupConfiguration: {
        EnforceWorkGroupConfiguration: true,
        BytesScannedCutoffPerQuery: 10 * 1024 ** 3,
        ResultConfiguration: {
          EncryptionConfiguration: {
            EncryptionOption: 'SSE_KMS',
            KmsKey: { 'Fn::GetAtt': [Match.stringLikeRegexp('DataKey'), 'Arn'] },
          },
          OutputLocation: { 'Fn::Join': ['', ['s3://', { Ref: Match.stringLikeRegexp('^Data') }, '/athena-results/']] },
        },
      },
    });
  });

  it('has a named query for every .sql file and a Glue table with the DDL columns', () => {
    const names = ofType('AWS::Athena::NamedQuery').map(([, r]) => r.Properties.Description as string);
    const files = readdirSync(QUERIES_DIR, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.sql'))
      .map((f) => `queries/${f.split(path.sep).join('/')}`);
    expect(files.length).toBeGreaterThan(1);
    expect(names.sort()).toEqual(files.sort());
    for (const [, q] of ofType('AWS::Athena::NamedQuery')) {
      expect(JSON.stringify(q.Properties.QueryString)).not.toMatch(/\$\{(database|location)\}/);
    }
    type TableInput = {
      Name: string;
      PartitionKeys: { Name: string }[];
      Parameters: Record<string, string>;
      StorageDescriptor: {
        Columns: { Name: string; Type: string }[];
        Location: unknown;
        InputFormat: string;
        SerdeInfo: { SerializationLibrary: string };
      };
    };
    const tables = Object.fromEntries(
      ofType('AWS::Glue::Table').map(([, t]) => {
        const input = t.Properties.TableInput as TableInput;
        return [input.Name, input];
      }),
    );
    const views = viewDefinitions();
    expect(Object.keys(tables).sort()).toEqual(
      ['paths', 'runs', 'samples', 'samples_jsonl', ...views.map((v) => v.name)].sort(),
    );
    // The analysts' views exist from the first deploy, stored as Athena stores a view.
    expect(views.map((v) => v.name)).toContain('credit_flagged_intervals');
    for (const v of views) {
      const t = tables[v.name] as TableInput & {
        TableType: string;
        ViewOriginalText: string;
        ViewExpandedText: string;
      };
      expect(t.TableType).toBe('VIRTUAL_VIEW');
      expect(t.Parameters).toEqual({ presto_view: 'true', comment: 'Presto View' });
      expect(t.ViewExpandedText).toBe('/* Presto View */');
      const encoded = /^\/\* Presto View: ([A-Za-z0-9+/=]+) \*\/$/.exec(t.ViewOriginalText)?.[1];
      expect(encoded, v.name).toBeDefined();
      const stored = JSON.parse(Buffer.from(encoded as string, 'base64').toString('utf8'));
      expect(stored).toEqual({
        originalSql: v.select,
        catalog: 'awsdatacatalog',
        schema: 'pathbench',
        columns: v.columns.map((c) => ({ name: c.name, type: trinoType(c.type) })),
      });
      // the stored SQL is the file's SELECT, reading the samples table of the same database
      expect(stored.originalSql).toMatch(/^SELECT[\s\S]+FROM samples\b/);
      expect(t.StorageDescriptor.Columns).toEqual(v.columns.map((c) => ({ Name: c.name, Type: c.type })));
    }
    const { columns } = samplesColumns();
    const glue = (list: typeof columns) => list.map((c) => ({ Name: c.name, Type: c.type }));
    for (const name of ['samples', 'samples_jsonl'])
      expect(tables[name].PartitionKeys.map((k) => k.Name)).toEqual(['path', 'run']);
    // What each run and path was: JSON under tables/<name>/, the DDL's columns, no partitions.
    for (const name of RUN_TABLES) {
      expect(tables[name].PartitionKeys ?? []).toEqual([]);
      expect(tables[name].StorageDescriptor.Columns).toEqual(glue(runTableColumns(name)));
      expect(tables[name].StorageDescriptor.SerdeInfo.SerializationLibrary).toBe('org.openx.data.jsonserde.JsonSerDe');
      expect(JSON.stringify(tables[name].StorageDescriptor.Location)).toContain(`/tables/${name}/`);
    }
    // Both tables have the records' columns: the Parquet copy is the records only.
    expect(tables.samples_jsonl.StorageDescriptor.Columns).toEqual(glue(columns));
    expect(tables.samples.StorageDescriptor.Columns).toEqual(glue(columns));
    // The named queries read the Parquet table under parquet/; the raw JSONL stays under samples/.
    expect(tables.samples.Parameters.classification).toBe('parquet');
    expect(tables.samples.StorageDescriptor.SerdeInfo.SerializationLibrary).toBe(
      'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe',
    );
    expect(tables.samples.StorageDescriptor.InputFormat).toBe(
      'org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat',
    );
    expect(JSON.stringify(tables.samples.StorageDescriptor.Location)).toContain('/parquet/');
    expect(tables.samples_jsonl.StorageDescriptor.SerdeInfo.SerializationLibrary).toBe(
      'org.openx.data.jsonserde.JsonSerDe',
    );
    expect(JSON.stringify(tables.samples_jsonl.StorageDescriptor.Location)).toContain('/samples/');
    // The DDL named queries point at the same locations.
    const ddl = ofType('AWS::Athena::NamedQuery')
      .filter(([, q]) => String(q.Properties.Description).endsWith('.ddl.sql'))
      .map(([, q]) => JSON.stringify(q.Properties.QueryString));
    expect(ddl.find((q) => q.includes('STORED AS PARQUET'))).toContain('/parquet/');
    expect(ddl.find((q) => q.includes('.samples_jsonl'))).toContain('/samples/');
    for (const name of RUN_TABLES) expect(ddl.find((q) => q.includes(`.${name} (`))).toContain(`/tables/${name}/`);
  });

  it('lets the query tasks read both tables and the Parquet objects', () => {
    const policies = JSON.stringify(ofType('AWS::IAM::Policy').map(([, p]) => p.Properties.PolicyDocument));
    expect(policies).toContain('/samples_jsonl');
    expect(policies).toMatch(/table\/[^"]*\/samples"/);
    expect(policies).toContain('/parquet/*');
  });

  it('declares every SSM document parameter as a String with an allowedPattern', () => {
    const [[, doc]] = ofType('AWS::SSM::Document');
    expect(doc.Properties.DocumentType).toBe('Command');
    const content = doc.Properties.Content as {
      schemaVersion: string;
      parameters: Record<string, { type: string; allowedPattern: string }>;
      mainSteps: { inputs: { runCommand: string[]; timeoutSeconds: string } }[];
    };
    expect(content.schemaVersion).toBe('2.2');
    expect(Object.keys(content.parameters).sort()).toEqual(Object.keys(PROBE_DOCUMENT_PATTERNS).sort());
    for (const [name, p] of Object.entries(content.parameters)) {
      expect(p.type, name).toBe('String');
      expect(p.allowedPattern, name).toMatch(/^\^.*\$$/);
    }
    const script = content.mainSteps[0].inputs.runCommand.join('\n');
    // Only declared parameters are interpolated into the shell.
    const used = [...script.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]);
    for (const u of used) expect(Object.keys(content.parameters)).toContain(u);
    expect(script).toContain('agent.cjs" run --spec');
    // A failed upload is retried, then the output is kept on the instance instead of deleted.
    expect(script).toContain('for attempt in 1 2 3; do');
    expect(script).toContain('mv "$WORK/out" "$PENDING"');
    // The agent's real asset key passes the deployed pattern; a key with a ".." segment does not.
    const agentKey = new RegExp(content.parameters.agentKey.allowedPattern);
    expect(stack.agentAsset.s3ObjectKey).toMatch(/^[0-9a-f]{64}\.cjs$/);
    expect(agentKey.test(stack.agentAsset.s3ObjectKey)).toBe(true);
    expect(agentKey.test(`../${stack.agentAsset.s3ObjectKey}`)).toBe(false);
    expect(content.mainSteps[0].inputs.timeoutSeconds).toBe('{{ executionTimeout }}');
  });

  it('limits SendCommand to our document and tagged instances', () => {
    const send = statementsOf('SendProbe').filter((s) => actionsOf(s).includes('ssm:SendCommand'));
    expect(send).toHaveLength(2);
    const onDoc = send.find((s) => JSON.stringify(s.Resource).includes('document/'));
    expect(JSON.stringify(onDoc?.Resource)).toContain('"Ref":"ProbeDocument"');
    // …and each agent region's document, by its fixed name.
    for (const r of AGENT_REGIONS) {
      expect(JSON.stringify(onDoc?.Resource)).toContain(`:ssm:${r}:123456789012:document/Pathbench-Probe`);
    }
    const onInstances = send.find((s) => JSON.stringify(s.Resource).includes('instance/*'));
    expect(onInstances?.Condition).toEqual({
      StringEquals: { [`ssm:resourceTag/${MANAGED_TAG.key}`]: MANAGED_TAG.value },
    });
    // Instances in this region and the agent regions only.
    expect(JSON.stringify(onInstances?.Resource)).not.toContain(':ec2:*:');
    const regionOf = (r: unknown) =>
      JSON.stringify(r).includes('"Ref":"AWS::Region"') ? 'home' : JSON.stringify(r).match(/:ec2:([a-z0-9-]+):/)?.[1];
    expect(((onInstances?.Resource ?? []) as unknown[]).map(regionOf)).toEqual(['home', ...AGENT_REGIONS]);
    // Nobody else may send commands.
    for (const t of TASK_NAMES.filter((n) => n !== 'SendProbe' && n !== 'PollProbe')) {
      expect(statementsOf(t).flatMap(actionsOf)).not.toContain('ssm:SendCommand');
    }
  });

  it('limits Stop/StartInstances and route changes to resources tagged pathbench:managed', () => {
    const stop = statementsOf('StopClient').find((s) => actionsOf(s).includes('ec2:StopInstances'));
    expect(stop?.Condition).toEqual({ StringEquals: { [`aws:ResourceTag/${MANAGED_TAG.key}`]: MANAGED_TAG.value } });
    const swap = statementsOf('SwapRoutes').find((s) => actionsOf(s).includes('ec2:ReplaceRoute'));
    expect(actionsOf(swap!).sort()).toEqual(['ec2:CreateRoute', 'ec2:DeleteRoute', 'ec2:ReplaceRoute']);
    expect(swap?.Condition).toEqual({ StringEquals: { [`aws:ResourceTag/${MANAGED_TAG.key}`]: MANAGED_TAG.value } });
    // Only the route tables named in the stack's allowedRoutes, never route-table/*.
    expect(JSON.stringify(swap?.Resource)).not.toContain('route-table/*');
    expect(JSON.stringify(swap?.Resource)).toContain(':ec2:ap-northeast-1:');
    expect(JSON.stringify(swap?.Resource)).toContain(':route-table/rtb-0tokyo');
    expect(JSON.stringify(swap?.Resource)).toContain(':ec2:ap-northeast-3:');
    expect(JSON.stringify(swap?.Resource)).toContain(':route-table/rtb-0osaka');
    expect(([] as unknown[]).concat(swap?.Resource)).toHaveLength(2);
    expect(statementsOf('SummarizeRun').flatMap(actionsOf)).not.toContain('ec2:StopInstances');
  });

  it('denies non-TLS access to the data bucket', () => {
    const [[dataId]] = ofType('AWS::S3::Bucket').filter(([id]) => id.startsWith('Data'));
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: dataId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 's3:*',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
    template.hasResourceProperties('AWS::S3::Bucket', {
      VersioningConfiguration: { Status: 'Enabled' },
      LoggingConfiguration: Match.objectLike({ DestinationBucketName: Match.anyValue() }),
    });
  });

  it('cleans up after FAILED, TIMED_OUT and ABORTED executions of this state machine and the mesh one', () => {
    const [smId] = machineNamed('Measurement');
    const [meshId] = machineNamed('Mesh');
    // the cleanup rule; the other one sends regression events to the alarm topic (trend-alerts.synth.test.ts)
    const rules = ofType('AWS::Events::Rule').filter(([id]) => !id.startsWith('RegressionRule'));
    expect(rules).toHaveLength(1);
    const [[, rule]] = rules;
    expect(rule.Properties.EventPattern).toEqual({
      source: ['aws.states'],
      'detail-type': ['Step Functions Execution Status Change'],
      detail: { stateMachineArn: [{ Ref: smId }, { Ref: meshId }], status: [...CLEANUP_STATUSES] },
    });
    expect(CLEANUP_STATUSES).toEqual(['FAILED', 'TIMED_OUT', 'ABORTED']);
    const targets = rule.Properties.Targets as Record<string, unknown>[];
    expect(targets).toHaveLength(1);
    const [cleanupFn] = ofType('AWS::Lambda::Function').find(([, r]) =>
      (r.Properties.Description as string).startsWith('pathbench CleanupAfterExecution: '),
    )!;
    expect(targets[0]).toMatchObject({
      Arn: { 'Fn::GetAtt': [cleanupFn, 'Arn'] },
      RetryPolicy: { MaximumRetryAttempts: 8, MaximumEventAgeInSeconds: 6 * 3600 },
      DeadLetterConfig: { Arn: { 'Fn::GetAtt': [expect.stringMatching(/^CleanupDlq/), 'Arn'] } },
    });
    // EventBridge may invoke it; cleanup failures after the function's own retries land in the DLQ.
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: { 'Fn::GetAtt': [cleanupFn, 'Arn'] },
      Principal: 'events.amazonaws.com',
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: cleanupFn },
      MaximumRetryAttempts: 2,
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [Match.stringLikeRegexp('^CleanupDlq'), 'Arn'] } },
      },
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it('sends every alarm (cleanup failed, run failed, schedule failed, regression) to one encrypted topic', () => {
    const [[topicId, topic]] = ofType('AWS::SNS::Topic');
    const [[keyId, key]] = ofType('AWS::KMS::Key').filter(([, k]) =>
      String(k.Properties.Description).includes('alarm topic'),
    );
    expect(topic.Properties.KmsMasterKeyId).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
    expect(key.Properties.EnableKeyRotation).toBe(true);
    const alarms = ofType('AWS::CloudWatch::Alarm');
    expect(alarms.map(([id]) => id.replace(/[0-9A-F]{8}$/, '')).sort()).toEqual([
      'CleanupFailedAlarm',
      'RegressionAlarm',
      'RunFailedAlarm',
      'ScheduleFailedAlarm',
    ]);
    for (const [, a] of alarms) expect(a.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
    // The run alarm counts every way an execution can end without finishing.
    const [[, run]] = alarms.filter(([id]) => id.startsWith('RunFailedAlarm'));
    const names = (run.Properties.Metrics as { MetricStat?: { Metric: { MetricName: string } } }[])
      .flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric.MetricName] : []))
      .sort();
    expect(names).toEqual(['ExecutionsAborted', 'ExecutionsFailed', 'ExecutionsTimedOut']);
    // CloudWatch may use the key and publish, but only for this account's alarms.
    const cw = (doc: unknown) =>
      (doc as { Statement: Record<string, unknown>[] }).Statement.find(
        (st) => (st.Principal as { Service?: string })?.Service === 'cloudwatch.amazonaws.com',
      );
    const keyStatement = cw(key.Properties.KeyPolicy);
    expect(actionsOf(keyStatement as Record<string, unknown>).sort()).toEqual(['kms:Decrypt', 'kms:GenerateDataKey*']);
    expect(keyStatement?.Condition).toMatchObject({ StringEquals: { 'aws:SourceAccount': '123456789012' } });
    const [[, policy]] = ofType('AWS::SNS::TopicPolicy');
    expect(actionsOf(cw(policy.Properties.PolicyDocument) as Record<string, unknown>)).toEqual(['sns:Publish']);
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'netops@example.com',
      TopicArn: { Ref: topicId },
    });
  });

  it('gives the cleanup the finish tasks route, store and lock permissions, plus cancel and query to salvage a probing path', () => {
    const cleanup = statementsOf('Cleanup');
    const restore = statementsOf('RestoreRoutes');
    const routeStatement = (ss: Record<string, unknown>[]) => ss.find((s) => actionsOf(s).includes('ec2:ReplaceRoute'));
    expect(routeStatement(cleanup)).toEqual(routeStatement(restore));
    expect(routeStatement(cleanup)?.Condition).toEqual({
      StringEquals: { [`aws:ResourceTag/${MANAGED_TAG.key}`]: MANAGED_TAG.value },
    });
    const actions = cleanup.flatMap(actionsOf);
    for (const a of [
      's3:GetObject',
      's3:PutObject',
      'dynamodb:GetItem',
      'dynamodb:DeleteItem',
      'sqs:SendMessage',
      'ssm:CancelCommand',
      'athena:StartQueryExecution',
    ]) {
      expect(actions).toContain(a);
    }
    for (const a of ['ssm:SendCommand', 'ec2:StopInstances']) {
      expect(actions).not.toContain(a);
    }
  });

  it('lets lock holders check whether the holding execution ended, and probe pollers cancel commands', () => {
    const describe = statementsOf('ValidatePlan').find((s) => actionsOf(s).includes('states:DescribeExecution'));
    expect(JSON.stringify(describe?.Resource)).toContain(':execution:Pathbench-Measurement:*');
    expect(statementsOf('PollProbe').flatMap(actionsOf)).toContain('ssm:CancelCommand');
    expect(statementsOf('SummarizeRun').flatMap(actionsOf)).not.toContain('states:DescribeExecution');
  });

  it('lets SwapRoutes and SendProbe read who holds the run lock (they stop when their run lost it), and only read it', () => {
    for (const task of ['SwapRoutes', 'SendProbe']) {
      const actions = statementsOf(task).flatMap(actionsOf);
      expect(actions, task).toContain('dynamodb:GetItem');
      expect(actions, task).not.toContain('dynamodb:PutItem');
      expect(actions, task).not.toContain('dynamodb:DeleteItem');
    }
  });

  it('grants s3:DeleteObject only on parquet/*, to the functions that rewrite a Parquet copy', () => {
    const deleters = [...TASK_NAMES, 'Cleanup'].filter((t) =>
      statementsOf(t).flatMap(actionsOf).includes('s3:DeleteObject'),
    );
    expect(deleters.sort()).toEqual(['Cleanup', 'CollectOutput', 'RecordPathFailure']);
    const del = statementsOf('CollectOutput').filter((s) => actionsOf(s).includes('s3:DeleteObject'));
    expect(del).toHaveLength(1);
    expect(actionsOf(del[0])).toEqual(['s3:DeleteObject']);
    expect(JSON.stringify(del[0].Resource)).toMatch(/"\/parquet\/\*"\]/);
  });

  it('lets only PollProbe, SendProbe and the cleanup cancel a probe command: CancelCommand has no resource-level permissions', () => {
    const cancellers = [...TASK_NAMES, 'Cleanup'].filter((t) =>
      statementsOf(t).flatMap(actionsOf).includes('ssm:CancelCommand'),
    );
    expect(cancellers.sort()).toEqual(['Cleanup', 'PollProbe', 'SendProbe']);
    // On * and alone: no other action rides on that statement.
    const cancel = statementsOf('PollProbe').filter((s) => actionsOf(s).includes('ssm:CancelCommand'));
    expect(cancel).toHaveLength(1);
    expect(actionsOf(cancel[0])).toEqual(['ssm:CancelCommand']);
  });

  it('passes the allowed routes to the functions that check them (ValidatePlan, SwapRoutes), and lets ValidatePlan read routes only', () => {
    const fns = ofType('AWS::Lambda::Function').filter(([id]) => /^(ValidatePlan|SwapRoutes)Fn/.test(id));
    expect(fns).toHaveLength(2);
    for (const [, fn] of fns) {
      const vars = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(JSON.parse(vars.PATHBENCH_ALLOWED_ROUTES as string)).toEqual(ALLOWED_ROUTES);
      expect(JSON.parse(vars.PATHBENCH_ALLOWED_TARGETS as string)).toEqual(['10.1.0.0/16', 'target.example.internal']);
    }
    const validate = statementsOf('ValidatePlan').flatMap(actionsOf);
    expect(validate).toContain('ec2:DescribeRouteTables');
    expect(validate).not.toContain('ec2:ReplaceRoute');
  });

  it('a stack without allowedRoutes lets no function change a route, and refuses a malformed list at synth', () => {
    const app = new App({ outdir: mkdtempSync(path.join(tmpdir(), 'pb-cdk-')), context: NO_BUNDLING });
    const bare = new PipelineStack(app, 'Bare', { env: { account: '123456789012', region: 'ap-northeast-1' } });
    const policies = Template.fromStack(bare).findResources('AWS::IAM::Policy');
    const actions = Object.values(policies).flatMap((p) =>
      (p.Properties.PolicyDocument.Statement as Record<string, unknown>[]).flatMap(actionsOf),
    );
    for (const a of ['ec2:ReplaceRoute', 'ec2:CreateRoute', 'ec2:DeleteRoute']) expect(actions).not.toContain(a);
    // No allowedTargets: the functions get an empty list, and ValidatePlan allows no target.
    const validatePlan = Object.entries(Template.fromStack(bare).findResources('AWS::Lambda::Function')).find(([id]) =>
      id.startsWith('ValidatePlanFn'),
    );
    const env = (validatePlan![1].Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env.PATHBENCH_ALLOWED_TARGETS).toBe('[]');
    expect(() => new PipelineStack(new App(), 'BadTargets', { allowedTargets: ['169.254.0.0/99'] })).toThrow(
      /allowedTargets\[0\]: expected a CIDR/,
    );
    expect(
      () =>
        new PipelineStack(new App(), 'Bad', {
          allowedRoutes: [{ ...ALLOWED_ROUTES[0], destination: '10.1.0.0/99' }],
        }),
    ).toThrow(/allowedRoutes\[0\]\.destination/);
  });

  it('lets each client instance write raw output only under its own client= prefix', () => {
    const [[, policy]] = ofType('AWS::IAM::ManagedPolicy').filter(([id]) => id.startsWith('ClientInstancePolicy'));
    const statements = (policy.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement;
    const puts = statements.filter((s) => actionsOf(s).includes('s3:PutObject'));
    const onRaw = puts.filter((s) => JSON.stringify(s.Resource).includes('/raw/'));
    expect(onRaw).toHaveLength(2);
    for (const id of ['i-0aaaaaaaaaaaaaaa1', 'i-0bbbbbbbbbbbbbbb2']) {
      const mine = onRaw.find((s) => JSON.stringify(s.Resource).includes(`/client=${id}/`));
      expect(JSON.stringify(mine?.Resource)).toContain(`/raw/path=*/run=*/client=${id}/*`);
      expect(JSON.stringify(mine?.Condition)).toContain('ec2:SourceInstanceARN');
      expect(JSON.stringify(mine?.Condition)).toContain(`:instance/${id}`);
    }
    // No statement lets a client write raw/* of every path and run.
    expect(puts.some((s) => /\/raw\/\*"/.test(JSON.stringify(s.Resource)))).toBe(false);
  });

  it("derives every task's grants from the wiring table: a capability's actions appear exactly where it is needed", () => {
    // One marker action per capability that no other capability grants.
    const marker: Partial<Record<Capability, string>> = {
      plans: 'ssm:GetParameter',
      routes: 'ec2:ReplaceRoute',
      runner: 'ssm:SendCommand',
      'runner:cancel': 'ssm:CancelCommand',
      query: 'athena:StartQueryExecution',
      lock: 'dynamodb:DeleteItem',
      fleet: 'ec2:StopInstances',
      'fleet:read': 'ec2:DescribeInstanceTypes',
      parquet: 's3:DeleteObject',
    };
    for (const task of TASK_NAMES) {
      const actions = statementsOf(task).flatMap(actionsOf);
      const needs: readonly Capability[] = TASKS[task].needs;
      for (const [cap, action] of Object.entries(marker)) {
        expect(
          actions.includes(action),
          `${task} ${needs.includes(cap as Capability) ? 'needs' : 'must not get'} ${cap}`,
        ).toBe(needs.includes(cap as Capability));
      }
    }
  });

  it("lets BeginPath read the client's instance type and bandwidth, and nothing more of the fleet", () => {
    const begin = statementsOf('BeginPath');
    const describe = begin.find((s) => actionsOf(s).includes('ec2:DescribeInstanceTypes'));
    expect(describe?.Resource).toBe('*');
    expect(actionsOf(describe as Record<string, unknown>).sort()).toEqual([
      'ec2:DescribeAvailabilityZones',
      'ec2:DescribeInstanceTypes',
      'ec2:DescribeInstances',
      'ssm:DescribeInstanceInformation',
    ]);
    expect(begin.flatMap(actionsOf)).not.toContain('ec2:StopInstances');
    expect(statementsOf('CollectOutput').flatMap(actionsOf)).not.toContain('ec2:DescribeInstanceTypes');
  });

  it('has a lock table with TTL and point-in-time recovery', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
  });

  it('deploys the mesh machine: a Distributed Map over S3 round lists, child executions of itself', () => {
    const [meshId, mesh] = machineNamed('Mesh');
    expect(mesh.Properties.StateMachineName).toBe('Pathbench-Mesh');
    // The definition is statemachine/mesh.asl.json as an asset (test/statemachine/mesh.test.ts
    // checks it), every task placeholder substituted.
    expect(mesh.Properties.DefinitionS3Location ?? mesh.Properties.DefinitionString).toBeDefined();
    expect(Object.keys(mesh.Properties.DefinitionSubstitutions as object)).toContain('CollectOutput');
    const roleRef = (mesh.Properties.RoleArn as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
    const policies = ofType('AWS::IAM::Policy').filter(([, p]) =>
      (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleRef),
    );
    const statements = policies.flatMap(
      ([, p]) => (p.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement,
    );
    const text = JSON.stringify(statements);
    expect(text).toContain('states:StartExecution');
    expect(text).toContain('stateMachine:Pathbench-Mesh');
    expect(text).toContain('execution:Pathbench-Mesh/*');
    expect(text).toContain('s3:GetObject*');
    expect(text).toContain('/runs/*');
    expect(meshId).toBeDefined();
  });

  it('lets the machines that run ProbeTask (path, mesh) send task-client probes (SendMessage only) to pathbench-client-* queues of its account, and tells the functions the account', () => {
    const machines = ofType('AWS::StepFunctions::StateMachine');
    expect(machines).toHaveLength(4);
    for (const [, m] of machines) {
      const statements = machineStatements(m);
      const sqs = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('sqs:')));
      if (!['Pathbench-Path', 'Pathbench-Mesh'].includes(String(m.Properties.StateMachineName))) {
        expect(sqs, String(m.Properties.StateMachineName)).toEqual([]);
        continue;
      }
      expect(sqs).toHaveLength(1);
      expect(actionsOf(sqs[0])).toEqual(['sqs:SendMessage']);
      expect(JSON.stringify(sqs[0].Resource)).toContain(':sqs:ap-northeast-1:123456789012:pathbench-client-*');
    }
    // No function sends to a client queue (the state machine does, with its task token).
    for (const name of TASK_NAMES) expect(JSON.stringify(statementsOf(name))).not.toContain('sqs:');
    const fns = ofType('AWS::Lambda::Function');
    expect(fns.length).toBeGreaterThan(0);
    for (const [, f] of fns) {
      const vars = (f.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables;
      if (vars?.PATHBENCH_BUCKET) expect(vars.PATHBENCH_ACCOUNT_ID).toBe('123456789012');
    }
    // An explicit list replaces the pattern, and is checked at synth.
    const bare = new Stack(new App(), 'Bare', { env: { account: '123456789012', region: 'ap-northeast-1' } });
    const arn = 'arn:aws:sqs:ap-northeast-1:123456789012:pathbench-client-seed002-client';
    expect(clientQueueGrant(bare, [arn, arn])).toEqual({ resources: [arn] });
    expect(clientQueueGrant(bare, undefined).wildcard).toBe(
      'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:sqs:ap-northeast-1:123456789012:pathbench-client-*]',
    );
    expect(() => clientQueueGrant(bare, ['https://sqs.ap-northeast-1.amazonaws.com/123456789012/q'])).toThrow(
      /clientQueueArns: expected SQS queue ARNs/,
    );
  });

  it('deploys the agent to each mesh region: a named document and the same bundle key, found by the functions', () => {
    expect(agentStacks.map((s) => [s.stackName, s.region])).toEqual(
      AGENT_REGIONS.map((r) => [`Pathbench-Agent-${r}`, r]),
    );
    for (const s of agentStacks) {
      const t = Template.fromStack(s);
      t.hasResourceProperties('AWS::SSM::Document', {
        Name: 'Pathbench-Probe',
        DocumentType: 'Command',
        UpdateMethod: 'NewVersion',
      });
      // The same probe document as the pipeline stack's own.
      const [[, own]] = ofType('AWS::SSM::Document');
      const [regional] = Object.values(t.findResources('AWS::SSM::Document')) as Resource[];
      expect(regional.Properties.Content).toEqual(own.Properties.Content);
      expect(s.agentAsset.s3ObjectKey).toBe(stack.agentAsset.s3ObjectKey);
    }
    // The functions get the map: document name and that region's CDK assets bucket.
    const [[, fn]] = ofType('AWS::Lambda::Function').filter(([id]) => id.startsWith('SendProbeFn'));
    const vars = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(JSON.parse(String(vars.PATHBENCH_PROBE_REGIONS))).toEqual(
      Object.fromEntries(
        AGENT_REGIONS.map((r) => [
          r,
          { documentName: 'Pathbench-Probe', agentBucket: `cdk-hnb659fds-assets-123456789012-${r}` },
        ]),
      ),
    );
    // Client instances may read the bundle's copy in each agent region.
    const [[, policy]] = ofType('AWS::IAM::ManagedPolicy').filter(([id]) => id.startsWith('ClientInstancePolicy'));
    for (const r of AGENT_REGIONS) {
      expect(JSON.stringify(policy.Properties.PolicyDocument)).toContain(
        `:s3:::cdk-hnb659fds-assets-123456789012-${r}/${stack.agentAsset.s3ObjectKey}`,
      );
    }
  });

  it('passes cdk-nag AwsSolutions with zero unacknowledged errors', () => {
    for (const s of [stack, ...agentStacks]) {
      const report = new AwsSolutionsChecks().validateScope(s);
      const errors = report.violations
        .filter((v) => v.severity === 'error')
        .map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`);
      expect(errors, s.stackName).toEqual([]);
    }
  });
});
