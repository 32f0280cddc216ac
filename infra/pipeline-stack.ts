/**
 * The deployable pipeline: data bucket (+ access-log bucket), Glue samples table, Athena
 * workgroup and named queries, one Lambda per task of the wiring table with grants derived from
 * its needs, the state machine from statemachine/ with substitutions from the same table, the
 * EventBridge schedule, the SSM probe document, the agent bundle asset and the run-lock table,
 * and the cleanup rule: when an execution ends FAILED, TIMED_OUT or ABORTED (where the ASL's own
 * finish states may never have run), a Lambda restores its routes and releases its lock.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  ArnFormat,
  Aws,
  type CfnElement,
  CfnOutput,
  Duration,
  RemovalPolicy,
  Stack,
  type StackProps,
  Validations,
} from 'aws-cdk-lib';
import * as athena from 'aws-cdk-lib/aws-athena';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as eventTargets from 'aws-cdk-lib/aws-events-targets';
import * as glue from 'aws-cdk-lib/aws-glue';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambdaDestinations from 'aws-cdk-lib/aws-lambda-destinations';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as targets from 'aws-cdk-lib/aws-scheduler-targets';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct, IConstruct } from 'constructs';
import { ENV } from '../functions/adapters/aws/deps.js';
import { DEFAULT_PLAN_PREFIX } from '../functions/adapters/aws/plans.js';
import { probeDocumentContent } from '../functions/adapters/aws/probe-document.js';
import { loadQuery, samplesColumns } from '../functions/sql.js';
import { type Capability, TASK_NAMES, TASKS, type TaskName } from '../functions/wiring.js';
import { PathbenchFunction } from './constructs/pathbench-function.js';
import { AGENT_BUNDLE, ASL_FILE, QUERIES_DIR } from './paths.js';

/** Tag every instance and route table pathbench may touch; IAM only allows those. */
export const MANAGED_TAG = { key: 'pathbench:managed', value: 'true' } as const;

/** Object prefixes of the data bucket (core/keys.ts) plus SSM command output. */
const DATA_PREFIXES = ['runs/', 'specs/', 'raw/', 'samples/', 'reports/', 'ssm-output/'] as const;
const ATHENA_RESULTS = 'athena-results/';

export interface PipelineStackProps extends StackProps {
  /** EventBridge Scheduler expression, e.g. "cron(0 18 ? * SUN *)". */
  scheduleExpression?: string;
  /** The schedule is created DISABLED unless this is true. */
  scheduleEnabled?: boolean;
  /** Named plan (SSM /pathbench/plans/<name>) the schedule starts; default "default". */
  schedulePlanName?: string;
  /** An inline plan for the schedule instead of a named one. */
  schedulePlan?: Record<string, unknown>;
  /** IAM role ARNs of client instances: the client policy is attached to them. */
  clientRoleArns?: string[];
  /** Athena per-query scan limit; default 10 GiB. */
  bytesScannedCutoffPerQuery?: number;
  /** Glue database name; default "pathbench". */
  databaseName?: string;
  /** Path of the agent bundle; default dist/agent.cjs (built by `node scripts/build.mjs`). */
  agentBundlePath?: string;
  /** An e-mail address subscribed to the alarm topic (it must confirm the subscription). */
  alarmEmail?: string;
}

/** Execution statuses after which the ASL's own RestoreRoutes/ReleaseLock may not have run. */
export const CLEANUP_STATUSES = ['FAILED', 'TIMED_OUT', 'ABORTED'] as const;

/** The cleanup Lambda: not a state machine task, so it is wired here rather than in wiring.ts. */
const CLEANUP = {
  handler: 'CleanupAfterExecution',
  needs: ['store:read', 'store:write', 'routes', 'lock'] as Capability[],
  timeoutSeconds: 180,
  description: 'after a FAILED/TIMED_OUT/ABORTED execution: restore its routes, mark it failed, release its lock',
};

