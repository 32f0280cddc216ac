/**
 * CommandRunner on SSM Run Command: send the project's own Command document with typed,
 * pattern-checked parameters, and map GetCommandInvocation to CommandStatus. Probe outputs are
 * uploaded to S3 by the document itself; stdout here is truncated and only used for a reason.
 */
import {
  CancelCommandCommand,
  GetCommandInvocationCommand,
  type GetCommandInvocationCommandOutput,
  ListCommandsCommand,
  SendCommandCommand,
  SSMClient,
} from '@aws-sdk/client-ssm';
import { ProbeCommandFailedError } from '../../../core/errors.js';
import type { ClientRef } from '../../../core/resolved-plan.js';
import type { CommandInvocation, CommandRunner, CommandStatus, ProbeCommand } from '../../ports.js';
import type { AwsPort, ProbeLocation } from './aws-deps.js';
import { checkProbeParameters } from './probe-document.js';
import { awsErrorName, isAwsError } from './sdk-errors.js';

export interface SsmCommandRunnerConfig {
  /** Name of the pathbench Command document (a CfnDocument's Ref). */
  documentName: string;
  /** Data bucket: specs are read from and raw outputs written to it. */
  bucket: string;
  agentBucket: string;
  agentKey: string;
  /**
   * The pipeline's own region: its document and agent bundle are `documentName`/`agentBucket`.
   * With it set, a client in another region is sent the probe only through `regions` (the agent
   * region stacks of a mesh, infra/agent-region-stack.ts); without it every region uses the above.
   */
  homeRegion?: string;
  /** The agent's document and bundle bucket in each other region it is deployed to (the key is the same). */
  regions?: Readonly<Record<string, ProbeLocation>>;
  /** How long SSM may wait for the instance to pick the command up (SendCommand TimeoutSeconds). */
  deliveryTimeoutSeconds?: number;
  /** How long "InvocationDoesNotExist" after sending still counts as Pending. */
  pendingGraceSeconds?: number;
  /**
   * After TimedOut / Cancelled: how long PollProbe waits for the document's stop trap to finish
   * uploading (it writes interrupted.json last). Default 60 s: the trap copies a handful of files
   * already in tmpfs. A KILL instead of a TERM leaves no marker, and the wait ends at this bound.
   */
  stopUploadGraceSeconds?: number;
  now?: () => Date;
}

const STATUS: Record<string, CommandStatus> = {
  Pending: 'Pending',
  Delayed: 'Pending',
  InProgress: 'InProgress',
  Cancelling: 'InProgress',
  Success: 'Success',
  Failed: 'Failed',
  TimedOut: 'TimedOut',
  Cancelled: 'Cancelled',
};

/** How far back a retried send looks for its command: an execution lasts at most a day. */
const SENT_LOOKBACK_MS = 24 * 3600 * 1000;

const TERMINAL = new Set(['Success', 'Failed', 'TimedOut', 'Cancelled']);

/** Map an SSM invocation status to ours; unknown statuses fail loudly rather than loop. */
export function mapSsmStatus(status: string | undefined): CommandStatus {
  const s = status ? STATUS[status] : undefined;
  if (!s) throw new ProbeCommandFailedError(`unexpected SSM command status ${JSON.stringify(status)}`);
  return s;
}

export class SsmCommandRunner implements CommandRunner {
  readonly stopUploadGraceSeconds: number;
  private readonly deliveryTimeout: number;
  private readonly pendingGraceMs: number;
  private readonly now: () => Date;

  constructor(
    private readonly ssmFor: (region: string) => SSMClient,
    private readonly config: SsmCommandRunnerConfig,
  ) {
    this.deliveryTimeout = Math.max(30, config.deliveryTimeoutSeconds ?? 600);
    this.pendingGraceMs = (config.pendingGraceSeconds ?? 300) * 1000;
    this.stopUploadGraceSeconds = Math.max(0, config.stopUploadGraceSeconds ?? 60);
    this.now = config.now ?? (() => new Date());
  }

  /** The document and agent bucket in a client's region; a region the agent is not deployed to is refused. */
  locate(region: string): ProbeLocation {
    const { homeRegion, regions } = this.config;
    const home = { documentName: this.config.documentName, agentBucket: this.config.agentBucket };
    if (homeRegion === undefined || region === homeRegion) return home;
    const there = regions?.[region];
    if (!there) {
      const deployed = [homeRegion, ...Object.keys(regions ?? {})].sort().join(', ');
      throw new ProbeCommandFailedError(
        `the probe document is not deployed in ${region} (deployed in: ${deployed}); deploy with -c meshRegions=…,${region}`,
      );
    }
    return there;
  }

