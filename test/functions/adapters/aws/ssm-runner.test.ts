/** SsmCommandRunner against a mocked SSM client: exact SendCommand input and status mapping. */
import {
  CancelCommandCommand,
  GetCommandInvocationCommand,
  InvalidCommandId,
  InvalidInstanceId,
  InvocationDoesNotExist,
  ListCommandsCommand,
  SendCommandCommand,
  SSMClient,
} from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { ProbeCommandFailedError } from '../../../../core/errors.js';
import { keys } from '../../../../core/keys.js';
import { mapSsmStatus, SsmCommandRunner } from '../../../../functions/adapters/aws/ssm-runner.js';

const ssm = mockClient(SSMClient);
let now = new Date('2026-01-01T00:00:10Z');
const runner = new SsmCommandRunner((region) => new SSMClient({ region }), {
  documentName: 'Pathbench-ProbeDocument-ABC',
  bucket: 'pb-data',
  agentBucket: 'cdk-assets-bucket',
  agentKey: '0123abcd.cjs',
  pendingGraceSeconds: 120,
  now: () => now,
});
const client = { instanceId: 'i-0abc', region: 'ap-northeast-1' };
const cmd = {
  runId: 'run-1',
  pathId: 'C',
  client,
  specKey: keys.spec('run-1', 'C', 'i-0123456789abcdef0'),
  rawPrefix: keys.clientRawPrefix('C', 'run-1', 'i-0123456789abcdef0'),
  timeoutSeconds: 1800,
};
const notYet = () => new InvocationDoesNotExist({ $metadata: {}, message: 'no invocation' });

beforeEach(() => {
  ssm.reset();
  now = new Date('2026-01-01T00:00:10Z');
});

