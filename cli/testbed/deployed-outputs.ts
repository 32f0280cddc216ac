/**
 * The deployed testbed's outputs, read from the SSM parameter each testbed stack writes
 * (`/pathbench/testbed/outputs/<stack>`), because the project ships the SSM client and not the
 * CloudFormation one; a saved `cdk deploy --outputs-file` works without any AWS access.
 */
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { z } from 'zod';
import { errorMessage } from '../../core/errors.js';
import type { Outputs } from '../outputs-file.js';
import { TestbedCliError } from './testbed-cli-error.js';
import { DEFAULT_PREFIX, outputsParameter, stackNames } from './testbed-stacks.js';

function isCredentialsError(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  return (
    e.name === 'CredentialsProviderError' ||
    /credential/i.test(e.message) ||
    e.name === 'ExpiredTokenException' ||
    e.name === 'UnrecognizedClientException'
  );
}

/**
 * Read the deployed testbed outputs (client stack in the client region, peer stack in the peer
 * region) from their SSM parameters, in the `cdk deploy --outputs-file` shape.
 * @throws TestbedCliError for missing credentials or a stack that is not deployed.
 */
export async function readDeployedOutputs(opts: {
  clientRegion: string;
  peerRegion: string;
  prefix?: string;
  ssmFor?: (region: string) => SSMClient;
}): Promise<Outputs> {
  const names = stackNames(opts.prefix ?? DEFAULT_PREFIX);
  const ssmFor = opts.ssmFor ?? ((region: string) => new SSMClient({ region }));
  const out: Outputs = {};
  for (const [stack, region] of [
    [names.peer, opts.peerRegion],
    [names.client, opts.clientRegion],
  ] as const) {
    const name = outputsParameter(stack);
    try {
      const res = await ssmFor(region).send(new GetParameterCommand({ Name: name }));
      const value = z.record(z.string(), z.unknown()).safeParse(JSON.parse(res.Parameter?.Value ?? '{}'));
      if (!value.success) throw new Error('not a JSON object');
      out[stack] = Object.fromEntries(
        Object.entries(value.data).filter((e): e is [string, string] => typeof e[1] === 'string'),
      );
    } catch (e: unknown) {
      if (isCredentialsError(e))
        throw new TestbedCliError(
          `no usable AWS credentials (${errorMessage(e)}); configure a profile, or pass --outputs FILE saved by \`cdk deploy --outputs-file\``,
          { cause: e },
        );
      if (e instanceof Error && e.name === 'ParameterNotFound')
        throw new TestbedCliError(`${stack} is not deployed in ${region} (no SSM parameter ${name})`, { cause: e });
      throw new TestbedCliError(`cannot read ${name} in ${region}: ${errorMessage(e)}`, { cause: e });
    }
  }
  return out;
}
