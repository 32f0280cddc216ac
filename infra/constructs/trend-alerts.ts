/**
 * TrendAlerts: what happens when the summary step finds a regression (functions/pipeline/regressions.ts).
 * Each regression or improvement is an EventBridge event on the default bus (functions/adapters/aws/aws-publisher.ts);
 * a rule sends it to the alarm topic as one line naming the path and the figures. The summary
 * step also emits the count of regressions as an EMF metric; an alarm on it notifies the same
 * topic, so a regression shows in the CloudWatch alarm list too.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as events from 'aws-cdk-lib/aws-events';
import * as eventTargets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import {
  EVENT_SOURCE,
  METRIC_NAMESPACE,
  METRIC_SERVICE,
  REGRESSION_DETAIL_TYPE,
  REGRESSIONS_METRIC,
} from '../../functions/adapters/aws/aws-publisher.js';

export interface TrendAlertsProps {
  /** The alarm topic (KMS-encrypted) every pathbench alarm notifies. */
  topic: sns.Topic;
}

export class TrendAlerts extends Construct {
  readonly rule: events.Rule;
  readonly alarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: TrendAlertsProps) {
    super(scope, id);
    this.rule = new events.Rule(this, 'RegressionRule', {
      description: 'pathbench: a regression (or improvement) found after a run, to the alarm topic',
      eventPattern: { source: [EVENT_SOURCE], detailType: [REGRESSION_DETAIL_TYPE] },
    });
    const field = (p: string) => events.EventField.fromPath(`$.detail.${p}`);
    this.rule.addTarget(
      new eventTargets.SnsTopic(props.topic, {
        message: events.RuleTargetInput.fromText(
          `pathbench ${field('direction')} in plan ${field('planName')}: ${field('text')} (run ${field('runId')}, s3 key ${field('summaryKey')})`,
        ),
      }),
    );
    // The topic is encrypted: EventBridge must be able to use its key to publish, for this
    // account's rules (the rule's own ARN would make a cycle: key → rule → topic → key).
    const stack = Stack.of(this);
    props.topic.masterKey?.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('events.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnLike: { 'aws:SourceArn': `arn:${stack.partition}:events:${stack.region}:${stack.account}:rule/*` },
        },
      }),
    );
    this.alarm = new cloudwatch.Alarm(this, 'RegressionAlarm', {
      alarmDescription:
        'pathbench found a regression after a run: the topic also has one message per regression naming the path and figures; see the run summary',
      metric: new cloudwatch.Metric({
        namespace: METRIC_NAMESPACE,
        metricName: REGRESSIONS_METRIC,
        dimensionsMap: { service: METRIC_SERVICE },
        statistic: 'Maximum',
        period: Duration.hours(1),
      }),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.alarm.addAlarmAction(new cwActions.SnsAction(props.topic));
  }
}
