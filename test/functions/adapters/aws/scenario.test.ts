/**
 * The real ASL, run in-process through the wiring table and the real handlers, with the AWS
 * Fleet, Routes and CommandRunner adapters talking to mocked EC2/SSM clients (stateful fakes of
 * the instance, the route tables and Run Command). Store, query and lock are the local adapters
 * (their AWS counterparts are unit-tested against mocked S3/Athena/DynamoDB next door).
 */
import { rm } from 'node:fs/promises';
import {
  CreateRouteCommand,
  DeleteRouteCommand,
  DescribeAvailabilityZonesCommand,
  DescribeInstancesCommand,
  DescribeRouteTablesCommand,
  EC2Client,
  ReplaceRouteCommand,
  StartInstancesCommand,
  StopInstancesCommand,
} from '@aws-sdk/client-ec2';
import {
  DescribeInstanceInformationCommand,
  GetCommandInvocationCommand,
  SendCommandCommand,
  SSMClient,
} from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { keys } from '../../../../core/keys.js';
import { type RunManifest, readManifest } from '../../../../core/run-manifest.js';
import type { Summary } from '../../../../core/run-summary.js';
import { Ec2SsmFleet } from '../../../../functions/adapters/aws/ec2-fleet.js';
import { Ec2Routes } from '../../../../functions/adapters/aws/ec2-routes.js';
import { SsmCommandRunner } from '../../../../functions/adapters/aws/ssm-runner.js';
import { runStateMachine } from '../../../../local/asl-interpreter.js';
import { allEvents } from '../../../../local/local-execution.js';
import { ec2Err } from '../../../helpers/aws.js';
import { FakeRunner, noRetryWaits, noWaits, scenarioDeps, scenarioPlan } from '../../../helpers/fakes.js';

const CLIENT = 'i-0123456789abcdef0';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** A stateful EC2 + SSM world for one client instance and two regions' route tables. */
function fakeAws(opts: { capacityFailsOnStart: number[] }) {
  const regions = ['ap-northeast-1', 'ap-northeast-3'];
  const ec2 = Object.fromEntries(regions.map((r) => [r, new EC2Client({ region: r })]));
  const ssm = Object.fromEntries(regions.map((r) => [r, new SSMClient({ region: r })]));
  const routes = new Map<string, string>(); // "region|rtb|dest" → "kind:id"
  routes.set('ap-northeast-1|rtb-tokyo|10.1.0.0/16', 'vpcPeeringConnectionId:pcx-1');
  let state = 'running';
  let starts = 0;
  const field: Record<string, string> = {
    vpcPeeringConnectionId: 'VpcPeeringConnectionId',
    transitGatewayId: 'TransitGatewayId',
  };
  const inputTarget = (i: Record<string, unknown>) => {
    for (const [k, f] of Object.entries(field)) if (typeof i[f] === 'string') return `${k}:${i[f]}`;
    throw new Error(`no target in ${JSON.stringify(i)}`);
  };
  for (const region of regions) {
    const m = mockClient(ec2[region]);
    const key = (i: { RouteTableId?: string; DestinationCidrBlock?: string }) =>
      `${region}|${i.RouteTableId}|${i.DestinationCidrBlock}`;
    m.on(StopInstancesCommand).callsFake(() => {
      state = 'stopped';
      return {};
    });
    m.on(StartInstancesCommand).callsFake(() => {
      starts++;
      if (opts.capacityFailsOnStart.includes(starts)) throw ec2Err('InsufficientInstanceCapacity');
      state = 'running';
      return {};
    });
    m.on(DescribeInstancesCommand).callsFake(() => ({
      Reservations: [
        {
          Instances: [
            {
              InstanceId: CLIENT,
              State: { Name: state },
              InstanceType: 'c6i.large',
              Placement: { AvailabilityZone: 'ap-northeast-1a' },
            },
          ],
        },
      ],
    }));
    m.on(DescribeAvailabilityZonesCommand).resolves({
      AvailabilityZones: [{ ZoneName: 'ap-northeast-1a', ZoneId: 'apne1-az4' }],
    });
    m.on(DescribeRouteTablesCommand).callsFake((input: { RouteTableIds: string[] }) => {
      const rtb = input.RouteTableIds[0];
      const rs = [...routes.entries()]
        .filter(([k]) => k.startsWith(`${region}|${rtb}|`))
        .map(([k, t]) => {
          const [kind, id] = t.split(':');
          return { DestinationCidrBlock: k.split('|')[2], [field[kind]]: id, State: 'active' };
        });
      return { RouteTables: [{ RouteTableId: rtb, Routes: rs }] };
    });
    m.on(ReplaceRouteCommand).callsFake((i: Record<string, string>) => {
      if (!routes.has(key(i))) throw ec2Err('InvalidRoute.NotFound');
      routes.set(key(i), inputTarget(i));
      return {};
    });
    m.on(CreateRouteCommand).callsFake((i: Record<string, string>) => {
      routes.set(key(i), inputTarget(i));
      return { Return: true };
    });
    m.on(DeleteRouteCommand).callsFake((i: Record<string, string>) => {
      if (!routes.delete(key(i))) throw ec2Err('InvalidRoute.NotFound');
      return {};
    });
  }
  return { ec2, ssm, routes, starts: () => starts };
}

