/**
 * IAM for the pipeline's Lambdas as a pure derivation of the wiring table (functions/wiring.ts):
 * a function's role gets the statements of each capability in its `needs`, and nothing else.
 * Each capability also names the cdk-nag IAM5 findings its statements cause, so exactly those
 * are acknowledged on the function.
 */
import { Aws, Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct, IConstruct } from 'constructs';
import type { AllowedRoute } from '../core/route-policy.js';
import { DEFAULT_PLAN_PREFIX } from '../functions/adapters/aws/aws-deps.js';
import type { Capability } from '../functions/wiring.js';
import { ATHENA_RESULTS, DATA_PREFIXES, PLANS_PREFIX } from './constructs/data-lake.js';
import type { PathbenchFunction } from './constructs/pathbench-function.js';
import { ack, arnRef } from './nag.js';

/** The data prefixes functions write: raw/ and ssm-output/ are written by the clients only. */
const WRITABLE_PREFIXES = DATA_PREFIXES.filter((p) => p !== 'raw/' && p !== 'ssm-output/');

/** Tag every instance and route table pathbench may touch; IAM only allows those. */
export const MANAGED_TAG = { key: 'pathbench:managed', value: 'true' } as const;

/** The resources the capabilities are granted on. */
export interface GrantTargets {
  bucket: s3.IBucket;
  lockTable: dynamodb.ITable;
  documentArn: string;
  /** Every probe document the runner may send (this region's and each agent region's); default [documentArn]. */
  documentArns?: readonly string[];
  /** The other regions the agent is deployed to: the runner may send commands there, and in this region. */
  agentRegions?: readonly string[];
  workgroupName: string;
  databaseName: string;
  tableName: string;
  /** The state machine's fixed name: lock holders may describe its executions. */
  stateMachineName: string;
  /** The route changes the operator allowed (stack configuration); route tables outside it are never granted. */
  allowedRoutes: readonly AllowedRoute[];
}

/** What one capability grants a role, and the cdk-nag IAM5 findings (`Resource::…`) that causes. */
interface CapabilityGrant {
  grant: (role: iam.IRole) => void;
  wildcards: string[];
}

/**
 * Every capability's grant. A role gets them in this table's order (not in the order its needs
 * are listed), so its policy depends only on which capabilities it needs.
 */