describe('SsmCommandRunner', () => {
  it('sends our document with typed parameters only, output to S3, both timeouts', async () => {
    ssm.on(SendCommandCommand).resolves({ Command: { CommandId: 'cmd-1' } });
    expect(await runner.send(cmd)).toEqual({ commandId: 'cmd-1' });
    expect(ssm.commandCalls(SendCommandCommand)[0].args[0].input).toEqual({
      DocumentName: 'Pathbench-ProbeDocument-ABC',
      InstanceIds: ['i-0abc'],
      Parameters: {
        bucket: ['pb-data'],
        specKey: ['specs/run=run-1/path=C/client=i-0123456789abcdef0/spec.json'],
        rawPrefix: ['raw/path=C/run=run-1/client=i-0123456789abcdef0/'],
        runId: ['run-1'],
        pathId: ['C'],
        agentBucket: ['cdk-assets-bucket'],
        agentKey: ['0123abcd.cjs'],
        executionTimeout: ['1800'],
      },
      TimeoutSeconds: 600,
      OutputS3BucketName: 'pb-data',
      OutputS3KeyPrefix: 'ssm-output/run=run-1/path=C',
      Comment: 'pathbench run-1 C',
    });
  });

  it('a retried send finds the command already sent for this run and path instead of sending a second', async () => {
    ssm
      .on(ListCommandsCommand)
      .resolvesOnce({
        Commands: [
          {
            CommandId: 'other-path',
            DocumentName: 'Pathbench-ProbeDocument-ABC',
            Comment: 'pathbench run-1 B',
            Parameters: { runId: ['run-1'], pathId: ['B'] },
            InstanceIds: ['i-0abc'],
            Status: 'Success',
          },
        ],
        NextToken: 'page-2',
      })
      .resolves({
        Commands: [
          {
            CommandId: 'cmd-first',
            DocumentName: 'Pathbench-ProbeDocument-ABC',
            Comment: 'pathbench run-1 C',
            Parameters: { runId: ['run-1'], pathId: ['C'] },
            InstanceIds: ['i-0abc'],
            RequestedDateTime: new Date('2026-01-01T00:00:05Z'),
            Status: 'InProgress',
          },
        ],
      });
    expect(await runner.send(cmd)).toEqual({ commandId: 'cmd-first' });
    expect(ssm.commandCalls(SendCommandCommand)).toHaveLength(0);
    const lists = ssm.commandCalls(ListCommandsCommand).map((c) => c.args[0].input);
    expect(lists[0]).toEqual({
      InstanceId: 'i-0abc',
      Filters: [
        { key: 'DocumentName', value: 'Pathbench-ProbeDocument-ABC' },
        { key: 'InvokedAfter', value: '2025-12-31T00:00:10Z' },
      ],
      MaxResults: 50,
    });
    expect(lists[1]).toMatchObject({ NextToken: 'page-2' });
  });

  it('sends when no command of this run and path was sent before', async () => {
    ssm.on(ListCommandsCommand).resolves({ Commands: [] });
    ssm.on(SendCommandCommand).resolves({ Command: { CommandId: 'cmd-2' } });
    expect(await runner.send(cmd)).toEqual({ commandId: 'cmd-2' });
    expect(ssm.commandCalls(SendCommandCommand)).toHaveLength(1);
  });

  it('refuses parameters that do not match the document patterns before calling SSM', async () => {
    await expect(runner.send({ ...cmd, specKey: 'specs/$(reboot)/spec.json' })).rejects.toBeInstanceOf(
      ProbeCommandFailedError,
    );
    await expect(runner.send({ ...cmd, pathId: 'C;ls' })).rejects.toThrow(/pathId/);
    expect(ssm.commandCalls(SendCommandCommand)).toHaveLength(0);
  });

  it("gives a stopped command's trap 60 s to upload (PollProbe waits for interrupted.json that long), or what it is told", () => {
    expect(runner.stopUploadGraceSeconds).toBe(60);
    const told = new SsmCommandRunner((region) => new SSMClient({ region }), {
      documentName: 'd',
      bucket: 'b',
      agentBucket: 'a',
      agentKey: 'k',
      stopUploadGraceSeconds: 15,
    });
    expect(told.stopUploadGraceSeconds).toBe(15);
  });

  it('maps SSM statuses', async () => {
    expect(mapSsmStatus('Delayed')).toBe('Pending');
    expect(mapSsmStatus('Cancelling')).toBe('InProgress');
    expect(mapSsmStatus('TimedOut')).toBe('TimedOut');
    expect(() => mapSsmStatus('Exploded')).toThrow(ProbeCommandFailedError);
    ssm
      .on(GetCommandInvocationCommand)
      .resolvesOnce({ Status: 'InProgress' })
      .resolvesOnce({ Status: 'Success', StandardOutputContent: 'lots of output' })
      .resolvesOnce({ Status: 'Failed', StatusDetails: 'Failed', StandardErrorContent: 'iperf3: unable to connect' });
    expect(await runner.status('cmd-1', client)).toEqual({ status: 'InProgress' });
    expect(await runner.status('cmd-1', client)).toEqual({ status: 'Success' });
    expect(await runner.status('cmd-1', client)).toEqual({
      status: 'Failed',
      detail: 'Failed: iperf3: unable to connect',
    });
    expect(ssm.commandCalls(GetCommandInvocationCommand)[0].args[0].input).toEqual({
      CommandId: 'cmd-1',
      InstanceId: 'i-0abc',
    });
  });

  it('treats InvocationDoesNotExist right after sending as Pending, but not forever', async () => {
    ssm.on(GetCommandInvocationCommand).rejects(notYet());
    ssm
      .on(ListCommandsCommand)
      .resolves({ Commands: [{ CommandId: 'cmd-1', RequestedDateTime: new Date('2026-01-01T00:00:00Z') }] });
    expect(await runner.status('cmd-1', client)).toEqual({ status: 'Pending' });
    expect(ssm.commandCalls(ListCommandsCommand)[0].args[0].input).toEqual({ CommandId: 'cmd-1' });
    now = new Date('2026-01-01T00:05:00Z');
    await expect(runner.status('cmd-1', client)).rejects.toThrow(/never reached i-0abc/);
  });

  it('fails when the command is unknown', async () => {
    ssm.on(GetCommandInvocationCommand).rejects(notYet());
    ssm.on(ListCommandsCommand).resolves({ Commands: [] });
    await expect(runner.status('cmd-x', client)).rejects.toBeInstanceOf(ProbeCommandFailedError);
  });

  it('cancels the command on the client instance only', async () => {
    ssm.on(CancelCommandCommand).resolves({});
    await runner.cancel('cmd-1', client);
    expect(ssm.commandCalls(CancelCommandCommand).map((c) => c.args[0].input)).toEqual([
      { CommandId: 'cmd-1', InstanceIds: ['i-0abc'] },
    ]);
    expect(ssm.commandCalls(GetCommandInvocationCommand)).toHaveLength(0);
  });

  it('treats cancelling an unknown command as done', async () => {
    ssm.on(CancelCommandCommand).rejects(new InvalidCommandId({ $metadata: {}, message: 'no such command' }));
    await expect(runner.cancel('cmd-gone', client)).resolves.toBeUndefined();
    expect(ssm.commandCalls(GetCommandInvocationCommand)).toHaveLength(0);
  });

  it('treats a refused cancel of an already finished invocation as done', async () => {
    ssm.on(CancelCommandCommand).rejects(new InvalidInstanceId({ $metadata: {}, message: 'instance not managed' }));
    const terminal = ['Success', 'Failed', 'TimedOut', 'Cancelled'] as const;
    let statuses = ssm.on(GetCommandInvocationCommand);
    for (const status of terminal) statuses = statuses.resolvesOnce({ Status: status });
    for (const status of terminal) await expect(runner.cancel('cmd-1', client), status).resolves.toBeUndefined();
    expect(ssm.commandCalls(GetCommandInvocationCommand)[0].args[0].input).toEqual({
      CommandId: 'cmd-1',
      InstanceId: 'i-0abc',
    });
  });

  it('fails with ProbeCommandFailedError when a running command could not be cancelled', async () => {
    ssm.on(CancelCommandCommand).rejects(new InvalidInstanceId({ $metadata: {}, message: 'instance not managed' }));
    ssm.on(GetCommandInvocationCommand).resolvesOnce({ Status: 'InProgress' }).rejectsOnce(notYet());
    const e = await runner.cancel('cmd-1', client).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ProbeCommandFailedError);
    expect((e as Error).message).toBe(
      'could not cancel SSM command cmd-1 on i-0abc: InvalidInstanceId: instance not managed',
    );
    // When even the status cannot be read, the cancel failure is reported, not swallowed.
    await expect(runner.cancel('cmd-1', client)).rejects.toThrow(/could not cancel SSM command cmd-1/);
  });
});
