/**
 * cdk-nag acknowledgements for the pipeline's constructs: every finding acknowledged is named
 * exactly (rule and resource), with its reason.
 */
import { type CfnElement, Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** Acknowledge cdk-nag findings (exact finding ids) on one construct and its children. */
export function ack(scope: IConstruct, reason: string, ...ids: string[]): void {
  for (const id of ids) Validations.of(scope).acknowledge({ id, reason });
}

/** How cdk-nag prints a construct's ARN attribute in findings: `<LogicalId.Arn>`. */
export function arnRef(scope: IConstruct): string {
  const cfn = scope.node.defaultChild as CfnElement;
  return `<${Stack.of(scope).getLogicalId(cfn)}.Arn>`;
}
