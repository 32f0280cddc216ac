/**
 * Fleet adapter on EC2 + SSM: stop/start the client instance, describe it (state, AZ id,
 * instance type, state reason), tell whether the SSM agent is back online after a start, and
 * report its instance type's baseline and peak network bandwidth (DescribeInstanceTypes).
 */
import {
  type _InstanceType,
  DescribeAvailabilityZonesCommand,
  DescribeInstancesCommand,
  DescribeInstanceTypesCommand,
  EC2Client,
  StartInstancesCommand,
  StopInstancesCommand,
} from '@aws-sdk/client-ec2';
import { DescribeInstanceInformationCommand, SSMClient } from '@aws-sdk/client-ssm';
import type { ClientNetwork } from '../../../core/client-network.js';
import { InstanceCapacityError } from '../../../core/errors.js';
import type { ClientRef } from '../../../core/resolved-plan.js';
import type { Fleet, InstanceInfo, InstanceState } from '../../ports.js';
import { AWS_POLL_SECONDS, type AwsPort } from './aws-deps.js';
import { isAwsError } from './sdk-errors.js';

/** Per-region SDK clients; the client ref carries the region. */
export type RegionalClients = (region: string) => { ec2: EC2Client; ssm: SSMClient };

const CAPACITY_CODES = ['InsufficientInstanceCapacity', 'Server.InsufficientInstanceCapacity'];

export class Ec2SsmFleet implements Fleet {
  readonly rebootable = true;
  /** EC2 state changes take tens of seconds; polling faster only lengthens the history. */
  readonly pollSeconds: number;
  /** AZ name → AZ id, per region; AZ names differ per account, ids do not (seed 004). */
  private readonly azIds = new Map<string, string>();
  /** Instance type → its network card's bandwidth, per region; the figures are fixed per type. */
  private readonly bandwidths = new Map<string, Pick<ClientNetwork, 'baselineBps' | 'peakBps'>>();

  constructor(
    private readonly clients: RegionalClients,
    options: { pollSeconds?: number } = {},
  ) {
    this.pollSeconds = options.pollSeconds ?? AWS_POLL_SECONDS;
  }

  async stop(client: ClientRef): Promise<void> {
    const { ec2 } = this.clients(client.region);
    try {
      await ec2.send(new StopInstancesCommand({ InstanceIds: [client.instanceId] }));
    } catch (e) {
      // Already stopped/stopping is the state we want; anything else (e.g. pending) is real.
      if (isAwsError(e, 'IncorrectInstanceState')) {
        const state = await this.state(client);
        if (state === 'stopped' || state === 'stopping') return;
      }
      throw e;
    }
  }

  async start(client: ClientRef): Promise<void> {
    const { ec2 } = this.clients(client.region);
    try {
      await ec2.send(new StartInstancesCommand({ InstanceIds: [client.instanceId] }));
    } catch (e) {
      if (isAwsError(e, ...CAPACITY_CODES)) {
        throw new InstanceCapacityError(`no capacity to start ${client.instanceId} in ${client.region}`, { cause: e });
      }
      if (isAwsError(e, 'IncorrectInstanceState')) {
        const state = await this.state(client);
        if (state === 'running' || state === 'pending') return;
      }
      throw e;
    }
  }

  /**
   * Describe the instance. When `since` is given (the caller is waiting for a start it made at
   * `since`), a fall-back to stopped with a capacity reason throws InstanceCapacityError, and
   * commandReady requires an SSM ping newer than `since` (the agent's pre-stop ping is stale).
   */
  async describe(client: ClientRef, since?: string): Promise<InstanceInfo> {
    const { ec2, ssm } = this.clients(client.region);
    const out = await ec2.send(new DescribeInstancesCommand({ InstanceIds: [client.instanceId] }));
    const inst = out.Reservations?.flatMap((r) => r.Instances ?? []).find((i) => i.InstanceId === client.instanceId);
    if (!inst) throw new Error(`instance ${client.instanceId} not found in ${client.region}`);
    const state = (inst.State?.Name ?? 'pending') as InstanceState;
    const reasonCode = inst.StateReason?.Code;
    const stateReason = inst.StateReason ? `${reasonCode ?? ''}: ${inst.StateReason.Message ?? ''}` : undefined;
    if (since !== undefined && state === 'stopped' && reasonCode && CAPACITY_CODES.includes(reasonCode)) {
      throw new InstanceCapacityError(`${client.instanceId} fell back to stopped: ${stateReason}`);
    }
    const azId =
      inst.Placement?.AvailabilityZoneId ??
      (inst.Placement?.AvailabilityZone ? await this.azId(client.region, inst.Placement.AvailabilityZone) : undefined);
    let commandReady = false;
    if (state === 'running') {
      const info = await ssm.send(
        new DescribeInstanceInformationCommand({ Filters: [{ Key: 'InstanceIds', Values: [client.instanceId] }] }),
      );
      const entry = info.InstanceInformationList?.find((i) => i.InstanceId === client.instanceId);
      const ping = entry?.LastPingDateTime;
      commandReady =
        entry?.PingStatus === 'Online' &&
        (since === undefined || (ping !== undefined && ping.getTime() > new Date(since).getTime()));
    }
    return {
      instanceId: client.instanceId,
      state,
      commandReady,
      azId,
      instanceType: inst.InstanceType,
      stateReason,
    };
  }

