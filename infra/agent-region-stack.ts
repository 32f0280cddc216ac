/**
 * The agent in one more region of a mesh: one small stack per region (context
 * `meshRegions=us-east-1,eu-west-1,…`, infra/app.ts) holding the agent bundle as an asset and the
 * probe's SSM Command document under a fixed name, `<pipeline stack>-Probe`. SSM sends a command
 * only with a document of the instance's own region, so every region a client sits in needs one.
 *
 * The pipeline's functions find them without a cross-region reference (CloudFormation has none):
 * the document name is fixed, and the bundle lands in that region's CDK assets bucket under the
 * same content-hash key as the pipeline stack's own copy (checked at synth, {@link probeRegions}).
 * The pipeline stack passes the map to its functions as PATHBENCH_PROBE_REGIONS and lets them
 * send commands in those regions only (infra/grants.ts).
 */
import { CfnOutput, DefaultStackSynthesizer, Stack, type StackProps, Token } from 'aws-cdk-lib';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import type { Construct } from 'constructs';
import type { ProbeLocation } from '../functions/adapters/aws/aws-deps.js';
import { probeDocumentContent } from '../functions/adapters/aws/probe-document.js';
import { agentBundle } from './infra-paths.js';

/** The probe document's name in the agent region stacks of a pipeline stack. */
export function agentDocumentName(pipelineStackName: string): string {
  return `${pipelineStackName}-Probe`;
}

/** The CDK assets bucket of `region` in the stack's account (the default synthesizer's bootstrap bucket). */
export function assetsBucketName(scope: Construct, region: string): string {
  return DefaultStackSynthesizer.DEFAULT_FILE_ASSETS_BUCKET_NAME.replace(
    /\$\{Qualifier\}/,
    DefaultStackSynthesizer.DEFAULT_QUALIFIER,
  )
    .replace(/\$\{AWS::AccountId\}/, Stack.of(scope).account)
    .replace(/\$\{AWS::Region\}/, region);
}

/** Region codes as the meshRegions context gives them: lower-case, like eu-west-1. */
export function parseMeshRegions(text: string | undefined, home: string | undefined): string[] {
  if (!text) return [];
  const regions = [
    ...new Set(
      text
        .split(',')
        .map((r) => r.trim())
        .filter(Boolean),
    ),
  ];
  for (const r of regions) {
    if (!/^[a-z]{2}(-[a-z]+)+-\d$/.test(r))
      throw new Error(`meshRegions: expected region codes like eu-west-1, got "${r}"`);
  }
  if (regions.length > 0 && (home === undefined || Token.isUnresolved(home))) {
    throw new Error('meshRegions: the pipeline stack needs an explicit region (set CDK_DEFAULT_REGION or AWS_REGION)');
  }
  return regions.filter((r) => r !== home);
}

export interface AgentRegionStackProps extends StackProps {
  /** The pipeline stack's name: the document is named after it. */
  pipelineStackName: string;
  /** The agent bundle; default the project's, built when missing or stale (infra/infra-paths.ts agentBundle). */
  agentBundlePath?: string;
}

/** The agent bundle and the probe document in one region. */
export class AgentRegionStack extends Stack {
  readonly agentAsset: s3assets.Asset;
  readonly document: ssm.CfnDocument;

  constructor(scope: Construct, id: string, props: AgentRegionStackProps) {
    super(scope, id, props);
    this.agentAsset = new s3assets.Asset(this, 'AgentBundle', { path: props.agentBundlePath ?? agentBundle() });
    this.document = new ssm.CfnDocument(this, 'ProbeDocument', {
      name: agentDocumentName(props.pipelineStackName),
      documentType: 'Command',
      documentFormat: 'JSON',
      content: probeDocumentContent(),
      // A named document cannot be replaced in place: a changed document becomes a new version.
      updateMethod: 'NewVersion',
    });
    new CfnOutput(this, 'ProbeDocumentName', { value: this.document.ref });
    new CfnOutput(this, 'AgentBucket', { value: this.agentAsset.s3BucketName });
    new CfnOutput(this, 'AgentKey', { value: this.agentAsset.s3ObjectKey });
  }
}

/** Where the pipeline's functions find the document and bundle in each agent region. */
export function probeRegions(
  pipeline: Construct,
  pipelineStackName: string,
  regions: readonly string[],
): Record<string, ProbeLocation> {
  return Object.fromEntries(
    regions.map((region) => [
      region,
      { documentName: agentDocumentName(pipelineStackName), agentBucket: assetsBucketName(pipeline, region) },
    ]),
  );
}

/** Throws when a region stack's bundle key differs from the pipeline's: the runner sends one key. */
export function checkAgentKeys(pipelineAgentKey: string, stacks: readonly AgentRegionStack[]): void {
  for (const s of stacks) {
    if (s.agentAsset.s3ObjectKey !== pipelineAgentKey) {
      throw new Error(
        `agent region ${s.region}: bundle key ${s.agentAsset.s3ObjectKey} differs from the pipeline's ${pipelineAgentKey}; deploy the same agent bundle to every region`,
      );
    }
  }
}

/** One agent region stack per region, `<pipeline stack>-Agent-<region>`, checked against the pipeline's bundle. */
export function addAgentRegions(
  app: Construct,
  pipeline: { stackName: string; account: string; agentAsset: s3assets.Asset },
  regions: readonly string[],
  agentBundlePath?: string,
): AgentRegionStack[] {
  const stacks = regions.map(
    (region) =>
      new AgentRegionStack(app, `${pipeline.stackName}-Agent-${region}`, {
        env: { account: Token.isUnresolved(pipeline.account) ? undefined : pipeline.account, region },
        description: `pathbench: the agent bundle and probe document in ${region}`,
        pipelineStackName: pipeline.stackName,
        agentBundlePath,
      }),
  );
  checkAgentKeys(pipeline.agentAsset.s3ObjectKey, stacks);
  return stacks;
}
