/** Ec2SsmFleet against mocked EC2/SSM clients: exact inputs and every error mapping. */
import {
  DescribeAvailabilityZonesCommand,
  DescribeInstancesCommand,
  DescribeInstanceTypesCommand,
  type DescribeInstanceTypesCommandOutput,
  EC2Client,
  StartInstancesCommand,
  StopInstancesCommand,
} from '@aws-sdk/client-ec2';
import { DescribeInstanceInformationCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { InstanceCapacityError } from '../../../../core/errors.js';
import { Ec2SsmFleet } from '../../../../functions/adapters/aws/ec2-fleet.js';
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

  describe('network', () => {
    // A fresh adapter per test: the AZ id and bandwidth caches must not carry over.
    const fresh = () =>
      new Ec2SsmFleet((region) => ({ ec2: new EC2Client({ region }), ssm: new SSMClient({ region }) }));
    // The shape DescribeInstanceTypes returns for c6i.large (one network card).
    const c6iLarge = {
      $metadata: {},
      InstanceTypes: [
        {
          InstanceType: 'c6i.large',
          NetworkInfo: {
            NetworkPerformance: 'Up to 12.5 Gigabit',
            MaximumNetworkInterfaces: 3,
            MaximumNetworkCards: 1,
            DefaultNetworkCardIndex: 0,
            NetworkCards: [
              {
                NetworkCardIndex: 0,
                NetworkPerformance: 'Up to 12.5 Gigabit',
                MaximumNetworkInterfaces: 3,
                BaselineBandwidthInGbps: 0.781,
                PeakBandwidthInGbps: 12.5,
              },
            ],
          },
        },
      ],
    } satisfies DescribeInstanceTypesCommandOutput;

    it('returns type, AZ id and the type’s baseline / peak bandwidth in bit/s, cached per type', async () => {
      ec2.on(DescribeInstancesCommand).resolves(instance('running'));
      ec2
        .on(DescribeAvailabilityZonesCommand)
        .resolves({ AvailabilityZones: [{ ZoneName: 'ap-northeast-1a', ZoneId: 'apne1-az4' }] });
      ec2.on(DescribeInstanceTypesCommand).resolves(c6iLarge);
      const f = fresh();
      expect(await f.network(client)).toEqual({
        instanceType: 'c6i.large',
        azId: 'apne1-az4',
        baselineBps: 781_000_000,
        peakBps: 12_500_000_000,
      });
      expect(ec2.commandCalls(DescribeInstancesCommand)[0].args[0].input).toEqual({ InstanceIds: ['i-0abc'] });
      expect(ec2.commandCalls(DescribeInstanceTypesCommand)[0].args[0].input).toEqual({ InstanceTypes: ['c6i.large'] });
      await f.network(client);
      expect(ec2.commandCalls(DescribeInstanceTypesCommand)).toHaveLength(1);
      expect(ec2.commandCalls(DescribeAvailabilityZonesCommand)).toHaveLength(1);
      // No machine was stopped or started to learn this.
      expect(ec2.commandCalls(StopInstancesCommand)).toHaveLength(0);
      expect(ssm.commandCalls(DescribeInstanceInformationCommand)).toHaveLength(0);
    });

    it('uses the default network card of a multi-card type and the AZ id the instance already names', async () => {
      ec2.on(DescribeInstancesCommand).resolves(
        instance('stopped', {
          InstanceType: 'c6in.32xlarge',
          Placement: { AvailabilityZone: 'ap-northeast-1a', AvailabilityZoneId: 'apne1-az4' },
        }),
      );
      ec2.on(DescribeInstanceTypesCommand).resolves({
        InstanceTypes: [
          {
            InstanceType: 'c6in.32xlarge',
            NetworkInfo: {
              DefaultNetworkCardIndex: 1,
              NetworkCards: [
                { NetworkCardIndex: 0, BaselineBandwidthInGbps: 100, PeakBandwidthInGbps: 100 },
                { NetworkCardIndex: 1, BaselineBandwidthInGbps: 50, PeakBandwidthInGbps: 60 },
              ],
            },
          },
        ],
      });
      expect(await fresh().network(client)).toEqual({
        instanceType: 'c6in.32xlarge',
        azId: 'apne1-az4',
        baselineBps: 50e9,
        peakBps: 60e9,
      });
      expect(ec2.commandCalls(DescribeAvailabilityZonesCommand)).toHaveLength(0);
    });

    it('leaves out figures the type does not publish, and fails for an unknown instance', async () => {
      ec2.on(DescribeInstancesCommand).resolvesOnce(instance('running')).resolvesOnce({ Reservations: [] });
      ec2.on(DescribeAvailabilityZonesCommand).resolves({ AvailabilityZones: [] });
      ec2.on(DescribeInstanceTypesCommand).resolves({
        InstanceTypes: [{ InstanceType: 'c6i.large', NetworkInfo: { NetworkPerformance: 'Up to 12.5 Gigabit' } }],
      });
      const f = fresh();
      expect(await f.network(client)).toEqual({ instanceType: 'c6i.large' });
      await expect(f.network(client)).rejects.toThrow(/i-0abc not found/);
    });

    it('passes EC2 errors on (BeginPath turns them into a note)', async () => {
      ec2.on(DescribeInstancesCommand).resolves(instance('running'));
      ec2.on(DescribeAvailabilityZonesCommand).resolves({ AvailabilityZones: [] });
      ec2.on(DescribeInstanceTypesCommand).rejects(ec2Err('UnauthorizedOperation'));
      await expect(fresh().network(client)).rejects.toMatchObject({ name: 'UnauthorizedOperation' });
    });
  });
});