describe('AWS adapters in the state machine', () => {
  it('StartCapacityFails: the path is recorded as failed, routes restored, the next path measured', async () => {
    // Prepare: path B swaps routes in both regions; the second start (path C) and its three
    // retries (StartClient retries InstanceCapacityError) have no capacity.
    const aws = fakeAws({ capacityFailsOnStart: [2, 3, 4, 5] });
    const s = await scenarioDeps();
    cleanups.push(async () => {
      s.query.close();
      await rm(s.dir, { recursive: true, force: true });
    });
    // Run Command: the "agent" writes its raw output into the store like the document would.
    const agent = new FakeRunner(s.store);
    const ssmMock = mockClient(aws.ssm['ap-northeast-1']);
    ssmMock.on(DescribeInstanceInformationCommand).callsFake(() => ({
      InstanceInformationList: [
        { InstanceId: CLIENT, PingStatus: 'Online', LastPingDateTime: new Date(Date.now() + 1000) },
      ],
    }));
    ssmMock.on(SendCommandCommand).callsFake(async (i: { Parameters: Record<string, string[]> }) => {
      const p = i.Parameters;
      await agent.send({
        runId: p.runId[0],
        pathId: p.pathId[0],
        client: { instanceId: CLIENT, region: 'ap-northeast-1' },
        specKey: p.specKey[0],
        rawPrefix: p.rawPrefix[0],
        timeoutSeconds: Number(p.executionTimeout[0]),
      });
      return { Command: { CommandId: `cmd-${p.pathId[0]}` } };
    });
    ssmMock.on(GetCommandInvocationCommand).resolves({ Status: 'Success' });
    s.deps.fleet = new Ec2SsmFleet((r) => ({ ec2: aws.ec2[r], ssm: aws.ssm[r] }), { pollSeconds: 1 });
    s.deps.routes = new Ec2Routes((r) => aws.ec2[r]);
    s.deps.runner = new SsmCommandRunner((r) => aws.ssm[r], {
      documentName: 'Pathbench-ProbeDocument-X',
      bucket: 'pb-data',
      agentBucket: 'assets',
      agentKey: 'abc.cjs',
    });

    // Act
    const r = await runStateMachine({
      deps: s.deps,
      input: { plan: scenarioPlan(['B', 'C', 'A']) },
      runId: 'capacity',
      waitTimeOverrides: noWaits(),
      retryIntervalOverrides: noRetryWaits(),
    });

    // Assess: the run finished, C failed at the start, A after it was measured.
    expect(r.status).toBe('SUCCEEDED');
    const entered = allEvents(r)
      .filter((e) => e.type === 'StateEntered')
      .map((e) => e.state?.name);
    expect(entered).toContain('RecordPathFailure');
    expect(aws.starts()).toBe(6);
    const manifest = (await readManifest(s.store, 'capacity')) as RunManifest;
    const byId = Object.fromEntries(manifest.paths.map((p) => [p.id, p]));
    expect(byId.B.status).toBe('succeeded');
    expect(byId.C.status).toBe('failed');
    expect(byId.C.error).toMatch(/InstanceCapacityError/);
    expect(byId.A.status).toBe('succeeded');
    expect(await s.store.list('samples/path=A/run=capacity/')).toHaveLength(1);
    expect(await s.store.list('samples/path=C/run=capacity/')).toEqual([]);
    // Routes: Tokyo back on peering, Osaka's route (created by the run) removed again.
    expect(aws.routes.get('ap-northeast-1|rtb-tokyo|10.1.0.0/16')).toBe('vpcPeeringConnectionId:pcx-1');
    expect(aws.routes.has('ap-northeast-3|rtb-osaka|10.0.0.0/16')).toBe(false);
    expect(manifest.restore?.status).toBe('ok');
    const summary = JSON.parse((await s.store.getText(keys.report('capacity', 'json'))) ?? '{}') as Summary;
    expect(summary.paths.find((p) => p.id === 'C')?.status).toBe('failed');
    // The probe went through our document with the spec passed by key.
    const sent = ssmMock.commandCalls(SendCommandCommand).map((c) => c.args[0].input.Parameters?.pathId?.[0]);
    expect(sent).toEqual(['B', 'A']);
  });
});
