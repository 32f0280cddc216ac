/**
 * PathbenchFunction: the Lambda defaults in one place: arm64, Node 24 runtime (bundle targets Node 20), one ESM bundle
 * per function built locally by esbuild from node_modules (no Docker) from the function's own
 * entry (functions/handlers/<step>.lambda.ts), so it holds that handler and the adapters of its
 * needs only; source maps, kept class names (the ASL's Retry/Catch match on error names), an
 * explicit log group with retention. The SQL is inside the bundle (queries/sql-text.ts): nothing
 * ships beside it.
 */

import path from 'node:path';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { LOCK_FILE, ROOT } from '../infra-paths.js';

export interface PathbenchFunctionProps {
  /** The Lambda's name in the wiring table (functions/wiring.ts LAMBDAS): the task name, or CleanupAfterExecution. */
  name: string;
  /** Its entry file, repository-relative (LambdaWiring.entry); it exports `handler`. */
  entry: string;
  description: string;
  timeoutSeconds: number;
  environment: Record<string, string>;
  memorySize?: number;
  logRetention?: logs.RetentionDays;
}

export class PathbenchFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: PathbenchFunctionProps) {
    super(scope, id);
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.fn = new NodejsFunction(this, 'Fn', {
      entry: path.join(ROOT, props.entry),
      handler: 'handler',
      description: `pathbench ${props.name}: ${props.description}`.slice(0, 256),
      // Node 20 on Lambda is deprecated (CloudFormation warns since 2026-04-30); the bundle targets
      // Node 20 syntax, so it runs unchanged on the latest runtime.
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: Duration.seconds(props.timeoutSeconds),
      logGroup: this.logGroup,
      environment: { ...props.environment, NODE_OPTIONS: '--enable-source-maps' },
      projectRoot: ROOT,
      depsLockFilePath: LOCK_FILE,
      bundling: {
        forceDockerBundling: false,
        format: OutputFormat.ESM,
        target: 'node20',
        minify: true,
        sourceMap: true,
        keepNames: true,
        // Bundle the SDK too: the versions we tested with, not whatever the runtime ships.
        bundleAwsSDK: true,
        mainFields: ['module', 'main'],
        // Some bundled CommonJS dependencies call require() for node built-ins.
        banner:
          "import { createRequire as __pbCreateRequire } from 'module'; const require = __pbCreateRequire(import.meta.url);",
      },
    });
  }
}