/** The state machine definition with every `${Task}` placeholder a key of the wiring table. */
export function aslPlaceholders(definition: string): string[] {
  return [...new Set([...definition.matchAll(/\$\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]))].sort();
}

export class PipelineStack extends Stack {
  readonly bucket: s3.Bucket;
  readonly stateMachine: sfn.StateMachine;
  readonly functions: Record<TaskName, PathbenchFunction>;
  readonly cleanupFunction: PathbenchFunction;
  readonly cleanupRule: events.Rule;
  readonly lockTable: dynamodb.Table;
  readonly probeDocument: ssm.CfnDocument;
  readonly agentAsset: s3assets.Asset;
  /** Attach to a client instance's role: read the agent and specs, write raw output. */
  readonly clientInstancePolicy: iam.ManagedPolicy;
  readonly workgroupName: string;
  readonly databaseName: string;
  /** Every pathbench alarm notifies this topic. */
  readonly alarmTopic: sns.Topic;

  constructor(scope: Construct, id: string, props: PipelineStackProps = {}) {
    super(scope, id, props);

    // --- storage -------------------------------------------------------------------------
    const accessLogs = new s3.Bucket(this, 'AccessLogs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [{ expiration: Duration.days(90) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    ack(accessLogs, 'This is the access-log bucket; logging it into itself would loop.', 'AwsSolutions-S1');
    this.bucket = new s3.Bucket(this, 'Data', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: true,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'data/',
      lifecycleRules: [
        { noncurrentVersionExpiration: Duration.days(30), abortIncompleteMultipartUploadAfter: Duration.days(7) },
        { prefix: ATHENA_RESULTS, expiration: Duration.days(30) },
        { prefix: 'ssm-output/', expiration: Duration.days(30) },
      ],
      // Measurements are the product; never delete them with the stack.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const bucket = this.bucket;

    this.lockTable = new dynamodb.Table(this, 'RunLock', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: 'expiresAt',
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy: RemovalPolicy.DESTROY,
    });

    // --- Glue + Athena -----------------------------------------------------------------
    this.databaseName = props.databaseName ?? 'pathbench';
    const database = new glue.CfnDatabase(this, 'Database', {
      catalogId: Aws.ACCOUNT_ID,
      databaseInput: { name: this.databaseName, description: 'pathbench measurements' },
    });
    const { columns, partitions } = samplesColumns();
    const table = new glue.CfnTable(this, 'SamplesTable', {
      catalogId: Aws.ACCOUNT_ID,
      databaseName: this.databaseName,
      tableInput: {
        name: 'samples',
        description: 'one normalized measurement per line (queries/samples.ddl.sql)',
        tableType: 'EXTERNAL_TABLE',
        parameters: { classification: 'json', EXTERNAL: 'TRUE' },
        partitionKeys: partitions.map((c) => ({ name: c.name, type: c.type })),
        storageDescriptor: {
          columns: columns.map((c) => ({ name: c.name, type: c.type })),
          location: bucket.s3UrlForObject('samples/'),
          inputFormat: 'org.apache.hadoop.mapred.TextInputFormat',
          outputFormat: 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat',
          serdeInfo: { serializationLibrary: 'org.openx.data.jsonserde.JsonSerDe' },
        },
      },
    });
    table.node.addDependency(database);

    this.workgroupName = 'pathbench';
    const workgroup = new athena.CfnWorkGroup(this, 'Workgroup', {
      name: this.workgroupName,
      description: 'pathbench queries (results encrypted under athena-results/)',
      state: 'ENABLED',
      recursiveDeleteOption: true,
      workGroupConfiguration: {
        enforceWorkGroupConfiguration: true,
        publishCloudWatchMetricsEnabled: true,
        bytesScannedCutoffPerQuery: props.bytesScannedCutoffPerQuery ?? 10 * 1024 ** 3,
        engineVersion: { selectedEngineVersion: 'Athena engine version 3' },
        resultConfiguration: {
          outputLocation: bucket.s3UrlForObject(ATHENA_RESULTS),
          encryptionConfiguration: { encryptionOption: 'SSE_S3' },
        },
      },
    });
    for (const name of sqlFiles(QUERIES_DIR)) {
      const q = new athena.CfnNamedQuery(this, `Query${name.replace(/[^A-Za-z0-9]/g, '_')}`, {
        name: `pathbench-${name.replace(/[/.]/g, '-')}`,
        description: `queries/${name}.sql`,
        database: this.databaseName,
        workGroup: this.workgroupName,
        queryString: loadQuery(name, { database: this.databaseName, location: bucket.s3UrlForObject('samples/') }),
      });
      q.node.addDependency(workgroup);
      q.node.addDependency(database);
    }

    // --- probe agent + SSM document -------------------------------------------------------
    this.agentAsset = new s3assets.Asset(this, 'AgentBundle', { path: props.agentBundlePath ?? AGENT_BUNDLE });
    this.probeDocument = new ssm.CfnDocument(this, 'ProbeDocument', {
      documentType: 'Command',
      documentFormat: 'JSON',
      content: probeDocumentContent(),
    });
    const documentArn = Stack.of(this).formatArn({
      service: 'ssm',
      resource: 'document',
      resourceName: this.probeDocument.ref,
    });
    this.clientInstancePolicy = new iam.ManagedPolicy(this, 'ClientInstancePolicy', {
      description: 'pathbench client instance: read the agent and specs, write raw probe output',
      statements: [
        new iam.PolicyStatement({
          actions: ['s3:GetObject'],
          resources: [
            this.agentAsset.bucket.arnForObjects(this.agentAsset.s3ObjectKey),
            bucket.arnForObjects('specs/*'),
          ],
        }),
        new iam.PolicyStatement({
          actions: ['s3:PutObject'],
          resources: [bucket.arnForObjects('raw/*'), bucket.arnForObjects('ssm-output/*')],
        }),
      ],
      roles: (props.clientRoleArns ?? []).map((arn, i) => iam.Role.fromRoleArn(this, `ClientRole${i}`, arn)),
    });
    ack(
      this.clientInstancePolicy,
      'Specs are read and raw outputs written per run and path; keys are only known at run time.',
      ...['specs', 'raw', 'ssm-output'].map((p) => `AwsSolutions-IAM5[Resource::${arnRef(bucket)}/${p}/*]`),
    );

    // --- functions ------------------------------------------------------------------------
    // A fixed name, so functions can know the state machine's ARN without a reference to it
    // (the state machine already references every function: a Ref back would be a cycle).
    const stateMachineName = `${this.stackName}-Measurement`.slice(0, 80);
    const stateMachineArn = this.formatArn({
      service: 'states',
      resource: 'stateMachine',
      resourceName: stateMachineName,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const environment: Record<string, string> = {
      [ENV.bucket]: bucket.bucketName,
      [ENV.workgroup]: this.workgroupName,
      [ENV.database]: this.databaseName,
      [ENV.table]: 'samples',
      [ENV.lockTable]: this.lockTable.tableName,
      [ENV.document]: this.probeDocument.ref,
      [ENV.agentBucket]: this.agentAsset.s3BucketName,
      [ENV.agentKey]: this.agentAsset.s3ObjectKey,
      [ENV.planPrefix]: DEFAULT_PLAN_PREFIX,
      [ENV.stateMachineArn]: stateMachineArn,
    };
    const grants = new Grants(this, { documentArn, workgroup, tableName: 'samples', stateMachineName });
    const functions = {} as Record<TaskName, PathbenchFunction>;
    for (const name of TASK_NAMES) {
      const task = TASKS[name];
      const f = new PathbenchFunction(this, name, {
        handler: name,
        description: task.description,
        timeoutSeconds: task.timeoutSeconds,
        environment,
      });
      grants.apply(f, name, task.needs);
      functions[name] = f;
    }
    this.functions = functions;

    // --- state machine --------------------------------------------------------------------
    const definition = readFileSync(ASL_FILE, 'utf8');
    const unknown = aslPlaceholders(definition).filter((p) => !(p in TASKS));
    if (unknown.length > 0) {
      throw new Error(
        `statemachine/measurement.asl.json uses placeholders not in functions/wiring.ts: ${unknown.join(', ')}`,
      );
    }
    const smLogs = new logs.LogGroup(this, 'StateMachineLogs', {
      retention: logs.RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.stateMachine = new sfn.StateMachine(this, 'Measurement', {
      stateMachineName,
      comment: 'pathbench measurement pipeline',
      definitionBody: sfn.DefinitionBody.fromFile(ASL_FILE),
      definitionSubstitutions: Object.fromEntries(TASK_NAMES.map((n) => [n, functions[n].fn.functionArn])),
      logs: { destination: smLogs, level: sfn.LogLevel.ALL, includeExecutionData: true },
      tracingEnabled: true,
      timeout: Duration.hours(24),
    });
    for (const name of TASK_NAMES) functions[name].fn.grantInvoke(this.stateMachine);
    ack(
      this.stateMachine,
      'Invoke grants cover function versions (arn:…:*); log delivery and X-Ray actions have no resource-level permissions.',
      'AwsSolutions-IAM5[Resource::*]',
      ...TASK_NAMES.map((n) => `AwsSolutions-IAM5[Resource::${arnRef(functions[n].fn)}:*]`),
    );

    // --- cleanup after executions that could not finish themselves ------------------------------
    this.cleanupFunction = new PathbenchFunction(this, 'Cleanup', {
      handler: CLEANUP.handler,
      description: CLEANUP.description,
      timeoutSeconds: CLEANUP.timeoutSeconds,
      environment,
    });
    grants.apply(this.cleanupFunction, CLEANUP.handler, CLEANUP.needs);
    const cleanupDlq = new sqs.Queue(this, 'CleanupDlq', {
      enforceSSL: true,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      retentionPeriod: Duration.days(14),
    });
    ack(cleanupDlq, 'This queue is itself the dead-letter queue of the cleanup.', 'AwsSolutions-SQS3');
    // EventBridge invokes asynchronously: its DLQ catches events it could not deliver, the
    // function's on-failure destination catches events whose cleanup kept failing.
    this.cleanupFunction.fn.configureAsyncInvoke({
      retryAttempts: 2,
      maxEventAge: Duration.hours(6),
      onFailure: new lambdaDestinations.SqsDestination(cleanupDlq),
    });
    this.cleanupRule = new events.Rule(this, 'CleanupRule', {
      description: 'pathbench: clean up routes and the run lock after an execution that did not finish itself',
      eventPattern: {
        source: ['aws.states'],
        detailType: ['Step Functions Execution Status Change'],
        detail: { stateMachineArn: [this.stateMachine.stateMachineArn], status: [...CLEANUP_STATUSES] },
      },
      targets: [
        new eventTargets.LambdaFunction(this.cleanupFunction.fn, {
          retryAttempts: 8,
          maxEventAge: Duration.hours(6),
          deadLetterQueue: cleanupDlq,
        }),
      ],
    });
    // --- alarms: one encrypted topic that every alarm notifies ------------------------------
    const alarmKey = new kms.Key(this, 'AlarmTopicKey', {
      description: 'pathbench: encrypts the alarm topic',
      enableKeyRotation: true,
    });
    // CloudWatch needs the key to publish to an encrypted topic, and only for this account's alarms.
    const fromAlarms = {
      StringEquals: { 'aws:SourceAccount': this.account },
      ArnLike: { 'aws:SourceArn': `arn:${this.partition}:cloudwatch:${this.region}:${this.account}:alarm:*` },
    };
    alarmKey.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: fromAlarms,
      }),
    );
    this.alarmTopic = new sns.Topic(this, 'AlarmTopic', {
      displayName: 'pathbench alarms',
      masterKey: alarmKey,
      enforceSSL: true,
    });
    this.alarmTopic.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.alarmTopic.topicArn],
        conditions: fromAlarms,
      }),
    );
    if (props.alarmEmail) this.alarmTopic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));
    const notify = new cwActions.SnsAction(this.alarmTopic);

    // Routes left swapped or a run lock left held: somebody must look.
    const cleanupAlarm = new cloudwatch.Alarm(this, 'CleanupFailedAlarm', {
      alarmDescription:
        'pathbench cleanup failed: routes may still be swapped (see the CleanupDlq message and the run manifest)',
      metric: cleanupDlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    cleanupAlarm.addAlarmAction(notify);
    // A run that ended FAILED, TIMED_OUT or ABORTED (a rejected plan included): the weekly
    // numbers are missing or partial.
    const runAlarm = new cloudwatch.Alarm(this, 'RunFailedAlarm', {
      alarmDescription:
        'pathbench run did not finish (failed, timed out or aborted): see the execution and its manifest',
      metric: new cloudwatch.MathExpression({
        expression: 'failed + timedOut + aborted',
        usingMetrics: {
          failed: this.stateMachine.metricFailed({ period: Duration.minutes(5) }),
          timedOut: this.stateMachine.metricTimedOut({ period: Duration.minutes(5) }),
          aborted: this.stateMachine.metricAborted({ period: Duration.minutes(5) }),
        },
        period: Duration.minutes(5),
      }),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    runAlarm.addAlarmAction(notify);

    // --- schedule -------------------------------------------------------------------------
    const dlq = new sqs.Queue(this, 'ScheduleDlq', {
      enforceSSL: true,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      retentionPeriod: Duration.days(14),
    });
    ack(dlq, 'This queue is itself the dead-letter queue of the schedule.', 'AwsSolutions-SQS3');
    // The scheduler could not start a run: this week's numbers are missing.
    new cloudwatch.Alarm(this, 'ScheduleFailedAlarm', {
      alarmDescription: 'pathbench schedule could not start a run (see the ScheduleDlq message)',
      metric: dlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    }).addAlarmAction(notify);
    const input = props.schedulePlan ? { plan: props.schedulePlan } : { planName: props.schedulePlanName ?? 'default' };
    new scheduler.Schedule(this, 'Schedule', {
      description: 'pathbench: scheduled measurement run',
      schedule: scheduler.ScheduleExpression.expression(props.scheduleExpression ?? 'cron(0 18 ? * SUN *)'),
      enabled: props.scheduleEnabled ?? false,
      target: new targets.StepFunctionsStartExecution(this.stateMachine, {
        input: scheduler.ScheduleTargetInput.fromObject(input),
        deadLetterQueue: dlq,
        retryAttempts: 2,
        maxEventAge: Duration.hours(1),
      }),
    });

    // --- outputs (the CLI reads these, from CloudFormation or from /pathbench/config) -----------
    const outputs = {
      StateMachineArn: this.stateMachine.stateMachineArn,
      BucketName: bucket.bucketName,
      WorkgroupName: this.workgroupName,
      DatabaseName: this.databaseName,
      ProbeDocumentName: this.probeDocument.ref,
      LockTableName: this.lockTable.tableName,
      CleanupDlqUrl: cleanupDlq.queueUrl,
      AlarmTopicArn: this.alarmTopic.topicArn,
      ClientInstancePolicyArn: this.clientInstancePolicy.managedPolicyArn,
    };
    for (const [k, v] of Object.entries(outputs)) new CfnOutput(this, k, { value: v });
    new ssm.StringParameter(this, 'ConfigParameter', {
      parameterName: '/pathbench/config',
      description: 'pathbench stack outputs for the CLI (JSON)',
      stringValue: Stack.of(this).toJsonString(outputs),
    });
  }
}

/** Every .sql file under queries/, as a loadQuery name ("percentiles", "views/x"). */
function sqlFiles(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (e.isDirectory()) out.push(...sqlFiles(path.join(dir, e.name), `${prefix}${e.name}/`));
    else if (e.name.endsWith('.sql')) out.push(`${prefix}${e.name.slice(0, -4)}`);
  }
  return out;
}

/** Acknowledge cdk-nag findings (exact finding ids) on one construct and its children. */
function ack(scope: IConstruct, reason: string, ...ids: string[]): void {
  for (const id of ids) Validations.of(scope).acknowledge({ id, reason });
}

/** How cdk-nag prints a construct's ARN attribute in findings: `<LogicalId.Arn>`. */
function arnRef(scope: IConstruct): string {
  const cfn = scope.node.defaultChild as CfnElement;
  return `<${Stack.of(scope).getLogicalId(cfn)}.Arn>`;
}

interface GrantContext {
  documentArn: string;
  workgroup: athena.CfnWorkGroup;
  tableName: string;
  stateMachineName: string;
}

/** Turns a task's `needs` into IAM statements (and nothing more), one capability at a time. */
class Grants {
  constructor(
    private readonly stack: PipelineStack,
    private readonly ctx: GrantContext,
  ) {}

  apply(f: PathbenchFunction, name: TaskName | typeof CLEANUP.handler, needs: readonly Capability[]): void {
    const set = new Set<string>(needs);
    // Only ValidatePlan resolves { planName } inputs.
    if (name === 'ValidatePlan') set.add('plans');
    const role = f.fn.role!;
    const add = (s: iam.PolicyStatementProps) => role.addToPrincipalPolicy(new iam.PolicyStatement(s));
    const stack = this.stack;
    const bucket = stack.bucket;
    const wildcards: string[] = [];
    const tagged = { StringEquals: { [`aws:ResourceTag/${MANAGED_TAG.key}`]: MANAGED_TAG.value } };

    if (set.has('store:read')) {
      add({ actions: ['s3:GetObject'], resources: DATA_PREFIXES.map((p) => bucket.arnForObjects(`${p}*`)) });
      add({
        actions: ['s3:ListBucket'],
        resources: [bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': DATA_PREFIXES.map((p) => `${p}*`) } },
      });
    }
    if (set.has('store:write')) {
      add({
        actions: ['s3:PutObject', 's3:DeleteObject'],
        resources: DATA_PREFIXES.filter((p) => p !== 'ssm-output/').map((p) => bucket.arnForObjects(`${p}*`)),
      });
    }
    if (set.has('store:read') || set.has('store:write')) {
      wildcards.push(...DATA_PREFIXES.map((p) => `Resource::${arnRef(bucket)}/${p}*`));
    }
    if (set.has('fleet')) {
      add({
        actions: ['ec2:StopInstances', 'ec2:StartInstances'],
        resources: [`arn:${Aws.PARTITION}:ec2:*:${Aws.ACCOUNT_ID}:instance/*`],
        conditions: tagged,
      });
      add({
        actions: ['ec2:DescribeInstances', 'ec2:DescribeAvailabilityZones', 'ssm:DescribeInstanceInformation'],
        resources: ['*'],
      });
      wildcards.push('Resource::*', 'Resource::arn:<AWS::Partition>:ec2:*:<AWS::AccountId>:instance/*');
    }
    if (set.has('routes')) {
      add({
        actions: ['ec2:ReplaceRoute', 'ec2:CreateRoute', 'ec2:DeleteRoute'],
        resources: [`arn:${Aws.PARTITION}:ec2:*:${Aws.ACCOUNT_ID}:route-table/*`],
        conditions: tagged,
      });
      add({ actions: ['ec2:DescribeRouteTables'], resources: ['*'] });
      wildcards.push('Resource::*', 'Resource::arn:<AWS::Partition>:ec2:*:<AWS::AccountId>:route-table/*');
    }
    if (set.has('runner')) {
      add({ actions: ['ssm:SendCommand'], resources: [this.ctx.documentArn] });
      add({
        actions: ['ssm:SendCommand'],
        resources: [`arn:${Aws.PARTITION}:ec2:*:${Aws.ACCOUNT_ID}:instance/*`],
        conditions: { StringEquals: { [`ssm:resourceTag/${MANAGED_TAG.key}`]: MANAGED_TAG.value } },
      });
      // CancelCommand stops a probe that overran its deadline; like GetCommandInvocation it has no
      // resource-level permissions.
      add({ actions: ['ssm:GetCommandInvocation', 'ssm:ListCommands', 'ssm:CancelCommand'], resources: ['*'] });
      wildcards.push('Resource::*', 'Resource::arn:<AWS::Partition>:ec2:*:<AWS::AccountId>:instance/*');
    }
    if (set.has('query')) {
      const wg = stack.formatArn({ service: 'athena', resource: 'workgroup', resourceName: this.ctx.workgroup.name });
      add({
        actions: [
          'athena:StartQueryExecution',
          'athena:GetQueryExecution',
          'athena:GetQueryResults',
          'athena:StopQueryExecution',
        ],
        resources: [wg],
      });
      add({
        actions: [
          'glue:GetDatabase',
          'glue:GetTable',
          'glue:GetPartition',
          'glue:GetPartitions',
          'glue:CreatePartition',
          'glue:BatchCreatePartition',
        ],
        resources: [
          stack.formatArn({ service: 'glue', resource: 'catalog' }),
          stack.formatArn({ service: 'glue', resource: 'database', resourceName: stack.databaseName }),
          stack.formatArn({
            service: 'glue',
            resource: 'table',
            resourceName: `${stack.databaseName}/${this.ctx.tableName}`,
          }),
        ],
      });
      // Athena reads samples and writes results with the caller's credentials.
      add({
        actions: ['s3:GetObject'],
        resources: [bucket.arnForObjects('samples/*'), bucket.arnForObjects(`${ATHENA_RESULTS}*`)],
      });
      add({
        actions: ['s3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'],
        resources: [bucket.arnForObjects(`${ATHENA_RESULTS}*`)],
      });
      add({
        actions: ['s3:ListBucket', 's3:GetBucketLocation', 's3:ListBucketMultipartUploads'],
        resources: [bucket.bucketArn],
      });
      wildcards.push(...['samples/', ATHENA_RESULTS].map((p) => `Resource::${arnRef(bucket)}/${p}*`));
    }
    if (set.has('lock')) {
      stack.lockTable.grant(role, 'dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:DeleteItem');
      // A lock whose holder execution has ended may be taken over (functions/adapters/aws/lock.ts).
      add({
        actions: ['states:DescribeExecution'],
        resources: [
          `arn:${Aws.PARTITION}:states:${Aws.REGION}:${Aws.ACCOUNT_ID}:execution:${this.ctx.stateMachineName}:*`,
        ],
      });
      wildcards.push(
        `Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:${this.ctx.stateMachineName}:*`,
      );
    }
    if (set.has('plans')) {
      add({
        actions: ['ssm:GetParameter'],
        resources: [`arn:${Aws.PARTITION}:ssm:${Aws.REGION}:${Aws.ACCOUNT_ID}:parameter${DEFAULT_PLAN_PREFIX}*`],
      });
      wildcards.push('Resource::arn:<AWS::Partition>:ssm:<AWS::Region>:<AWS::AccountId>:parameter/pathbench/plans/*');
    }

    ack(
      f.fn,
      'AWSLambdaBasicExecutionRole only allows writing the function’s own logs.',
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
    );
    ack(
      f.fn,
      'Per-run keys under fixed prefixes; EC2/SSM Describe* and GetCommandInvocation have no resource-level permissions; Stop/Start, route changes and SendCommand are limited by the pathbench:managed tag.',
      ...[...new Set(wildcards)].map((w) => `AwsSolutions-IAM5[${w}]`),
    );
  }
}