  async send(cmd: ProbeCommand): Promise<{ commandId: string }> {
    const where = this.locate(cmd.client.region);
    const values = {
      bucket: this.config.bucket,
      specKey: cmd.specKey,
      rawPrefix: cmd.rawPrefix,
      runId: cmd.runId,
      pathId: cmd.pathId,
      agentBucket: where.agentBucket,
      agentKey: this.config.agentKey,
      executionTimeout: String(Math.ceil(cmd.timeoutSeconds)),
    };
    try {
      checkProbeParameters(values);
    } catch (e) {
      throw new ProbeCommandFailedError(e instanceof Error ? e.message : String(e));
    }
    const ssm = this.ssmFor(cmd.client.region);
    // SendCommand has no idempotency token: a SendProbe retried after a Lambda died between
    // SendCommand and the manifest write finds its command instead of starting a second agent
    // that would write the same raw keys.
    const existing = await this.alreadySent(ssm, cmd, where.documentName);
    if (existing) return { commandId: existing };
    const out = await ssm.send(
      new SendCommandCommand({
        DocumentName: where.documentName,
        InstanceIds: [cmd.client.instanceId],
        Parameters: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, [v]])),
        TimeoutSeconds: this.deliveryTimeout,
        OutputS3BucketName: this.config.bucket,
        OutputS3KeyPrefix: `ssm-output/run=${cmd.runId}/path=${cmd.pathId}`,
        Comment: `pathbench ${cmd.runId} ${cmd.pathId}`.slice(0, 100),
      }),
    );
    const commandId = out.Command?.CommandId;
    if (!commandId) throw new ProbeCommandFailedError('SendCommand returned no command id');
    return { commandId };
  }

  /** The command already sent for this run and path to this instance, if any (parameters name both). */
  private async alreadySent(ssm: SSMClient, cmd: ProbeCommand, documentName: string): Promise<string | undefined> {
    const since = new Date(this.now().getTime() - SENT_LOOKBACK_MS).toISOString().replace(/\.\d{3}Z$/, 'Z');
    let token: string | undefined;
    do {
      const out = await ssm.send(
        new ListCommandsCommand({
          InstanceId: cmd.client.instanceId,
          Filters: [
            { key: 'DocumentName', value: documentName },
            { key: 'InvokedAfter', value: since },
          ],
          MaxResults: 50,
          ...(token ? { NextToken: token } : {}),
        }),
      );
      const found = out?.Commands?.find(
        (c) => c.Parameters?.runId?.[0] === cmd.runId && c.Parameters?.pathId?.[0] === cmd.pathId,
      );
      if (found?.CommandId) return found.CommandId;
      token = out?.NextToken;
    } while (token);
    return undefined;
  }

  async status(commandId: string, client: ClientRef): Promise<CommandInvocation> {
    const ssm = this.ssmFor(client.region);
    let inv: GetCommandInvocationCommandOutput;
    try {
      inv = await ssm.send(new GetCommandInvocationCommand({ CommandId: commandId, InstanceId: client.instanceId }));
    } catch (e) {
      if (!isAwsError(e, 'InvocationDoesNotExist')) throw e;
      // Right after SendCommand the invocation is not visible yet; that is Pending, for a while.
      return this.notYetVisible(ssm, commandId, client);
    }
    const status = mapSsmStatus(inv.Status);
    if (status === 'Pending' || status === 'InProgress' || status === 'Success') return { status };
    const stderr = inv.StandardErrorContent?.trim();
    const detail = [inv.StatusDetails, stderr ? stderr.slice(-300) : undefined].filter(Boolean).join(': ');
    return { status, detail: detail || undefined };
  }

  /**
   * Cancel a command that overran its deadline on this one instance. A command that already
   * finished, or that SSM no longer knows, needs nothing: cancelling is idempotent.
   */
  async cancel(commandId: string, client: ClientRef): Promise<void> {
    const ssm = this.ssmFor(client.region);
    try {
      await ssm.send(new CancelCommandCommand({ CommandId: commandId, InstanceIds: [client.instanceId] }));
    } catch (e) {
      if (isAwsError(e, 'InvalidCommandId')) return;
      // CancelCommand also refuses an instance that is gone or no longer managed; if the
      // invocation is already over there is nothing left to stop, so that is not an error.
      if (await this.finished(ssm, commandId, client)) return;
      throw new ProbeCommandFailedError(
        `could not cancel SSM command ${commandId} on ${client.instanceId}: ${awsErrorName(e) ?? 'Error'}: ${e instanceof Error ? e.message : String(e)}`,
        { cause: e },
      );
    }
  }

  /** True when the invocation has a terminal status; unknown or unreadable counts as not finished. */
  private async finished(ssm: SSMClient, commandId: string, client: ClientRef): Promise<boolean> {
    try {
      const inv = await ssm.send(
        new GetCommandInvocationCommand({ CommandId: commandId, InstanceId: client.instanceId }),
      );
      return TERMINAL.has(inv.Status ?? '');
    } catch {
      return false;
    }
  }

  private async notYetVisible(ssm: SSMClient, commandId: string, client: ClientRef): Promise<CommandInvocation> {
    const listed = await ssm.send(new ListCommandsCommand({ CommandId: commandId }));
    const requested = listed.Commands?.[0]?.RequestedDateTime;
    if (!requested) {
      throw new ProbeCommandFailedError(`SSM command ${commandId} is unknown in ${client.region}`);
    }
    const waited = this.now().getTime() - requested.getTime();
    if (waited > this.pendingGraceMs) {
      throw new ProbeCommandFailedError(
        `SSM command ${commandId} never reached ${client.instanceId} (${Math.round(waited / 1000)} s after sending)`,
      );
    }
    return { status: 'Pending' };
  }
}

/** The runner port of a Lambda: Run Command with this region's document, and each agent region's. */
export const ssmRunner: AwsPort<'runner'> = ({ cfg }) => {
  const clients = new Map<string, SSMClient>();
  const ssmFor = (region: string) => {
    let c = clients.get(region);
    if (!c) {
      c = new SSMClient({ region });
      clients.set(region, c);
    }
    return c;
  };
  return new SsmCommandRunner(ssmFor, {
    documentName: cfg.document,
    bucket: cfg.bucket,
    agentBucket: cfg.agentBucket,
    agentKey: cfg.agentKey,
    homeRegion: cfg.region,
    regions: cfg.probeRegions,
  });
};
