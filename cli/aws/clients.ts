/** The AWS SDK clients the CLI uses: Step Functions, S3 and SSM, all in one region. */
import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import { SSMClient } from '@aws-sdk/client-ssm';

export interface AwsClients {
  sfn: SFNClient;
  s3: S3Client;
  ssm: SSMClient;
}

/** Clients for a region (undefined: the SDK's own default chain). */
export type ClientsFor = (region: string | undefined) => AwsClients;

export const makeClients: ClientsFor = (region) => {
  // Node 20 is this project's engine; the SDK's Node 22 notice would break the one-line errors.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const cfg = region ? { region } : {};
  return { sfn: new SFNClient(cfg), s3: new S3Client(cfg), ssm: new SSMClient(cfg) };
};