  /**
   * Instance type and AZ id (DescribeInstances, AZ name → id as in describe) and the type's
   * baseline and peak bandwidth from DescribeInstanceTypes: NetworkInfo.NetworkCards of the
   * default network card (the one the primary interface, and so the probes, use), in Gbps → bit/s.
   */
  async network(client: ClientRef): Promise<ClientNetwork> {
    const { ec2 } = this.clients(client.region);
    const out = await ec2.send(new DescribeInstancesCommand({ InstanceIds: [client.instanceId] }));
    const inst = out.Reservations?.flatMap((r) => r.Instances ?? []).find((i) => i.InstanceId === client.instanceId);
    if (!inst) throw new Error(`instance ${client.instanceId} not found in ${client.region}`);
    const azId =
      inst.Placement?.AvailabilityZoneId ??
      (inst.Placement?.AvailabilityZone ? await this.azId(client.region, inst.Placement.AvailabilityZone) : undefined);
    const instanceType = inst.InstanceType;
    const bandwidth = instanceType ? await this.bandwidth(client.region, instanceType) : {};
    return {
      ...(instanceType ? { instanceType } : {}),
      ...(azId ? { azId } : {}),
      ...bandwidth,
    };
  }

  private async bandwidth(
    region: string,
    instanceType: _InstanceType,
  ): Promise<Pick<ClientNetwork, 'baselineBps' | 'peakBps'>> {
    const cacheKey = `${region}/${instanceType}`;
    const cached = this.bandwidths.get(cacheKey);
    if (cached) return cached;
    const { ec2 } = this.clients(region);
    const out = await ec2.send(new DescribeInstanceTypesCommand({ InstanceTypes: [instanceType] }));
    const net = out.InstanceTypes?.find((t) => t.InstanceType === instanceType)?.NetworkInfo;
    const cardIndex = net?.DefaultNetworkCardIndex ?? 0;
    const card = net?.NetworkCards?.find((c) => (c.NetworkCardIndex ?? 0) === cardIndex) ?? net?.NetworkCards?.[0];
    const bps = (gbps: number | undefined) => (gbps === undefined ? undefined : Math.round(gbps * 1e9));
    const baselineBps = bps(card?.BaselineBandwidthInGbps);
    const peakBps = bps(card?.PeakBandwidthInGbps);
    const found = {
      ...(baselineBps !== undefined ? { baselineBps } : {}),
      ...(peakBps !== undefined ? { peakBps } : {}),
    };
    if (net) this.bandwidths.set(cacheKey, found);
    return found;
  }

  private async state(client: ClientRef): Promise<string | undefined> {
    const { ec2 } = this.clients(client.region);
    const out = await ec2.send(new DescribeInstancesCommand({ InstanceIds: [client.instanceId] }));
    return out.Reservations?.[0]?.Instances?.[0]?.State?.Name;
  }

  private async azId(region: string, azName: string): Promise<string | undefined> {
    const cacheKey = `${region}/${azName}`;
    const cached = this.azIds.get(cacheKey);
    if (cached) return cached;
    const { ec2 } = this.clients(region);
    const out = await ec2.send(new DescribeAvailabilityZonesCommand({ ZoneNames: [azName] }));
    const id = out.AvailabilityZones?.find((z) => z.ZoneName === azName)?.ZoneId;
    if (id) this.azIds.set(cacheKey, id);
    return id;
  }
}

/** The fleet port of a Lambda: EC2 and SSM clients per region, made on first use. */
export const ec2Fleet: AwsPort<'fleet'> = () => {
  const clients = new Map<string, { ec2: EC2Client; ssm: SSMClient }>();
  return new Ec2SsmFleet((region) => {
    let c = clients.get(region);
    if (!c) {
      c = { ec2: new EC2Client({ region }), ssm: new SSMClient({ region }) };
      clients.set(region, c);
    }
    return c;
  });
};
