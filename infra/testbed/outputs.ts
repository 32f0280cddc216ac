/**
 * Stack outputs of the testbed: a CfnOutput per value (what `cdk deploy --outputs-file` saves)
 * and the same map as one SSM parameter in the stack's region, so `pathbench plan from-testbed`
 * can read deployed outputs with the SSM client the project already has.
 */
import { CfnOutput, type Stack } from 'aws-cdk-lib';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { TESTBED_OUTPUTS, type TestbedOutputName } from './plan-from-outputs.js';

/** Where a testbed stack stores its outputs as JSON (one String parameter per stack). */
export function outputsParameterName(stackName: string): string {
  return `/pathbench/testbed/outputs/${stackName}`;
}

/** Add the outputs (keys from TESTBED_OUTPUTS) and their SSM copy to `stack`. */
export function addTestbedOutputs(stack: Stack, values: Partial<Record<TestbedOutputName, string>>): void {
  const byKey: Record<string, string> = {};
  for (const [name, value] of Object.entries(values) as [TestbedOutputName, string][]) {
    const key = TESTBED_OUTPUTS[name];
    // Created on the stack itself so the logical id (= output key) carries no hash suffix.
    new CfnOutput(stack, key, { value });
    byKey[key] = value;
  }
  new ssm.CfnParameter(stack, 'OutputsParameter', {
    name: outputsParameterName(stack.stackName),
    type: 'String',
    description: 'pathbench testbed outputs (JSON), read by `pathbench plan from-testbed`',
    value: stack.toJsonString(byKey),
  });
}
