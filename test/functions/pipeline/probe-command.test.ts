/**
 * SendProbe retried after the Lambda died between SendCommand and the manifest write (here: the
 * manifest write fails once): the retry finds the command it sent and sends no second one.
 * SSM is mocked at the AWS boundary with stateful ListCommands / SendCommand.
 */
import { rm } from 'node:fs/promises';
import { type Command, ListCommandsCommand, SendCommandCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { keys } from '../../../core/keys.js';
import { SsmCommandRunner } from '../../../functions/adapters/aws/ssm-runner.js';
import { MAX_WAIT_SECONDS, nextPollSeconds, sendProbe } from '../../../functions/pipeline/probe-command.js';
import { validatePlanStep } from '../../../functions/pipeline/validate.js';
import { scenarioDeps, scenarioPlan } from '../../helpers/fakes.js';

const ssm = mockClient(SSMClient);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  ssm.reset();
  for (const c of cleanups.splice(0)) await c();
});

it('a SendProbe retried after SendCommand succeeded sends no second command', async () => {
  const s = await scenarioDeps();
  cleanups.push(async () => {
    s.query.close();
    await rm(s.dir, { recursive: true, force: true });
  });
  const sent: Command[] = [];
  ssm.on(SendCommandCommand).callsFake((input) => {
    const c: Command = {
      CommandId: `cmd-${sent.length + 1}`,
      DocumentName: input.DocumentName,
      Comment: input.Comment,
      Parameters: input.Parameters,
      InstanceIds: input.InstanceIds,
      RequestedDateTime: new Date(),
      Status: 'Pending',
    };
    sent.push(c);
    return { Command: c };
  });
  ssm.on(ListCommandsCommand).callsFake(() => ({ Commands: [...sent] }));
  const runner = new SsmCommandRunner((region) => new SSMClient({ region }), {
    documentName: 'Pathbench-ProbeDocument-ABC',
    bucket: 'pb-data',
    agentBucket: 'cdk-assets',
    agentKey: 'agent.cjs',
  });
  const deps = { ...s.deps, runner };
  const v = await validatePlanStep(deps, { input: { plan: scenarioPlan(['A']) }, runId: 'r1', startedAt: 'S1' });
  const ref = { runId: 'r1', pathId: 'A', client: v.chunks[0][0].client };

  // The "Lambda" dies after SendCommand: its manifest write never happens.
  const put = s.store.put.bind(s.store);
  let failNext = true;
  s.store.put = async (key, body) => {
    if (key === keys.pathManifest('r1', 'A') && failNext) {
      failNext = false;
      throw new Error('Lambda timed out');
    }
    return put(key, body);
  };
  await expect(sendProbe(deps, ref)).rejects.toThrow('Lambda timed out');
  const retried = await sendProbe(deps, ref);
  expect(retried.commandId).toBe('cmd-1');
  expect(ssm.commandCalls(SendCommandCommand)).toHaveLength(1);
});

describe('nextPollSeconds', () => {
  const probe = {
    commandId: 'c',
    attempt: 0,
    sentAt: '2030-01-01T00:00:00.000Z',
    expectedSeconds: 3600,
    deadline: '2030-01-01T02:00:00.000Z',
    waitSeconds: 1,
    done: false,
  };
  it("waits a quarter of the time left, at least the fleet's interval and at most MAX_WAIT_SECONDS", () => {
    expect(nextPollSeconds(probe, new Date('2030-01-01T00:00:00.000Z'), 5)).toBe(MAX_WAIT_SECONDS);
    expect(nextPollSeconds(probe, new Date('2030-01-01T00:59:00.000Z'), 5)).toBe(15);
    expect(nextPollSeconds(probe, new Date('2030-01-01T00:59:50.000Z'), 5)).toBe(5);
  });

  it('past the expected time, backs off by half the overrun (bounded the same way)', () => {
    expect(nextPollSeconds(probe, new Date('2030-01-01T01:00:04.000Z'), 5)).toBe(5);
    expect(nextPollSeconds(probe, new Date('2030-01-01T01:00:30.000Z'), 5)).toBe(15);
    expect(nextPollSeconds(probe, new Date('2030-01-01T01:30:00.000Z'), 5)).toBe(MAX_WAIT_SECONDS);
  });
});
