/** Ec2SsmFleet against mocked EC2/SSM clients: exact inputs and every error mapping. */
import {
  DescribeAvailabilityZonesCommand,
  DescribeInstancesCommand,
  EC2Client,
  StartInstancesCommand,
  StopInstancesCommand,
} from '@aws-sdk/client-ec2';
import { DescribeInstanceInformationCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { Ec2SsmFleet } from '../../../../functions/adapters/aws/fleet.js';
import { InstanceCapacityError } from '../../../../functions/core/errors.js';
import { ec2Err } from '../../../helpers/aws.js';

const client = { instanceId: 'i-0abc', region: 'ap-northeast-1' };
const ec2 = mockClient(EC2Client);
const ssm = mockClient(SSMClient);
const regions: string[] = [];
const fleet = new Ec2SsmFleet((region) => {
  regions.push(region);
  return { ec2: new EC2Client({ region }), ssm: new SSMClient({ region }) };
});

function instance(state: string, extra: Record<string, unknown> = {}) {
  return {
    Reservations: [
      {
        Instances: [
          {
            InstanceId: 'i-0abc',
            State: { Name: state },
            InstanceType: 'c6i.large',
            Placement: { AvailabilityZone: 'ap-northeast-1a' },
            ...extra,
          },
        ],
      },
    ],
  } as never;
}

beforeEach(() => {
  ec2.reset();
  ssm.reset();
  regions.length = 0;
});

describe('Ec2SsmFleet', () => {
  it('stops and starts the instance in its region', async () => {
    ec2.on(StopInstancesCommand).resolves({});
    ec2.on(StartInstancesCommand).resolves({});
    await fleet.stop(client);
    await fleet.start(client);
    expect(ec2.commandCalls(StopInstancesCommand)[0].args[0].input).toEqual({ InstanceIds: ['i-0abc'] });
    expect(ec2.commandCalls(StartInstancesCommand)[0].args[0].input).toEqual({ InstanceIds: ['i-0abc'] });
    expect(new Set(regions)).toEqual(new Set(['ap-northeast-1']));
  });

  it('accepts IncorrectInstanceState when already stopped, rethrows it when pending', async () => {
    ec2.on(StopInstancesCommand).rejects(ec2Err('IncorrectInstanceState'));
    ec2.on(DescribeInstancesCommand).resolvesOnce(instance('stopped')).resolvesOnce(instance('pending'));
    await expect(fleet.stop(client)).resolves.toBeUndefined();
    await expect(fleet.stop(client)).rejects.toMatchObject({ name: 'IncorrectInstanceState' });
  });

  it('accepts IncorrectInstanceState on start when already running', async () => {
    ec2.on(StartInstancesCommand).rejects(ec2Err('IncorrectInstanceState'));
    ec2.on(DescribeInstancesCommand).resolves(instance('running'));
    await expect(fleet.start(client)).resolves.toBeUndefined();
  });

  it('maps InsufficientInstanceCapacity on start to InstanceCapacityError', async () => {
    ec2.on(StartInstancesCommand).rejects(ec2Err('InsufficientInstanceCapacity'));
    const e = await fleet.start(client).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(InstanceCapacityError);
    expect((e as Error).name).toBe('InstanceCapacityError');
  });

  it('maps a start that fell back to stopped with a capacity reason to InstanceCapacityError', async () => {
    ec2.on(DescribeInstancesCommand).resolves(
      instance('stopped', {
        StateReason: { Code: 'Server.InsufficientInstanceCapacity', Message: 'Insufficient capacity.' },
      }),
    );
    ec2.on(DescribeAvailabilityZonesCommand).resolves({ AvailabilityZones: [] });
    await expect(fleet.describe(client, '2026-01-01T00:00:00Z')).rejects.toBeInstanceOf(InstanceCapacityError);
    // Without `since` (waiting for stopped) the same state is just reported.
    const info = await fleet.describe(client);
    expect(info.state).toBe('stopped');
    expect(info.stateReason).toContain('Server.InsufficientInstanceCapacity');
  });

  it('describes state, AZ id (via DescribeAvailabilityZones), type, and SSM readiness after since', async () => {
    ec2.on(DescribeInstancesCommand).resolves(instance('running'));
    ec2
      .on(DescribeAvailabilityZonesCommand)
      .resolves({ AvailabilityZones: [{ ZoneName: 'ap-northeast-1a', ZoneId: 'apne1-az4' }] });
    ssm.on(DescribeInstanceInformationCommand).resolves({
      InstanceInformationList: [
        { InstanceId: 'i-0abc', PingStatus: 'Online', LastPingDateTime: new Date('2026-01-01T00:01:00Z') },
      ],
    });
    const ready = await fleet.describe(client, '2026-01-01T00:00:00Z');
    expect(ready).toEqual({
      instanceId: 'i-0abc',
      state: 'running',
      commandReady: true,
      azId: 'apne1-az4',
      instanceType: 'c6i.large',
      stateReason: undefined,
    });
    expect(ec2.commandCalls(DescribeAvailabilityZonesCommand)[0].args[0].input).toEqual({
      ZoneNames: ['ap-northeast-1a'],
    });
    expect(ssm.commandCalls(DescribeInstanceInformationCommand)[0].args[0].input).toEqual({
      Filters: [{ Key: 'InstanceIds', Values: ['i-0abc'] }],
    });
    // A ping from before the start is stale: not ready yet.
    const stale = await fleet.describe(client, '2026-01-01T00:02:00Z');
    expect(stale.commandReady).toBe(false);
    // The AZ id is cached per region.
    expect(ec2.commandCalls(DescribeAvailabilityZonesCommand)).toHaveLength(1);
  });

  it('is not command-ready while the agent is ConnectionLost or the instance is not running', async () => {
    ec2.on(DescribeInstancesCommand).resolvesOnce(instance('running')).resolvesOnce(instance('pending'));
    ec2.on(DescribeAvailabilityZonesCommand).resolves({ AvailabilityZones: [] });
    ssm.on(DescribeInstanceInformationCommand).resolves({
      InstanceInformationList: [{ InstanceId: 'i-0abc', PingStatus: 'ConnectionLost', LastPingDateTime: new Date() }],
    });
    expect((await fleet.describe(client)).commandReady).toBe(false);
    expect((await fleet.describe(client)).commandReady).toBe(false);
    expect(ssm.commandCalls(DescribeInstanceInformationCommand)).toHaveLength(1);
  });
});
