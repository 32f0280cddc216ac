/**
 * Finding the deployed pipeline: the state machine ARN and bucket come from flags, then
 * PATHBENCH_STATE_MACHINE_ARN / PATHBENCH_BUCKET, then the saved `cdk deploy --outputs-file`
 * (.pathbench/aws-outputs.json), then the stack's SSM parameter /pathbench/config (the project
 * ships the SSM client, not the CloudFormation one).
 */
import { existsSync } from 'node:fs';
import { GetParameterCommand } from '@aws-sdk/client-ssm';
import type { Command } from 'commander';
import { z } from 'zod';
import { parseDocument } from '../../core/stored-document.js';
import { PIPELINE_OUTPUTS_FILE, readOutputsFile } from '../outputs-file.js';
import { AwsCliError, explainAwsError } from './aws-errors.js';
import { type ClientsFor, makeClients } from './clients.js';

const CONFIG_PARAMETER = '/pathbench/config';

/** The SSM parameter CONFIG_PARAMETER: the pipeline stack's outputs as JSON (infra/pipeline-stack.ts). */
export const stackConfigSchema = z.record(z.string(), z.string());
export const DEFAULT_STACK = 'Pathbench';

export interface StackConfig {
  stateMachineArn: string;
  /** The mesh machine (`<stack>-Mesh`): mesh plans run there, a Distributed Map per round. */
  meshStateMachineArn?: string;
  bucket: string;
  region: string;
}

/**
 * The mesh machine's ARN from the measurement machine's: the stack names them `<stack>-Measurement`
 * and `<stack>-Mesh` (infra/constructs/orchestration.ts). Undefined for a machine named otherwise.
 */
export function meshArnFrom(stateMachineArn: string): string | undefined {
  const m = /^(arn:[^:]+:states:[^:]+:[^:]+:stateMachine:)(.+)-Measurement$/.exec(stateMachineArn);
  return m ? `${m[1]}${m[2]}-Mesh`.slice(0, m[1].length + 80) : undefined;
}

export interface CommonFlags {
  region?: string;
  stateMachine?: string;
  meshStateMachine?: string;
  bucket?: string;
  stack?: string;
}

/** Add the flags every command that talks to the deployed pipeline takes (see CommonFlags). */
export function commonOptions(cmd: Command): Command {
  return cmd
    .option('--region <region>', 'AWS region (default: from the state machine ARN or AWS_REGION)')
    .option('--state-machine <arn>', 'state machine ARN (default: stack outputs)')
    .option('--mesh-state-machine <arn>', 'mesh state machine ARN, for mesh plans (default: stack outputs)')
    .option('--bucket <name>', 'data bucket (default: stack outputs)')
    .option('--stack <name>', 'pipeline stack name', DEFAULT_STACK);
}

/** The saved outputs of one stack; undefined when `pathbench deploy` has not saved any here. */
async function savedOutputs(stack: string): Promise<Record<string, string> | undefined> {
  if (!existsSync(PIPELINE_OUTPUTS_FILE)) return undefined;
  return (await readOutputsFile(PIPELINE_OUTPUTS_FILE))[stack];
}

/** Region of an ARN ("arn:aws:states:<region>:…"). */
function arnRegion(arn: string): string | undefined {
  return arn.split(':')[3] || undefined;
}

/** Find the state machine and bucket: flags > env > outputs file > SSM /pathbench/config. */
export async function resolveStackConfig(
  flags: CommonFlags,
  env: Record<string, string | undefined>,
  clientsFor: ClientsFor = makeClients,
): Promise<StackConfig> {
  let sm = flags.stateMachine ?? env.PATHBENCH_STATE_MACHINE_ARN;
  let mesh = flags.meshStateMachine ?? env.PATHBENCH_MESH_STATE_MACHINE_ARN;
  let bucket = flags.bucket ?? env.PATHBENCH_BUCKET;
  if (!sm || !bucket) {
    const saved = await savedOutputs(flags.stack ?? DEFAULT_STACK);
    sm ??= saved?.StateMachineArn;
    bucket ??= saved?.BucketName;
    if (saved?.StateMachineArn === sm) mesh ??= saved?.MeshStateMachineArn;
  }
  const region = flags.region ?? (sm ? arnRegion(sm) : undefined) ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  if (!sm || !bucket) {
    let value: string | undefined;
    try {
      const out = await clientsFor(region).ssm.send(new GetParameterCommand({ Name: CONFIG_PARAMETER }));
      value = out.Parameter?.Value;
    } catch (e) {
      if (e instanceof Error && e.name === 'ParameterNotFound') {
        throw new AwsCliError(
          `the pipeline is not deployed in ${region ?? 'this region'} (no ${CONFIG_PARAMETER}); run \`pathbench deploy\` or pass --state-machine and --bucket`,
        );
      }
      throw explainAwsError(e);
    }
    const cfg = parseDocument(CONFIG_PARAMETER, value ?? '{}', stackConfigSchema, 'stack configuration');
    if (!sm || sm === cfg.StateMachineArn) mesh ??= cfg.MeshStateMachineArn;
    sm ??= cfg.StateMachineArn;
    bucket ??= cfg.BucketName;
  }
  if (!sm || !bucket) throw new AwsCliError(`${CONFIG_PARAMETER} lacks StateMachineArn or BucketName`);
  const finalRegion = region ?? arnRegion(sm);
  if (!finalRegion) throw new AwsCliError('no AWS region: set AWS_REGION or pass --region');
  mesh ??= meshArnFrom(sm);
  return { stateMachineArn: sm, ...(mesh ? { meshStateMachineArn: mesh } : {}), bucket, region: finalRegion };
}
