/**
 * Probe: what runs on the client instances. The agent bundle as an asset, the SSM command
 * document that fetches and runs it (its parameters each with an allowedPattern), and the
 * managed policy a client instance needs: read the agent and its specs, write raw probe output.
 */
import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';
import { probeDocumentContent } from '../../functions/adapters/aws/probe-document.js';
import { ack, arnRef } from '../nag.js';
import { AGENT_BUNDLE } from '../paths.js';

export interface ProbeProps {
  /** The data bucket: specs are read from it, raw output written to it. */
  bucket: s3.Bucket;
  /** Path of the agent bundle; default dist/agent.cjs (built by `node scripts/build.mjs`). */
  agentBundlePath?: string;
  /** IAM role ARNs of client instances: the client policy is attached to them. */
  clientRoleArns?: string[];
}

export class Probe extends Construct {
  readonly agentAsset: s3assets.Asset;
  readonly document: ssm.CfnDocument;
  readonly documentArn: string;
  /** Attach to a client instance's role: read the agent and specs, write raw output. */
  readonly clientInstancePolicy: iam.ManagedPolicy;

  constructor(scope: Construct, id: string, props: ProbeProps) {
    super(scope, id);
    const { bucket } = props;

    this.agentAsset = new s3assets.Asset(this, 'AgentBundle', { path: props.agentBundlePath ?? AGENT_BUNDLE });
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
    this.clientInstancePolicy = new iam.ManagedPolicy(this, 'ClientInstancePolicy', {
      description: 'pathbench client instance: read the agent and specs, write raw probe output',
      statements: [
        new iam.PolicyStatement({
          actions: ['s3:GetObject'],
          resources: [
            this.agentAsset.bucket.arnForObjects(this.agentAsset.s3ObjectKey),
            bucket.arnForObjects('specs/*'),
          ],
        }),
        new iam.PolicyStatement({
          actions: ['s3:PutObject'],
          resources: [bucket.arnForObjects('raw/*'), bucket.arnForObjects('ssm-output/*')],
        }),
      ],
      roles: (props.clientRoleArns ?? []).map((arn, i) => iam.Role.fromRoleArn(this, `ClientRole${i}`, arn)),
    });
    ack(
      this.clientInstancePolicy,
      'Specs are read and raw outputs written per run and path; keys are only known at run time.',
      ...['specs', 'raw', 'ssm-output'].map((p) => `AwsSolutions-IAM5[Resource::${arnRef(bucket)}/${p}/*]`),
    );
  }
}
