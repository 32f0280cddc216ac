/**
 * Alarms: one KMS-encrypted SNS topic (optionally with an e-mail subscription) that every
 * pathbench alarm notifies, and the alarms: a cleanup that failed (routes may still be swapped),
 * a run that did not finish, a scheduled run that could not start.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';

export interface AlarmsProps {
  /** An e-mail address subscribed to the alarm topic (it must confirm the subscription). */
  email?: string;
  stateMachine: sfn.StateMachine;
  /** The cleanup's dead-letter queue. */
  cleanupDlq: sqs.IQueue;
  /** The schedule's dead-letter queue. */
  scheduleDlq: sqs.IQueue;
}

export class Alarms extends Construct {
  /** Every pathbench alarm notifies this topic. */
  readonly topic: sns.Topic;

  constructor(scope: Construct, id: string, props: AlarmsProps) {
    super(scope, id);
    const stack = Stack.of(this);

    const key = new kms.Key(this, 'AlarmTopicKey', {
      description: 'pathbench: encrypts the alarm topic',
      enableKeyRotation: true,
    });
    // CloudWatch needs the key to publish to an encrypted topic, and only for this account's alarms.
    const fromAlarms = {
      StringEquals: { 'aws:SourceAccount': stack.account },
      ArnLike: { 'aws:SourceArn': `arn:${stack.partition}:cloudwatch:${stack.region}:${stack.account}:alarm:*` },
    };
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: fromAlarms,
      }),
    );
    this.topic = new sns.Topic(this, 'AlarmTopic', {
      displayName: 'pathbench alarms',
      masterKey: key,
      enforceSSL: true,
    });
    this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: fromAlarms,
      }),
    );
    if (props.email) this.topic.addSubscription(new subscriptions.EmailSubscription(props.email));
    const notify = new cwActions.SnsAction(this.topic);
    const period = Duration.minutes(5);
    /** An alarm, notifying the topic, as soon as `metric` is above zero (no data is not a breach). */
    const alarm = (alarmId: string, alarmDescription: string, metric: cloudwatch.IMetric) =>
      new cloudwatch.Alarm(this, alarmId, {
        alarmDescription,
        metric,
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }).addAlarmAction(notify);

    // Routes left swapped or a run lock left held: somebody must look.
    alarm(
      'CleanupFailedAlarm',
      'pathbench cleanup failed: routes may still be swapped (see the CleanupDlq message and the run manifest)',
      props.cleanupDlq.metricApproximateNumberOfMessagesVisible({ period }),
    );
    // A run that ended FAILED, TIMED_OUT or ABORTED (a rejected plan included): the weekly
    // numbers are missing or partial.
    alarm(
      'RunFailedAlarm',
      'pathbench run did not finish (failed, timed out or aborted): see the execution and its manifest',
      new cloudwatch.MathExpression({
        expression: 'failed + timedOut + aborted',
        usingMetrics: {
          failed: props.stateMachine.metricFailed({ period }),
          timedOut: props.stateMachine.metricTimedOut({ period }),
          aborted: props.stateMachine.metricAborted({ period }),
        },
        period,
      }),
    );
    // The scheduler could not start a run: this week's numbers are missing.
    alarm(
      'ScheduleFailedAlarm',
      'pathbench schedule could not start a run (see the ScheduleDlq message)',
      props.scheduleDlq.metricApproximateNumberOfMessagesVisible({ period }),
    );
  }
}