export function capabilityGrants(scope: Construct, t: GrantTargets): Record<Capability, CapabilityGrant> {
  const stack = Stack.of(scope);
  const { bucket } = t;
  const statements =
    (...ss: iam.PolicyStatementProps[]) =>
    (role: iam.IRole) => {
      for (const s of ss) role.addToPrincipalPolicy(new iam.PolicyStatement(s));
    };
  const tagged = { StringEquals: { [`aws:ResourceTag/${MANAGED_TAG.key}`]: MANAGED_TAG.value } };
  const instances = `arn:${Aws.PARTITION}:ec2:*:${Aws.ACCOUNT_ID}:instance/*`;
  const sendRegions = [Aws.REGION, ...(t.agentRegions ?? [])];
  const objects = (prefixes: readonly string[]) => prefixes.map((p) => `Resource::${arnRef(bucket)}/${p}*`);

  return {
    'store:read': {
      grant: statements(
        { actions: ['s3:GetObject'], resources: DATA_PREFIXES.map((p) => bucket.arnForObjects(`${p}*`)) },
        {
          actions: ['s3:ListBucket'],
          resources: [bucket.bucketArn],
          conditions: { StringLike: { 's3:prefix': DATA_PREFIXES.map((p) => `${p}*`) } },
        },
      ),
      wildcards: objects(DATA_PREFIXES),
    },
    'store:write': {
      // No s3:DeleteObject (a retried step overwrites the same key; the Parquet copy is `parquet`).
      // Not raw/ nor ssm-output/: the clients write those. AbortMultipartUpload: a streamed
      // write (S3ObjectStore.putStream) that fails aborts its upload.
      grant: statements({
        actions: ['s3:PutObject', 's3:AbortMultipartUpload'],
        resources: WRITABLE_PREFIXES.map((p) => bucket.arnForObjects(`${p}*`)),
      }),
      wildcards: objects(WRITABLE_PREFIXES),
    },
    // A path's Parquet copy is rewritten whole, and deleted when the path has no samples
    // (functions/pipeline/parquet-copy.ts): the only object a function deletes.
    parquet: {
      grant: statements({ actions: ['s3:DeleteObject'], resources: [bucket.arnForObjects('parquet/*')] }),
      wildcards: objects(['parquet/']),
    },
    fleet: {
      grant: statements(
        { actions: ['ec2:StopInstances', 'ec2:StartInstances'], resources: [instances], conditions: tagged },
        {
          actions: ['ec2:DescribeInstances', 'ec2:DescribeAvailabilityZones', 'ssm:DescribeInstanceInformation'],
          resources: ['*'],
        },
      ),
      wildcards: ['Resource::*', 'Resource::arn:<AWS::Partition>:ec2:*:<AWS::AccountId>:instance/*'],
    },
    // The instance type's baseline / peak network bandwidth (BeginPath, the manifest's `client`).
    // describe() also asks SSM whether the agent answers (DescribeInstanceInformation).
    'fleet:read': {
      grant: statements({
        actions: [
          'ec2:DescribeInstances',
          'ec2:DescribeAvailabilityZones',
          'ec2:DescribeInstanceTypes',
          'ssm:DescribeInstanceInformation',
        ],
        resources: ['*'],
      }),
      wildcards: ['Resource::*'],
    },
    // Route changes only on the route tables the operator allowed (stack configuration
    // allowedRoutes), and only when tagged. EC2 has no IAM condition key for a route's destination
    // or target, so those are checked by ValidatePlan and SwapRoutes (core/route-policy.ts).
    routes: {
      grant: (role) => {
        const tables = [
          ...new Set(
            t.allowedRoutes.map(
              (a) => `arn:${Aws.PARTITION}:ec2:${a.region}:${Aws.ACCOUNT_ID}:route-table/${a.routeTableId}`,
            ),
          ),
        ];
        if (tables.length > 0) {
          statements({
            actions: ['ec2:ReplaceRoute', 'ec2:CreateRoute', 'ec2:DeleteRoute'],
            resources: tables,
            conditions: tagged,
          })(role);
        }
        statements({ actions: ['ec2:DescribeRouteTables'], resources: ['*'] })(role);
      },
      wildcards: ['Resource::*'],
    },
    // ValidatePlan reads the routes a plan names (a local route or an unrecordable target is refused).
    'routes:read': {
      grant: statements({ actions: ['ec2:DescribeRouteTables'], resources: ['*'] }),
      wildcards: ['Resource::*'],
    },
    runner: {
      grant: statements(
        { actions: ['ssm:SendCommand'], resources: [...(t.documentArns ?? [t.documentArn])] },
        {
          actions: ['ssm:SendCommand'],
          // Instances in this region and the agent regions only: nowhere else is a document to send.
          resources: sendRegions.map((r) => `arn:${Aws.PARTITION}:ec2:${r}:${Aws.ACCOUNT_ID}:instance/*`),
          conditions: { StringEquals: { [`ssm:resourceTag/${MANAGED_TAG.key}`]: MANAGED_TAG.value } },
        },
        // GetCommandInvocation and ListCommands have no resource-level permissions.
        { actions: ['ssm:GetCommandInvocation', 'ssm:ListCommands'], resources: ['*'] },
      ),
      wildcards: [
        'Resource::*',
        ...sendRegions.map(
          (r) =>
            `Resource::arn:<AWS::Partition>:ec2:${r === Aws.REGION ? '<AWS::Region>' : r}:<AWS::AccountId>:instance/*`,
        ),
      ],
    },
    // CancelCommand stops a probe that overran its deadline (PollProbe), one sent by a stopped run
    // (SendProbe) or still running when its execution ended (the cleanup). The Service
    // Authorization Reference lists no resource type and no condition key for it, so it can only
    // be scoped by who gets it: one statement, one action, one role.
    'runner:cancel': {
      grant: statements({ actions: ['ssm:CancelCommand'], resources: ['*'] }),
      wildcards: ['Resource::*'],
    },
    query: {
      grant: statements(
        {
          actions: [
            'athena:StartQueryExecution',
            'athena:GetQueryExecution',
            'athena:GetQueryResults',
            'athena:StopQueryExecution',
            // QueryEngine.settle: the workgroup's recent executions, to stop a still-running copy.
            'athena:ListQueryExecutions',
            'athena:BatchGetQueryExecution',
          ],
          resources: [stack.formatArn({ service: 'athena', resource: 'workgroup', resourceName: t.workgroupName })],
        },
        {
          actions: [
            'glue:GetDatabase',
            'glue:GetTable',
            'glue:GetPartition',
            'glue:GetPartitions',
            'glue:CreatePartition',
            'glue:BatchCreatePartition',
          ],
          resources: [
            stack.formatArn({ service: 'glue', resource: 'catalog' }),
            stack.formatArn({ service: 'glue', resource: 'database', resourceName: t.databaseName }),
            // The Parquet table and the raw JSONL one (DataLake.jsonlTableName: "<table>_jsonl").
            stack.formatArn({ service: 'glue', resource: 'table', resourceName: `${t.databaseName}/${t.tableName}` }),
            stack.formatArn({
              service: 'glue',
              resource: 'table',
              resourceName: `${t.databaseName}/${t.tableName}_jsonl`,
            }),
          ],
        },
        // Athena reads samples and writes results with the caller's credentials.
        {
          actions: ['s3:GetObject'],
          resources: [
            bucket.arnForObjects('samples/*'),
            bucket.arnForObjects('parquet/*'),
            bucket.arnForObjects(`${ATHENA_RESULTS}*`),
          ],
        },
        {
          actions: ['s3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'],
          resources: [bucket.arnForObjects(`${ATHENA_RESULTS}*`)],
        },
        {
          actions: ['s3:ListBucket', 's3:GetBucketLocation', 's3:ListBucketMultipartUploads'],
          resources: [bucket.bucketArn],
        },
      ),
      wildcards: objects(['samples/', 'parquet/', ATHENA_RESULTS]),
    },
    lock: {
      grant: (role) => {
        t.lockTable.grant(role, 'dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:DeleteItem');
        // A lock whose holder execution has ended may be taken over (functions/adapters/aws/dynamodb-lock.ts).
        statements({
          actions: ['states:DescribeExecution'],
          resources: [`arn:${Aws.PARTITION}:states:${Aws.REGION}:${Aws.ACCOUNT_ID}:execution:${t.stateMachineName}:*`],
        })(role);
      },
      wildcards: [
        `Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:${t.stateMachineName}:*`,
      ],
    },
    'lock:read': {
      grant: (role) => {
        t.lockTable.grant(role, 'dynamodb:GetItem');
      },
      wildcards: [],
    },
    plans: {
      grant: statements(
        // Named plans in the data bucket (pathbench plan put); the SSM parameters of before still work.
        { actions: ['s3:GetObject'], resources: [bucket.arnForObjects(`${PLANS_PREFIX}*`)] },
        // Without ListBucket a missing plan is AccessDenied, not NoSuchKey (and the SSM fallback never runs).
        {
          actions: ['s3:ListBucket'],
          resources: [bucket.bucketArn],
          conditions: { StringLike: { 's3:prefix': [`${PLANS_PREFIX}*`] } },
        },
        {
          actions: ['ssm:GetParameter'],
          resources: [`arn:${Aws.PARTITION}:ssm:${Aws.REGION}:${Aws.ACCOUNT_ID}:parameter${DEFAULT_PLAN_PREFIX}*`],
        },
      ),
      wildcards: [
        ...objects([PLANS_PREFIX]),
        `Resource::arn:<AWS::Partition>:ssm:<AWS::Region>:<AWS::AccountId>:parameter${DEFAULT_PLAN_PREFIX}*`,
      ],
    },
    // Regression events on the default bus only; the metrics are EMF log lines (no PutMetricData).
    publish: {
      grant: statements({
        actions: ['events:PutEvents'],
        resources: [`arn:${Aws.PARTITION}:events:${Aws.REGION}:${Aws.ACCOUNT_ID}:event-bus/default`],
      }),
      wildcards: [],
    },
  };
}

