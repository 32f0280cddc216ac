/**
 * Schedule: the EventBridge Scheduler schedule that starts a run (DISABLED unless asked for) on
 * the measurement state machine or, for a mesh plan, the mesh state machine, with retries and a
 * dead-letter queue for the starts that failed. The CLI's schedules may start either machine.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as targets from 'aws-cdk-lib/aws-scheduler-targets';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { ack } from '../nag.js';

/** Which state machine a schedule starts: one path after another, or a mesh plan's rounds. */
export type ScheduleMachine = 'measurement' | 'mesh';

export interface ScheduleProps {
  stateMachine: sfn.IStateMachine;
  /** The mesh state machine: the CLI's schedules of mesh plans start it. */
  meshStateMachine?: sfn.IStateMachine;
  /** The machine the stack's own schedule starts; default measurement (mesh needs meshStateMachine). */
  machine?: ScheduleMachine;
  /** EventBridge Scheduler expression; default "cron(0 18 ? * SUN *)". */
  expression?: string;
  /** The schedule is created DISABLED unless this is true. */
  enabled?: boolean;
  /** Named plan (SSM /pathbench/plans/<name>) the schedule starts; default "default". */
  planName?: string;
  /** An inline plan for the schedule instead of a named one. */
  plan?: Record<string, unknown>;
}

/** The schedule group of the schedules `pathbench schedule create` makes (one plan each). */
export const SCHEDULE_GROUP = 'pathbench';

export class Schedule extends Construct {
  /** The schedule's dead-letter queue: a message here is a run that could not start. */
  readonly dlq: sqs.Queue;
  /** The role EventBridge Scheduler assumes for the CLI's schedules: start executions, dead-letter. */
  readonly schedulerRole: iam.Role;
  readonly group: scheduler.ScheduleGroup;

  constructor(scope: Construct, id: string, props: ScheduleProps) {
    super(scope, id);
    this.dlq = new sqs.Queue(this, 'ScheduleDlq', {
      enforceSSL: true,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      retentionPeriod: Duration.days(14),
    });
    ack(this.dlq, 'This queue is itself the dead-letter queue of the schedule.', 'AwsSolutions-SQS3');
    // For `pathbench schedule create`: a group to keep them in and the role they run with.
    this.group = new scheduler.ScheduleGroup(this, 'ScheduleGroup', { scheduleGroupName: SCHEDULE_GROUP });
    const stack = Stack.of(this);
    this.schedulerRole = new iam.Role(this, 'SchedulerRole', {
      description: 'pathbench: EventBridge Scheduler starts measurement runs (pathbench schedule create)',
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
    });
    props.stateMachine.grantStartExecution(this.schedulerRole);
    props.meshStateMachine?.grantStartExecution(this.schedulerRole);
    const machine = props.machine === 'mesh' ? props.meshStateMachine : props.stateMachine;
    if (!machine) throw new Error('schedule: machine "mesh" needs the mesh state machine');
    this.dlq.grantSendMessages(this.schedulerRole);
    const input = props.plan
      ? { plan: props.plan, trigger: 'schedule' }
      : { planName: props.planName ?? 'default', trigger: 'schedule' };
    new scheduler.Schedule(this, 'Schedule', {
      description: 'pathbench: scheduled measurement run',
      schedule: scheduler.ScheduleExpression.expression(props.expression ?? 'cron(0 18 ? * SUN *)'),
      enabled: props.enabled ?? false,
      target: new targets.StepFunctionsStartExecution(machine, {
        input: scheduler.ScheduleTargetInput.fromObject(input),
        deadLetterQueue: this.dlq,
        retryAttempts: 2,
        maxEventAge: Duration.hours(1),
      }),
    });
  }
}
