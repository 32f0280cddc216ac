/**
 * Probe: what runs on the client instances. The agent bundle as an asset, the SSM command
 * document that fetches and runs it (its parameters each with an allowedPattern), and the
 * managed policy a client instance needs: read the agent and its specs, write raw probe output.
 */
import { Aws, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';
import type { ProbeLocation } from '../../functions/adapters/aws/aws-deps.js';
import { probeDocumentContent } from '../../functions/adapters/aws/probe-document.js';
import { probeRegions } from '../agent-region-stack.js';
import { agentBundle } from '../infra-paths.js';
import { ack, arnRef } from '../nag.js';

export interface ProbeProps {
  /** The data bucket: specs are read from it, raw output written to it. */
  bucket: s3.Bucket;
  /** Path of the agent bundle; default dist/agent.cjs, built when missing or stale (infra/infra-paths.ts agentBundle). */
  agentBundlePath?: string;
  /** IAM role ARNs of client instances: the client policy is attached to them. */
  clientRoleArns?: string[];
  /**
   * The client instances (ids) that may upload raw output, each only under its own
   * `client=<id>/` prefix of a path's run (keys.clientRawPrefix). None: no client may write raw output.
   */
  clientInstanceIds?: string[];
  /** Other regions the agent is deployed to (infra/agent-region-stack.ts): their documents and bundles. */
  agentRegions?: readonly string[];
}

export class Probe extends Construct {
  readonly agentAsset: s3assets.Asset;
  readonly document: ssm.CfnDocument;
  readonly documentArn: string;
  /** The document and bundle bucket in each other agent region (PATHBENCH_PROBE_REGIONS). */
  readonly regions: Record<string, ProbeLocation>;
  /** The probe documents the functions may send: this stack's and each agent region's. */
  readonly documentArns: string[];
  /** Attach to a client instance's role: read the agent and specs, write raw output. */
  readonly clientInstancePolicy: iam.ManagedPolicy;

  constructor(scope: Construct, id: string, props: ProbeProps) {
    super(scope, id);
    const { bucket } = props;
    const ids = props.clientInstanceIds ?? [];
    for (const id of ids) {
      if (!/^i-[0-9a-f]{8,17}$/.test(id)) throw new Error(`clientInstanceIds: "${id}" is not an EC2 instance id`);
    }

    this.agentAsset = new s3assets.Asset(this, 'AgentBundle', { path: props.agentBundlePath ?? agentBundle() });
    this.document = new ssm.CfnDocument(this, 'ProbeDocument', {
      documentType: 'Command',
      documentFormat: 'JSON',
      content: probeDocumentContent(),
    });
    this.documentArn = Stack.of(this).formatArn({
      service: 'ssm',
      resource: 'document',
      resourceName: this.document.ref,
    });
    const stack = Stack.of(this);
    this.regions = probeRegions(this, stack.stackName, props.agentRegions ?? []);
    this.documentArns = [
      this.documentArn,
      ...Object.entries(this.regions).map(([region, r]) =>
        stack.formatArn({ service: 'ssm', region, resource: 'document', resourceName: r.documentName }),
      ),
    ];
    this.clientInstancePolicy = new iam.ManagedPolicy(this, 'ClientInstancePolicy', {
      description: 'pathbench client instance: read the agent and specs, write raw probe output',
      statements: [
        new iam.PolicyStatement({
          actions: ['s3:GetObject'],
          resources: [
            this.agentAsset.bucket.arnForObjects(this.agentAsset.s3ObjectKey),
            // A client in another agent region reads the bundle from that region's copy.
            ...Object.values(this.regions).map(
              (r) => `arn:${Aws.PARTITION}:s3:::${r.agentBucket}/${this.agentAsset.s3ObjectKey}`,
            ),
          ],
        }),
        // One statement per client: its own specs (core/keys.ts: specs/…/client=<id>/, so no client
        // reads the targets and options of another's paths), its own raw prefix and its own SSM command output (the SSM
        // agent writes <OutputS3KeyPrefix>/<command id>/<instance id>/…, functions/adapters/aws/
        // ssm-runner.ts), and only with that instance's role credentials (ec2:SourceInstanceARN is
        // set on requests signed with an instance's role credentials). So no client can write
        // another path's or client's raw output, nor output in another instance's name.
        ...ids.map(
          (id) =>
            new iam.PolicyStatement({
              actions: ['s3:GetObject'],
              resources: [bucket.arnForObjects(`specs/run=*/path=*/client=${id}/*`)],
              conditions: {
                StringLike: { 'ec2:SourceInstanceARN': `arn:${Aws.PARTITION}:ec2:*:${Aws.ACCOUNT_ID}:instance/${id}` },
              },
            }),
        ),
        ...ids.map(
          (id) =>
            new iam.PolicyStatement({
              actions: ['s3:PutObject'],
              resources: [
                bucket.arnForObjects(`raw/path=*/run=*/client=${id}/*`),
                bucket.arnForObjects(`ssm-output/run=*/path=*/*/${id}/*`),
              ],
              conditions: {
                StringLike: { 'ec2:SourceInstanceARN': `arn:${Aws.PARTITION}:ec2:*:${Aws.ACCOUNT_ID}:instance/${id}` },
              },
            }),
        ),
      ],
      roles: (props.clientRoleArns ?? []).map((arn, i) => iam.Role.fromRoleArn(this, `ClientRole${i}`, arn)),
    });
    ack(
      this.clientInstancePolicy,
      'Specs are read and raw outputs written per run and path; keys are only known at run time.',
      ...[
        ...ids.flatMap((id) => [
          `specs/run=*/path=*/client=${id}/*`,
          `raw/path=*/run=*/client=${id}/*`,
          `ssm-output/run=*/path=*/*/${id}/*`,
        ]),
      ].map((p) => `AwsSolutions-IAM5[Resource::${arnRef(bucket)}/${p}]`),
    );
  }
}
