/** SsmCommandRunner across the regions of a mesh: each client's region gets its own document and agent bucket. */
import { ListCommandsCommand, SendCommandCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { ProbeCommandFailedError } from '../../../../core/errors.js';
import { keys } from '../../../../core/keys.js';
import { parseProbeRegions, readAwsConfig } from '../../../../functions/adapters/aws/aws-deps.js';
import { SsmCommandRunner } from '../../../../functions/adapters/aws/ssm-runner.js';

const ssm = mockClient(SSMClient);
const runner = new SsmCommandRunner((region) => new SSMClient({ region }), {
  documentName: 'Pathbench-ProbeDocument-ABC',
  bucket: 'pb-data',
  agentBucket: 'cdk-hnb659fds-assets-123456789012-us-east-1',
  agentKey: '0123abcd.cjs',
  homeRegion: 'us-east-1',
  regions: {
    'eu-west-1': { documentName: 'Pathbench-Probe', agentBucket: 'cdk-hnb659fds-assets-123456789012-eu-west-1' },
  },
});
const cmd = (region: string) => ({
  runId: 'run-1',
  pathId: `${region}--us-east-1`,
  client: { instanceId: 'i-0abc12345', region },
  specKey: keys.spec('run-1', `${region}--us-east-1`, 'i-0abc12345'),
  rawPrefix: keys.clientRawPrefix(`${region}--us-east-1`, 'run-1', 'i-0abc12345'),
  timeoutSeconds: 60,
});

beforeEach(() => ssm.reset());

describe('SsmCommandRunner in several regions', () => {
  it("sends in the client's region with that region's document and agent bucket", async () => {
    ssm.on(SendCommandCommand).resolves({ Command: { CommandId: 'cmd-eu' } });
    expect(await runner.send(cmd('eu-west-1'))).toEqual({ commandId: 'cmd-eu' });
    const sent = ssm.commandCalls(SendCommandCommand)[0];
    expect(await (sent.thisValue as SSMClient).config.region()).toBe('eu-west-1');
    expect(sent.args[0].input.DocumentName).toBe('Pathbench-Probe');
    expect(sent.args[0].input.Parameters?.agentBucket).toEqual(['cdk-hnb659fds-assets-123456789012-eu-west-1']);
    expect(sent.args[0].input.Parameters?.agentKey).toEqual(['0123abcd.cjs']);
    // The retry check looks for the command under the same regional document.
    const listed = ssm.commandCalls(ListCommandsCommand)[0];
    expect(await (listed.thisValue as SSMClient).config.region()).toBe('eu-west-1');
    expect(listed.args[0].input.Filters?.[0]).toEqual({ key: 'DocumentName', value: 'Pathbench-Probe' });

    // The home region keeps the pipeline stack's own document.
    await runner.send(cmd('us-east-1'));
    expect(ssm.commandCalls(SendCommandCommand)[1].args[0].input.DocumentName).toBe('Pathbench-ProbeDocument-ABC');
  });

  it('refuses a region the agent is not deployed to, naming the regions it is in', async () => {
    const sent = runner.send(cmd('ap-south-1'));
    await expect(sent).rejects.toBeInstanceOf(ProbeCommandFailedError);
    await expect(sent).rejects.toThrow(
      'the probe document is not deployed in ap-south-1 (deployed in: eu-west-1, us-east-1); deploy with -c meshRegions=…,ap-south-1',
    );
    expect(ssm.commandCalls(SendCommandCommand)).toHaveLength(0);
  });

  it('reads the regions from the environment, refusing a malformed entry', () => {
    const env = {
      AWS_REGION: 'us-east-1',
      PATHBENCH_BUCKET: 'b',
      PATHBENCH_ATHENA_WORKGROUP: 'w',
      PATHBENCH_GLUE_DATABASE: 'd',
      PATHBENCH_LOCK_TABLE: 'l',
      PATHBENCH_PROBE_DOCUMENT: 'doc',
      PATHBENCH_AGENT_BUCKET: 'ab',
      PATHBENCH_AGENT_KEY: 'k.cjs',
    };
    expect(readAwsConfig(env).probeRegions).toEqual({});
    const regions = { 'eu-west-1': { documentName: 'Pathbench-Probe', agentBucket: 'x' } };
    expect(readAwsConfig({ ...env, PATHBENCH_PROBE_REGIONS: JSON.stringify(regions) }).probeRegions).toEqual(regions);
    expect(() => parseProbeRegions('{"eu-west-1":{"documentName":"d"}}', 'PATHBENCH_PROBE_REGIONS')).toThrow(
      /expected "<region>": \{ "documentName": string, "agentBucket": string \}, got "eu-west-1"/,
    );
    expect(() => readAwsConfig({ ...env, PATHBENCH_PROBE_REGIONS: 'nope' })).toThrow(
      /PATHBENCH_PROBE_REGIONS: expected JSON/,
    );
  });
});
