/**
 * The deployable pipeline, composed of its parts (infra/constructs/): the DataLake (buckets, Glue,
 * Athena), the Probe that runs on client instances (agent bundle, SSM document, client policy),
 * the Orchestration (run lock, one Lambda per task of the wiring table, the state machine and the
 * cleanup after executions that could not finish), the Schedule and the Alarms. The stack itself
 * adds the outputs the CLI reads.
 */
import { type CfnElement, CfnOutput, Names, Stack, type StackProps } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct, RootConstruct } from 'constructs';
import type { AllowedRoute } from '../core/route-policy.js';
import type { TaskName } from '../functions/wiring.js';
import { Alarms } from './constructs/alarms.js';
import { DataLake } from './constructs/data-lake.js';
import { Orchestration } from './constructs/orchestration.js';
import type { PathbenchFunction } from './constructs/pathbench-function.js';
import { Probe } from './constructs/probe.js';
import { Schedule, type ScheduleMachine } from './constructs/schedule.js';
import { TrendAlerts } from './constructs/trend-alerts.js';

export interface PipelineStackProps extends StackProps {
  /** EventBridge Scheduler expression, e.g. "cron(0 18 ? * SUN *)". */
  scheduleExpression?: string;
  /** The schedule is created DISABLED unless this is true. */
  scheduleEnabled?: boolean;
  /** Named plan (SSM /pathbench/plans/<name>) the schedule starts; default "default". */
  schedulePlanName?: string;
  /** An inline plan for the schedule instead of a named one. */
  schedulePlan?: Record<string, unknown>;
  /** The machine the stack's schedule starts: `mesh` for a mesh plan; default measurement. */
  scheduleMachine?: ScheduleMachine;
  /** IAM role ARNs of client instances: the client policy is attached to them. */
  clientRoleArns?: string[];
  /** Client instance ids: each may upload raw output only under its own prefix (docs/aws.md). */
  clientInstanceIds?: string[];
  /** Athena per-query scan limit; default 10 GiB. */
  bytesScannedCutoffPerQuery?: number;
  /** Glue database name; default "pathbench". */
  databaseName?: string;
  /** Path of the agent bundle; default dist/agent.cjs, built when missing or stale (infra/infra-paths.ts agentBundle). */
  agentBundlePath?: string;
  /** An e-mail address subscribed to the alarm topic (it must confirm the subscription). */
  alarmEmail?: string;
  /**
   * The route changes runs may make: route table, destination and the targets it may point at
   * (docs/aws.md "Who can change which route"). None when absent: plans with routes are refused.
   */
  allowedRoutes?: readonly AllowedRoute[];
  /**
   * The targets runs may probe: CIDRs for addresses, names for hostnames (docs/aws.md "Who can
   * be a target"). None when absent: every plan is refused.
   */
  allowedTargets?: readonly string[];
  /** The cost guard's default budget in USD (context budgetUsd), enforced by ValidatePlan. */
  budgetUsd?: number;
  /** The clients' instance type the cost estimate prices (context clientInstanceType). */
  clientInstanceType?: string;
  /** Task-client queue ARNs the state machines may send probes to (context clientQueueArns); default `pathbench-client-*` here. */
  clientQueueArns?: string[];
  /**
   * The other regions the agent is deployed to (agent region stacks, infra/agent-region-stack.ts):
   * the functions send probes there with that region's document and bundle, and only there.
   */
  agentRegions?: readonly string[];
}

