/**
 * readDeployedOutputs (cli/testbed/deployed-outputs.ts) against the SDK's real GetParameter
 * command shapes (aws-sdk-client-mock): each stack's parameter in its own region, only string
 * outputs kept, and one clear error for a parameter that is missing or not a JSON object.
 */
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { readDeployedOutputs } from '../../../cli/testbed/deployed-outputs.js';
import { TestbedCliError } from '../../../cli/testbed/testbed-cli-error.js';

const ssm = mockClient(SSMClient);
afterEach(() => ssm.reset());

const opts = { clientRegion: 'ap-northeast-1', peerRegion: 'ap-northeast-3' };

describe('readDeployedOutputs', () => {
  it("reads each stack's outputs parameter and keeps the string outputs", async () => {
    ssm
      .on(GetParameterCommand, { Name: '/pathbench/testbed/outputs/PathbenchTestbedPeer' })
      .resolves({ Parameter: { Value: JSON.stringify({ PeerIp: '10.3.0.10', Count: 3 }) } })
      .on(GetParameterCommand, { Name: '/pathbench/testbed/outputs/PathbenchTestbedClient' })
      .resolves({ Parameter: { Value: JSON.stringify({ ClientInstanceId: 'i-0123456789abcdef0' }) } });
    expect(await readDeployedOutputs(opts)).toEqual({
      PathbenchTestbedPeer: { PeerIp: '10.3.0.10' },
      PathbenchTestbedClient: { ClientInstanceId: 'i-0123456789abcdef0' },
    });
  });

  it('says which stack is not deployed, and refuses a parameter that is not a JSON object', async () => {
    const notFound = Object.assign(new Error('Parameter not found'), { name: 'ParameterNotFound' });
    ssm.on(GetParameterCommand).rejects(notFound);
    await expect(readDeployedOutputs(opts)).rejects.toThrow(
      /PathbenchTestbedPeer is not deployed in ap-northeast-3 \(no SSM parameter/,
    );
    ssm.reset();
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: '["10.3.0.10"]' } });
    const e = await readDeployedOutputs(opts).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TestbedCliError);
    expect((e as Error).message).toMatch(/cannot read .* not a JSON object/);
  });
});
