/**
 * SendProbe retried after the Lambda died between SendCommand and the manifest write (here: the
 * manifest write fails once): the retry finds the command it sent and sends no second one.
 * SSM is mocked at the AWS boundary with stateful ListCommands / SendCommand.
 */
import { rm } from 'node:fs/promises';
import { type Command, ListCommandsCommand, SendCommandCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, expect, it } from 'vitest';
import { keys } from '../../../core/keys.js';
import { SsmCommandRunner } from '../../../functions/adapters/aws/ssm-runner.js';
import { sendProbe } from '../../../functions/pipeline/path.js';
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
  const ref = { runId: 'r1', pathId: 'A', client: v.paths[0].client };

  // The "Lambda" dies after SendCommand: its manifest write never happens.
  const put = s.store.put.bind(s.store);
  let failNext = true;
  s.store.put = async (key, body) => {
    if (key === keys.manifest('r1') && failNext) {
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
