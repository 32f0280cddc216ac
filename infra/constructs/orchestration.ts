/**
 * Orchestration: the measurement run itself. The run-lock table, one Lambda per task of the
 * wiring table (functions/wiring.ts) with IAM derived from its needs (infra/grants.ts), the state
 * machines from statemachine/*.asl.json with every `${Task}` substituted by that task's function
 * and every `${…StateMachine}` by the machine it starts (the run starts its chunks, a chunk its
 * paths: statemachine/asl.ts), and the cleanup: when an execution ends FAILED, TIMED_OUT or ABORTED (where the ASL's
 * own finish states may never have run), a Lambda restores its routes and releases its lock.
 */
import { ArnFormat, Duration, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as eventTargets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambdaDestinations from 'aws-cdk-lib/aws-lambda-destinations';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { TASK_QUEUE_PREFIX } from '../../core/ecs-client.js';
import { type AllowedRoute, checkAllowedRoutes } from '../../core/route-policy.js';
import { parseSettings, settingsEnv } from '../../core/settings.js';
import { checkAllowedTargets } from '../../core/target-policy.js';
import { DEFAULT_PLAN_PREFIX, ENV } from '../../functions/adapters/aws/aws-deps.js';
import { CLEANUP, TASK_NAMES, TASKS, type TaskName } from '../../functions/wiring.js';
import {
  type DefinitionName,
  definitionFile,
  definitionText,
  loadDefinition,
  MACHINE_PLACEHOLDERS,
  placeholdersIn,
} from '../../statemachine/asl.js';
import { capabilityGrants, grantEngineCopy, grantNeeds } from '../grants.js';
import { ack, arnRef } from '../nag.js';
import type { DataLake } from './data-lake.js';
import { PathbenchFunction } from './pathbench-function.js';
import type { Probe } from './probe.js';

/** Execution statuses after which the ASL's own RestoreRoutes/ReleaseLock may not have run. */
export const CLEANUP_STATUSES = ['FAILED', 'TIMED_OUT', 'ABORTED'] as const;

/**
 * A machine with a Distributed Map starts its child executions as executions of itself, watches
 * and stops them (by its name: an ARN built from the name keeps the role free of a cycle).
 */
function grantChildExecutions(stack: Stack, machine: sfn.StateMachine, name: string): void {
  const arn = (resource: string, resourceName: string) =>
    stack.formatArn({ service: 'states', resource, resourceName, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
  machine.addToRolePolicy(
    new iam.PolicyStatement({ actions: ['states:StartExecution'], resources: [arn('stateMachine', name)] }),
  );
  machine.addToRolePolicy(
    new iam.PolicyStatement({
      actions: ['states:DescribeExecution', 'states:StopExecution'],
      resources: [arn('execution', `${name}/*`)],
    }),
  );
}

/**
 * A machine whose `states:startExecution.sync:2` Tasks start executions of `child` (by its name):
 * start them, watch and stop them, and the managed EventBridge rule Step Functions uses to hear
 * that they ended.
 */
function grantStartSync(stack: Stack, machine: sfn.StateMachine, child: string): void {
  const arn = (resource: string, resourceName: string) =>
    stack.formatArn({ service: 'states', resource, resourceName, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
  machine.addToRolePolicy(
    new iam.PolicyStatement({ actions: ['states:StartExecution'], resources: [arn('stateMachine', child)] }),
  );
  machine.addToRolePolicy(
    new iam.PolicyStatement({
      actions: ['states:DescribeExecution', 'states:StopExecution'],
      resources: [arn('execution', `${child}:*`)],
    }),
  );
  machine.addToRolePolicy(
    new iam.PolicyStatement({
      actions: ['events:PutTargets', 'events:PutRule', 'events:DescribeRule'],
      resources: [stack.formatArn({ service: 'events', resource: 'rule', resourceName: SYNC_EXECUTION_RULE })],
    }),
  );
}

/** The managed rule Step Functions keeps for `.sync` child executions. */
export const SYNC_EXECUTION_RULE = 'StepFunctionsGetEventsForStepFunctionsExecutionRule';

/** The cdk-nag finding grantStartSync causes (the started executions' name pattern). */
function startedExecutionsFinding(stack: Stack, child: string): string {
  const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
  const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
  return `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:${region}:${account}:execution:${child}:*]`;
}

/** The cdk-nag finding grantChildExecutions causes (the child executions' name pattern). */
function childExecutionsFinding(stack: Stack, name: string): string {
  const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
  const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
  return `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:${region}:${account}:execution:${name}/*]`;
}

export interface OrchestrationProps {
  lake: DataLake;
  probe: Probe;
  /** The route changes the operator allows (checked at synth); none when absent. */
  allowedRoutes?: readonly AllowedRoute[];
  /** The targets runs may probe: CIDRs and hostnames (checked at synth); none when absent. */
  allowedTargets?: readonly string[];
  /** The cost guard's stack default: budget in USD for plans without budgetUsd (none: no limit). */
  budgetUsd?: number;
  /** The clients' instance type the cost estimate prices (default c6i.large). */
  clientInstanceType?: string;
  /**
   * The queues of task clients (docs/aws.md, "Clients inside an ECS task") the state machines may
   * send probes to. Absent: any queue named `pathbench-client-*` (core/ecs-client.ts
   * taskQueueName) in the stack's account and region.
   */
  clientQueueArns?: readonly string[];
}

/** The queues the state machines may send task-client probes to, and the cdk-nag finding a name pattern causes. */
export function clientQueueGrant(
  stack: Stack,
  given: readonly string[] | undefined,
): { resources: string[]; wildcard?: string } {
  if (given && given.length > 0) {
    for (const a of given) {
      if (!/^arn:aws[a-z-]*:sqs:[a-z0-9-]+:\d{12}:[A-Za-z0-9_.-]{1,80}$/.test(a))
        throw new Error(`clientQueueArns: expected SQS queue ARNs (arn:aws:sqs:<region>:<account>:<name>), got ${a}`);
    }
    return { resources: [...new Set(given)] };
  }
  const resources = [stack.formatArn({ service: 'sqs', resource: `${TASK_QUEUE_PREFIX}*` })];
  const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
  const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
  return {
    resources,
    wildcard: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:sqs:${region}:${account}:${TASK_QUEUE_PREFIX}*]`,
  };
}

export class Orchestration extends Construct {
  readonly lockTable: dynamodb.Table;
  readonly functions: Record<TaskName, PathbenchFunction>;
  readonly stateMachine: sfn.StateMachine;
  /** The chunk machine (statemachine/chunk.asl.json): a run's chunk of paths, each a path execution. */
  readonly chunkStateMachine: sfn.StateMachine;
  /** The path machine (statemachine/path.asl.json): one path's steps. */
  readonly pathStateMachine: sfn.StateMachine;
  /**
   * The mesh machine (statemachine/mesh.asl.json): a mesh plan's rounds in order, the pairs of a
   * round in parallel as child executions of a Distributed Map reading the round's items from S3.
   */
  readonly meshStateMachine: sfn.StateMachine;
  readonly cleanupFunction: PathbenchFunction;
  readonly cleanupRule: events.Rule;
  /** Where cleanup events land that could not be delivered or kept failing. */
  readonly cleanupDlq: sqs.Queue;

  constructor(
    scope: Construct,
    id: string,
    {
      lake,
      probe,
      allowedRoutes: given,
      allowedTargets = [],
      budgetUsd,
      clientInstanceType,
      clientQueueArns,
    }: OrchestrationProps,
  ) {
    super(scope, id);
    const stack = Stack.of(this);
    const allowedRoutes = checkAllowedRoutes(given ?? [], 'allowedRoutes');
    checkAllowedTargets(allowedTargets, 'allowedTargets');

    this.lockTable = new dynamodb.Table(this, 'RunLock', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: 'expiresAt',
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy: RemovalPolicy.DESTROY,
    });

    // --- functions ------------------------------------------------------------------------
    // A fixed name, so functions can know the state machine's ARN without a reference to it
    // (the state machine already references every function: a Ref back would be a cycle).
    const stateMachineName = `${stack.stackName}-Measurement`.slice(0, 80);
    const stateMachineArn = stack.formatArn({
      service: 'states',
      resource: 'stateMachine',
      resourceName: stateMachineName,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const environment: Record<string, string> = {
      [ENV.bucket]: lake.bucket.bucketName,
      [ENV.workgroup]: lake.workgroupName,
      [ENV.database]: lake.databaseName,
      [ENV.table]: lake.tableName,
      [ENV.lockTable]: this.lockTable.tableName,
      [ENV.document]: probe.document.ref,
      [ENV.agentBucket]: probe.agentAsset.s3BucketName,
      [ENV.agentKey]: probe.agentAsset.s3ObjectKey,
      ...(Object.keys(probe.regions).length > 0 ? { [ENV.probeRegions]: stack.toJsonString(probe.regions) } : {}),
      [ENV.planPrefix]: DEFAULT_PLAN_PREFIX,
      [ENV.stateMachineArn]: stateMachineArn,
      [ENV.allowedRoutes]: JSON.stringify(allowedRoutes),
      [ENV.allowedTargets]: JSON.stringify(allowedTargets),
      // A task client's queue URL when the plan gives none (core/ecs-client.ts taskQueueUrl).
      [ENV.accountId]: stack.account,
      ...settingsEnv({
        ...(budgetUsd !== undefined ? { budgetUsd } : {}),
        ...(clientInstanceType ? { instanceType: clientInstanceType } : {}),
      }),
    };
    // Checked at synth, as the function will read them.
    parseSettings({}, environment);
    const grants = capabilityGrants(this, {
      bucket: lake.bucket,
      lockTable: this.lockTable,
      documentArn: probe.documentArn,
      documentArns: probe.documentArns,
      agentRegions: Object.keys(probe.regions),
      workgroupName: lake.workgroupName,
      databaseName: lake.databaseName,
      tableName: lake.tableName,
      stateMachineName,
      allowedRoutes,
    });
    const functions = {} as Record<TaskName, PathbenchFunction>;
    for (const name of TASK_NAMES) {
      const task = TASKS[name];
      const f = new PathbenchFunction(this, name, {
        name,
        entry: task.entry,
        description: task.description,
        timeoutSeconds: task.timeoutSeconds,
        ...('memoryMB' in task ? { memorySize: task.memoryMB } : {}),
        environment,
      });
      grantNeeds(f, task.needs, grants);
      functions[name] = f;
    }
    this.functions = functions;

    // --- state machines ----------------------------------------------------------------------
    for (const name of ['measurement', 'chunk', 'path', 'mesh'] as const) {
      const unknown = placeholdersIn(definitionText(name)).filter((p) => !(p in TASKS) && !(p in MACHINE_PLACEHOLDERS));
      if (unknown.length > 0)
        throw new Error(
          `statemachine/${name}.asl.json uses placeholders not in functions/wiring.ts: ${unknown.join(', ')}`,
        );
    }
    const smLogs = new logs.LogGroup(this, 'StateMachineLogs', {
      retention: logs.RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const functionArns = Object.fromEntries(TASK_NAMES.map((n) => [n, functions[n].fn.functionArn]));
    // One statement for the functions a definition calls (and their versions) rather than one per
    // function (grantInvoke): the role's inline policy stays under IAM's size limit.
    const invokeTasks = (name: DefinitionName) => {
      const used = TASK_NAMES.filter((n) => placeholdersIn(definitionText(name)).includes(n));
      return {
        statement: new iam.PolicyStatement({
          actions: ['lambda:InvokeFunction'],
          resources: used.flatMap((n) => [functions[n].fn.functionArn, `${functions[n].fn.functionArn}:*`]),
        }),
        findings: used.map((n) => `AwsSolutions-IAM5[Resource::${arnRef(functions[n].fn)}:*]`),
      };
    };
    const machine = (id: string, name: DefinitionName, props: Partial<sfn.StateMachineProps>) =>
      new sfn.StateMachine(this, id, {
        definitionBody: sfn.DefinitionBody.fromFile(definitionFile(name)),
        logs: { destination: smLogs, level: sfn.LogLevel.ALL, includeExecutionData: true },
        tracingEnabled: true,
        ...props,
      });
    // ProbeTask (sqs:sendMessage.waitForTaskToken) sends a task client its probe; SendMessage
    // only, on the client queues. The queues use SQS-managed encryption, so no KMS grant.
    const queues = clientQueueGrant(stack, clientQueueArns);
    const queueAck = queues.wildcard
      ? [
          {
            reason: `Task-client queues are created by testbeds (one per client service) after this stack; they are matched by their name prefix ${TASK_QUEUE_PREFIX} in this account and region, SendMessage only (context clientQueueArns lists them exactly instead).`,
            id: queues.wildcard,
          },
        ]
      : [];

    // The path: one path's steps, its own execution (so its history holds that path's alone).
    const pathName = `${stack.stackName}-Path`.slice(0, 80);
    this.pathStateMachine = machine('Path', 'path', {
      stateMachineName: pathName,
      comment: "pathbench path: one path's steps, started by the chunk machine",
      definitionSubstitutions: functionArns,
      timeout: Duration.seconds(loadDefinition('path').TimeoutSeconds ?? 86_400),
    });
    const pathInvoke = invokeTasks('path');
    this.pathStateMachine.addToRolePolicy(pathInvoke.statement);
    grantEngineCopy(this.pathStateMachine, grants, lake.bucket);
    this.pathStateMachine.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: queues.resources }),
    );
    for (const q of queueAck) ack(this.pathStateMachine, q.reason, q.id);
    ack(
      this.pathStateMachine,
      'Invoke grants cover function versions (arn:…:*); log delivery and X-Ray actions have no resource-level permissions.',
      'AwsSolutions-IAM5[Resource::*]',
      ...pathInvoke.findings,
    );

    // The chunk: up to PATHS_PER_CHUNK paths one at a time, each a path execution it waits for.
    const chunkName = `${stack.stackName}-Chunk`.slice(0, 80);
    this.chunkStateMachine = machine('Chunk', 'chunk', {
      stateMachineName: chunkName,
      comment: "pathbench chunk: a run's paths one at a time, each a path execution",
      definitionSubstitutions: { PathStateMachine: this.pathStateMachine.stateMachineArn },
      timeout: Duration.seconds(loadDefinition('chunk').TimeoutSeconds ?? 604_800),
    });
    grantStartSync(stack, this.chunkStateMachine, pathName);
    ack(
      this.chunkStateMachine,
      'The path executions it starts have generated names (execution:<path machine>:*); log delivery and X-Ray actions have no resource-level permissions.',
      'AwsSolutions-IAM5[Resource::*]',
      startedExecutionsFinding(stack, pathName),
    );

    // The run: validate, its chunks one at a time, restore, summarize, release.
    this.stateMachine = machine('Measurement', 'measurement', {
      stateMachineName,
      comment: 'pathbench measurement pipeline',
      definitionSubstitutions: { ...functionArns, ChunkStateMachine: this.chunkStateMachine.stateMachineArn },
      timeout: Duration.seconds(loadDefinition('measurement').TimeoutSeconds ?? 604_800),
    });
    const runInvoke = invokeTasks('measurement');
    this.stateMachine.addToRolePolicy(runInvoke.statement);
    grantEngineCopy(this.stateMachine, grants, lake.bucket);
    // SummaryQueries, a Distributed Map: each summary query a child execution of this machine.
    grantChildExecutions(stack, this.stateMachine, stateMachineName);
    grantStartSync(stack, this.stateMachine, chunkName);
    ack(
      this.stateMachine,
      "Invoke grants cover function versions (arn:…:*); a Distributed Map's child executions have generated names under the machine's map run (execution:<machine>/*), the chunk executions it starts generated names (execution:<chunk machine>:*); log delivery and X-Ray actions have no resource-level permissions.",
      'AwsSolutions-IAM5[Resource::*]',
      ...runInvoke.findings,
      childExecutionsFinding(stack, stateMachineName),
      startedExecutionsFinding(stack, chunkName),
    );

    // --- the mesh state machine ---------------------------------------------------------------
    const meshName = `${stack.stackName}-Mesh`.slice(0, 80);
    this.meshStateMachine = machine('Mesh', 'mesh', {
      stateMachineName: meshName,
      comment: 'pathbench mesh: rounds of region pairs through a Distributed Map',
      definitionSubstitutions: functionArns,
      timeout: Duration.seconds(loadDefinition('mesh').TimeoutSeconds ?? 604_800),
    });
    const meshInvoke = invokeTasks('mesh');
    this.meshStateMachine.addToRolePolicy(meshInvoke.statement);
    grantEngineCopy(this.meshStateMachine, grants, lake.bucket);
    // Its Distributed Maps (each round's pairs, the summary's queries) run child executions; the
    // rounds' ItemReader reads each round's items (runs/run=<id>/mesh/) from the bucket.
    grantChildExecutions(stack, this.meshStateMachine, meshName);
    lake.bucket.grantRead(this.meshStateMachine, 'runs/*');
    // A mesh pair's child execution runs the same ProbeTask branch.
    this.meshStateMachine.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: queues.resources }),
    );
    for (const q of queueAck) ack(this.meshStateMachine, q.reason, q.id);
    ack(
      this.meshStateMachine,
      "Invoke grants cover function versions (arn:…:*); a Distributed Map's child executions have generated names under the machine's map run (execution:<machine>/*); the round lists are read under runs/*; log delivery and X-Ray actions have no resource-level permissions.",
      'AwsSolutions-IAM5[Resource::*]',
      ...meshInvoke.findings,
      childExecutionsFinding(stack, meshName),
      'AwsSolutions-IAM5[Action::s3:GetObject*]',
      'AwsSolutions-IAM5[Action::s3:GetBucket*]',
      'AwsSolutions-IAM5[Action::s3:List*]',
      `AwsSolutions-IAM5[Resource::<${stack.getLogicalId(lake.bucket.node.defaultChild as never)}.Arn>/runs/*]`,
    );

    // --- cleanup after executions that could not finish themselves ------------------------------
    // The cleanup function and its rule sit directly in the stack, as they did before this
    // construct existed: EventBridge names the rule's invoke permission after the function's
    // construct path and the DLQ policy statement after the rule's, so below this construct the
    // permission would be replaced on deploy (the stack's logical-ID scheme does not reach those).
    this.cleanupFunction = new PathbenchFunction(stack, 'Cleanup', {
      name: CLEANUP.name,
      entry: CLEANUP.entry,
      description: CLEANUP.description,
      timeoutSeconds: CLEANUP.timeoutSeconds,
      environment,
    });
    grantNeeds(this.cleanupFunction, CLEANUP.needs, grants);
    this.cleanupDlq = new sqs.Queue(this, 'CleanupDlq', {
      enforceSSL: true,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      retentionPeriod: Duration.days(14),
    });
    ack(this.cleanupDlq, 'This queue is itself the dead-letter queue of the cleanup.', 'AwsSolutions-SQS3');
    // EventBridge invokes asynchronously: its DLQ catches events it could not deliver, the
    // function's on-failure destination catches events whose cleanup kept failing.
    this.cleanupFunction.fn.configureAsyncInvoke({
      retryAttempts: 2,
      maxEventAge: Duration.hours(6),
      onFailure: new lambdaDestinations.SqsDestination(this.cleanupDlq),
    });
    this.cleanupRule = new events.Rule(stack, 'CleanupRule', {
      description: 'pathbench: clean up routes and the run lock after an execution that did not finish itself',
      eventPattern: {
        source: ['aws.states'],
        detailType: ['Step Functions Execution Status Change'],
        detail: {
          stateMachineArn: [this.stateMachine.stateMachineArn, this.meshStateMachine.stateMachineArn],
          status: [...CLEANUP_STATUSES],
        },
      },
      targets: [
        new eventTargets.LambdaFunction(this.cleanupFunction.fn, {
          retryAttempts: 8,
          maxEventAge: Duration.hours(6),
          deadLetterQueue: this.cleanupDlq,
        }),
      ],
    });
  }
}