/** The parts of the stack: construct tree groups whose ids stay out of logical IDs. */
const PARTS = [DataLake, Probe, Orchestration, Schedule, Alarms, TrendAlerts];

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
  /** Regression events → the alarm topic; the alarm on the regression count. */
  readonly regressionRule: events.Rule;
  readonly regressionAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: PipelineStackProps = {}) {
    super(scope, id, props);

    const lake = new DataLake(this, 'DataLake', {
      databaseName: props.databaseName,
      bytesScannedCutoffPerQuery: props.bytesScannedCutoffPerQuery,
    });
    const probe = new Probe(this, 'Probe', {
      bucket: lake.bucket,
      agentBundlePath: props.agentBundlePath,
      clientRoleArns: props.clientRoleArns,
      clientInstanceIds: props.clientInstanceIds,
      agentRegions: props.agentRegions,
    });
    const run = new Orchestration(this, 'Orchestration', {
      lake,
      probe,
      allowedRoutes: props.allowedRoutes,
      allowedTargets: props.allowedTargets,
      budgetUsd: props.budgetUsd,
      clientInstanceType: props.clientInstanceType,
      clientQueueArns: props.clientQueueArns,
    });
    const schedule = new Schedule(this, 'Schedule', {
      stateMachine: run.stateMachine,
      meshStateMachine: run.meshStateMachine,
      machine: props.scheduleMachine,
      expression: props.scheduleExpression,
      enabled: props.scheduleEnabled,
      planName: props.schedulePlanName,
      plan: props.schedulePlan,
    });
    const alarms = new Alarms(this, 'Alarms', {
      email: props.alarmEmail,
      stateMachine: run.stateMachine,
      cleanupDlq: run.cleanupDlq,
      scheduleDlq: schedule.dlq,
    });
    const trendAlerts = new TrendAlerts(this, 'TrendAlerts', { topic: alarms.topic });

    this.bucket = lake.bucket;
    this.workgroupName = lake.workgroupName;
    this.databaseName = lake.databaseName;
    this.agentAsset = probe.agentAsset;
    this.probeDocument = probe.document;
    this.clientInstancePolicy = probe.clientInstancePolicy;
    this.lockTable = run.lockTable;
    this.functions = run.functions;
    this.stateMachine = run.stateMachine;
    this.cleanupFunction = run.cleanupFunction;
    this.cleanupRule = run.cleanupRule;
    this.alarmTopic = alarms.topic;
    this.regressionRule = trendAlerts.rule;
    this.regressionAlarm = trendAlerts.alarm;

    // --- outputs (the CLI reads these, from CloudFormation or from /pathbench/config) -----------
    const outputs = {
      StateMachineArn: this.stateMachine.stateMachineArn,
      MeshStateMachineArn: run.meshStateMachine.stateMachineArn,
      BucketName: this.bucket.bucketName,
      WorkgroupName: this.workgroupName,
      DatabaseName: this.databaseName,
      ProbeDocumentName: this.probeDocument.ref,
      LockTableName: this.lockTable.tableName,
      CleanupDlqUrl: run.cleanupDlq.queueUrl,
      AlarmTopicArn: this.alarmTopic.topicArn,
      SchedulerRoleArn: schedule.schedulerRole.roleArn,
      ScheduleDlqArn: schedule.dlq.queueArn,
      ScheduleGroupName: schedule.group.scheduleGroupName,
      ClientInstancePolicyArn: this.clientInstancePolicy.managedPolicyArn,
    };
    for (const [k, v] of Object.entries(outputs)) new CfnOutput(this, k, { value: v });
    new ssm.StringParameter(this, 'ConfigParameter', {
      parameterName: '/pathbench/config',
      description: 'pathbench stack outputs for the CLI (JSON)',
      stringValue: this.toJsonString(outputs),
    });
  }

  /**
   * Logical IDs as if the parts' resources sat directly in the stack, as they did before the stack
   * was split into parts: a changed logical ID replaces the resource on deploy, and the data
   * bucket holds the measurements. So ids must be unique across parts (a duplicate fails synth).
   */
  protected override allocateLogicalId(element: CfnElement): string {
    const scopes = element.node.scopes;
    const below = scopes.slice(scopes.indexOf(this) + 1);
    const ids = below.filter((s, i) => !(i === 0 && PARTS.some((P) => s instanceof P))).map((s) => s.node.id);
    return uniqueIdOf(ids);
  }
}

/** CDK's unique id for a construct at `ids` below the root (the same scheme Stack uses for logical IDs). */
function uniqueIdOf(ids: string[]): string {
  let scope: Construct = new RootConstruct();
  for (const id of ids) scope = new Construct(scope, id);
  return Names.uniqueId(scope);
}