/**
 * What a state machine's CopyToParquet and CopyFailedPath states need: Step Functions calls
 * Athena (`athena:startQueryExecution.sync`) with the machine's role, and Athena runs the UNLOAD
 * with it, so the role gets the `query` capability's statements (the workgroup, the Glue tables,
 * reading samples/, the results prefix) and writing the copy under parquet/ (UNLOAD lists the
 * location, which must be empty, and writes it in multipart uploads).
 */
export function grantEngineCopy(
  machine: IConstruct & { role: iam.IRole },
  grants: Record<Capability, CapabilityGrant>,
  bucket: s3.IBucket,
): void {
  grants.query.grant(machine.role);
  machine.role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['s3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'],
      resources: [bucket.arnForObjects('parquet/*')],
    }),
  );
  ack(
    machine,
    "The Parquet copy's UNLOAD reads samples/ and writes parquet/ and the Athena results prefix, each under a fixed prefix of the data bucket.",
    ...new Set([...grants.query.wildcards, ...grants.parquet.wildcards].map((w) => `AwsSolutions-IAM5[${w}]`)),
  );
}

/** Grant a function exactly its needs, and acknowledge exactly the findings they cause. */
export function grantNeeds(
  f: PathbenchFunction,
  needs: readonly Capability[],
  grants: Record<Capability, CapabilityGrant>,
): void {
  const role = f.fn.role!;
  const wildcards = new Set<string>();
  for (const [capability, g] of Object.entries(grants) as [Capability, CapabilityGrant][]) {
    if (!needs.includes(capability)) continue;
    g.grant(role);
    for (const w of g.wildcards) wildcards.add(w);
  }
  ack(
    f.fn,
    'AWSLambdaBasicExecutionRole only allows writing the function’s own logs.',
    'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
  );
  ack(
    f.fn,
    'Per-run keys under fixed prefixes; EC2/SSM Describe* and GetCommandInvocation have no resource-level permissions; Stop/Start, route changes and SendCommand are limited by the pathbench:managed tag.',
    ...[...wildcards].map((w) => `AwsSolutions-IAM5[${w}]`),
  );
}
