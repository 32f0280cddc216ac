/** `pathbench start` on AWS: a mesh plan goes to the mesh state machine, other plans to the sequential one. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { DescribeExecutionCommand, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { runStatus, startRun } from '../../../cli/aws/execution.js';
import { meshArnFrom } from '../../../cli/aws/stack-config.js';
import { meshLayout, meshPlanInput } from '../../../core/mesh-schedule.js';
import { regionByCode } from '../../../core/regions.js';
import { executionArn } from '../../../functions/adapters/aws/aws-deps.js';

const SM = 'arn:aws:states:us-east-1:123456789012:stateMachine:Pathbench-Measurement';
const MESH = 'arn:aws:states:us-east-1:123456789012:stateMachine:Pathbench-Mesh';

function files() {
  const dir = mkdtempSync(path.join(tmpdir(), 'pb-mesh-start-'));
  const codes = ['us-east-1', 'eu-west-1', 'ap-northeast-1', 'sa-east-1'];
  const layout = meshLayout(
    codes.map((code) => {
      const r = regionByCode(code)!;
      return { code, lat: r.lat, lon: r.lon };
    }),
  );
  const mesh = path.join(dir, 'mesh.json');
  writeFileSync(
    mesh,
    JSON.stringify(
      meshPlanInput('mesh4', layout, (code) => ({
        instanceId: `i-0${codes.indexOf(code)}aaaaaaaaaaaaaaa`.slice(0, 19),
        region: code,
        host: `10.${60 + codes.indexOf(code)}.0.10`,
        port: 5201,
      })),
    ),
  );
  const plain = path.join(dir, 'plain.json');
  writeFileSync(
    plain,
    JSON.stringify({
      name: 'one',
      defaults: { probes: [{ kind: 'tcp-connect', count: 3 }] },
      paths: [
        {
          id: 'A',
          label: 'a',
          client: { instanceId: 'i-0abc', region: 'us-east-1' },
          target: { host: '10.0.0.1', port: 5201 },
        },
      ],
    }),
  );
  return { mesh, plain };
}

describe('start on AWS picks the state machine for the plan', () => {
  const sfn = mockClient(SFNClient);
  afterEach(() => sfn.reset());
  const clients = () => ({
    sfn: new SFNClient({ region: 'us-east-1' }),
    s3: new S3Client({ region: 'us-east-1' }),
    ssm: new SSMClient({ region: 'us-east-1' }),
  });

  it('derives the mesh machine from the measurement machine the stack names', () => {
    expect(meshArnFrom(SM)).toBe(MESH);
    expect(meshArnFrom('arn:aws:states:us-east-1:123456789012:stateMachine:Other')).toBeUndefined();
  });

  it('starts a mesh plan on the mesh machine and a plain plan on the sequential one', async () => {
    const { mesh, plain } = files();
    sfn.on(StartExecutionCommand).callsFake((input: { stateMachineArn: string; name: string }) => ({
      executionArn: executionArn(input.stateMachineArn, input.name),
      startDate: new Date(),
    }));
    const out: string[] = [];
    const flags = { stateMachine: SM, bucket: 'pb-data', budgetUsd: '1000' };
    expect(await startRun({ ...flags, plan: mesh, runId: 'mesh-1' }, {}, (t) => out.push(t), clients)).toBe(0);
    expect(await startRun({ ...flags, plan: plain, runId: 'plain-1' }, {}, (t) => out.push(t), clients)).toBe(0);
    const calls = sfn.commandCalls(StartExecutionCommand).map((c) => c.args[0].input);
    expect(calls.map((c) => [c.stateMachineArn, c.name])).toEqual([
      [MESH, 'mesh-1'],
      [SM, 'plain-1'],
    ]);
    // The input is the plan as written: the mesh machine's ValidatePlan adds mode "mesh" itself.
    const input = JSON.parse(calls[0].input ?? '{}') as { plan: { paths: { mesh?: unknown }[] } };
    expect(input.plan.paths).toHaveLength(12);
    expect(input.plan.paths.every((p) => p.mesh)).toBe(true);
    expect(out.join('')).toContain(`started run mesh-1 on the mesh state machine\n  ${executionArn(MESH, 'mesh-1')}`);

    // An explicit mesh machine (flag) wins over the derived one; a named plan goes there with --mesh.
    const other = 'arn:aws:states:us-east-1:123456789012:stateMachine:Custom-Mesh';
    await startRun({ ...flags, meshStateMachine: other, planName: 'weekly', mesh: true }, {}, () => undefined, clients);
    expect(sfn.commandCalls(StartExecutionCommand)[2].args[0].input.stateMachineArn).toBe(other);
  });

  it('refuses a mesh plan when no mesh machine is known, before starting anything', async () => {
    const { mesh } = files();
    await expect(
      startRun(
        {
          plan: mesh,
          stateMachine: 'arn:aws:states:us-east-1:123456789012:stateMachine:Custom',
          bucket: 'b',
          budgetUsd: '1000',
        },
        {},
        () => undefined,
        clients,
      ),
    ).rejects.toThrow(/--mesh-state-machine/);
    expect(sfn.commandCalls(StartExecutionCommand)).toHaveLength(0);
  });

  it('status finds a mesh run on the mesh machine', async () => {
    sfn
      .on(DescribeExecutionCommand, { executionArn: executionArn(SM, 'mesh-1') })
      .rejects(Object.assign(new Error('no such execution'), { name: 'ExecutionDoesNotExist' }));
    sfn.on(DescribeExecutionCommand, { executionArn: executionArn(MESH, 'mesh-1') }).resolves({
      status: 'RUNNING',
      executionArn: executionArn(MESH, 'mesh-1'),
      stateMachineArn: MESH,
      startDate: new Date('2026-01-01T00:00:00Z'),
    });
    const out: string[] = [];
    await runStatus('mesh-1', { stateMachine: SM, bucket: 'b' }, {}, (t) => out.push(t), clients);
    expect(out.join('')).toContain('run mesh-1: RUNNING');
  });
});
