/**
 * The CDK app: the pipeline stack always; the testbed (seed 000 topology) when the context
 * value `testbed` is "true". Context: scheduleExpression, scheduleEnabled, schedulePlanName,
 * clientRoleArns (comma separated).
 */
import { App } from 'aws-cdk-lib';
import { PipelineStack } from './pipeline-stack.js';
import { addTestbed } from './testbed/index.js';

const app = new App();
const ctx = (key: string): string | undefined => {
  const v: unknown = app.node.tryGetContext(key);
  return v === undefined || v === null || v === '' ? undefined : String(v);
};
const env = { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION };

new PipelineStack(app, ctx('stackName') ?? 'Pathbench', {
  env,
  description: 'pathbench: network path measurement pipeline',
  scheduleExpression: ctx('scheduleExpression'),
  scheduleEnabled: ctx('scheduleEnabled') === 'true',
  schedulePlanName: ctx('schedulePlanName'),
  clientRoleArns: ctx('clientRoleArns')?.split(',').filter(Boolean),
  alarmEmail: ctx('alarmEmail'),
});

if (ctx('testbed') === 'true') {
  // Settings come from context (testbed*); the pipeline bucket's name is a deploy-time value in
  // another stack, so the testbed takes it from context `testbedPipelineBucket`.
  addTestbed(app);
}
