/**
 * The regression alerting in the synthesized pipeline stack: the EventBridge rule for regression
 * events to the alarm topic (with the key policy that lets this account's rules publish to the
 * encrypted topic), the alarm on the regression count, the summary function's PutEvents grant on the
 * default bus only, trend points readable and writable, named plans readable in the bucket and
 * their versions kept.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EVENT_SOURCE,
  METRIC_NAMESPACE,
  REGRESSION_DETAIL_TYPE,
  REGRESSIONS_METRIC,
} from '../../functions/adapters/aws/aws-publisher.js';
import { PipelineStack } from '../../infra/pipeline-stack.js';

type Resource = { Type: string; Properties: Record<string, unknown> };
let outdir: string;
let stack: PipelineStack;
let template: Template;
let resources: Record<string, Resource>;

beforeAll(() => {
  outdir = mkdtempSync(path.join(tmpdir(), 'pb-cdk-trend-'));
  // No asset bundling (context aws:cdk:bundling-stacks): nothing here reads a bundle, and
  // bundling every function took most of this file's minute.
  const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
  stack = new PipelineStack(app, 'Pathbench', { env: { account: '123456789012', region: 'ap-northeast-1' } });
  app.synth();
  template = Template.fromStack(stack);
  resources = template.toJSON().Resources as Record<string, Resource>;
}, 600_000);

afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

const topicRef = () => ({ Ref: stack.getLogicalId(stack.alarmTopic.node.defaultChild as never) });

function statementsOf(task: string): Record<string, unknown>[] {
  const [policy] = Object.entries(resources).filter(
    ([id, r]) => r.Type === 'AWS::IAM::Policy' && id.startsWith(`${task}FnServiceRoleDefaultPolicy`),
  );
  return (policy[1].Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement;
}
const actions = (s: Record<string, unknown>) => ([] as string[]).concat(s.Action as string | string[]);

describe('regression alerting', () => {
  it('sends every regression event to the alarm topic, naming the path and figures', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: [EVENT_SOURCE], 'detail-type': [REGRESSION_DETAIL_TYPE] },
      Targets: [
        Match.objectLike({
          Arn: topicRef(),
          InputTransformer: Match.objectLike({
            InputPathsMap: Match.objectLike({ 'detail-text': '$.detail.text', 'detail-runId': '$.detail.runId' }),
            InputTemplate: Match.stringLikeRegexp(
              'pathbench <detail-direction> in plan <detail-planName>: <detail-text>',
            ),
          }),
        }),
      ],
    });
    // EventBridge may publish to the topic and use its KMS key, for this rule only
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: Match.objectLike({
        Statement: Match.arrayWith([
          Match.objectLike({ Action: 'sns:Publish', Principal: { Service: 'events.amazonaws.com' } }),
        ]),
      }),
    });
    template.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: Match.objectLike({
        Statement: Match.arrayWith([
          Match.objectLike({
            Principal: { Service: 'events.amazonaws.com' },
            Condition: Match.objectLike({ ArnLike: { 'aws:SourceArn': Match.anyValue() } }),
          }),
        ]),
      }),
    });
  });

  it('raises an alarm on the regression count, notifying the alarm topic', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: METRIC_NAMESPACE,
      MetricName: REGRESSIONS_METRIC,
      Dimensions: [{ Name: 'service', Value: 'pathbench' }],
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: [topicRef()],
    });
  });

  it('lets only the summary function put events, on the default bus; metrics need no API permission (EMF)', () => {
    const put = statementsOf('SummarizeRun').filter((s) => actions(s).includes('events:PutEvents'));
    expect(put).toHaveLength(1);
    expect(JSON.stringify(put[0].Resource)).toMatch(/:event-bus\/default/);
    expect(statementsOf('SummarizeRun').some((s) => actions(s).includes('cloudwatch:PutMetricData'))).toBe(false);
    for (const task of ['ValidatePlan', 'CollectOutput', 'ReleaseLock'])
      expect(
        statementsOf(task).some((s) => actions(s).includes('events:PutEvents')),
        task,
      ).toBe(false);
    // the trend points: read and written under trends/
    const s3 = JSON.stringify(statementsOf('SummarizeRun'));
    expect(s3).toContain('/trends/*');
  });

  it('reads named plans from plans/ in the bucket (and SSM as before), and keeps their versions', () => {
    const v = JSON.stringify(statementsOf('ValidatePlan'));
    expect(v).toContain('/plans/*');
    expect(v).toContain('ssm:GetParameter');
    const [bucket] = Object.values(resources).filter(
      (r) =>
        r.Type === 'AWS::S3::Bucket' &&
        (r.Properties.VersioningConfiguration as { Status?: string })?.Status === 'Enabled',
    );
    const rules = (bucket.Properties.LifecycleConfiguration as { Rules: Record<string, unknown>[] }).Rules;
    const expiring = rules.filter((r) => r.NoncurrentVersionExpiration);
    expect(expiring.length).toBeGreaterThan(0);
    // every rule that expires old versions names a prefix, and none covers plans/
    for (const r of expiring) {
      expect(typeof r.Prefix).toBe('string');
      expect('plans/'.startsWith(r.Prefix as string)).toBe(false);
    }
    expect(expiring.map((r) => r.Prefix)).toEqual(expect.arrayContaining(['runs/', 'samples/', 'reports/', 'trends/']));
  });
});
