/**
 * Fault classes of the route swap, through the AWS Routes adapter (functions/adapters/aws/
 * routes.ts) over an in-memory EC2 route table (test/faults/aws-world.ts): routes that
 * pre-exist (of every target kind EC2 reports), that are blackholed, that do not exist yet,
 * swaps to every target kind a plan may name, and EC2 throttling or a route that never turns
 * active in the middle of a swap.
 */
import { describe, expect } from 'vitest';
import { type RunManifest, readManifest } from '../../core/run-manifest.js';
import { cleanupAfterExecution } from '../../functions/pipeline/abandoned-run.js';
import { DirStore } from '../../local/dir-store.js';
import type { WorldRoute } from './aws-world.js';
import { type FaultCase, faultCase } from './harness.js';
import { awsError } from './inject.js';

const RTB = 'rtb-0f17';
const DEST = '10.20.0.0/16';
const TGW = { transitGatewayId: 'tgw-0f17' };

async function manifest(c: FaultCase, runId: string): Promise<RunManifest> {
  return ((await readManifest(new DirStore(c.dir), runId)) ?? null) as RunManifest;
}

/** One route of RTB to DEST with the given target fields (plus a neighbour that must stay untouched). */
function table(target: Partial<WorldRoute>, extra: Partial<WorldRoute> = {}): Record<string, WorldRoute[]> {
  return {
    [RTB]: [
      { DestinationCidrBlock: '10.0.0.0/16', GatewayId: 'local', State: 'active', Origin: 'CreateRouteTable' },
      { DestinationCidrBlock: DEST, ...target, State: 'active', Origin: 'CreateRoute', ...extra },
    ],
  };
}

async function swapAndRestore(c: FaultCase, via: Record<string, string> = TGW, destination = DEST) {
  const r = await c.run(c.plan([{ id: 'a', routes: [{ routeTableId: RTB, destination, via }] }]));
  const m = await manifest(c, r.runId);
  expect(m.paths[0].status, m.paths[0].error).toBe('succeeded');
  expect(m.restore?.status, m.restore?.errors?.join('; ')).toBe('ok');
  return m;
}

describe.concurrent('routes pre-existing, of every target kind', () => {
  const originals: [string, Partial<WorldRoute>][] = [
    ['internet gateway', { GatewayId: 'igw-0f17' }],
    ['virtual private gateway', { GatewayId: 'vgw-0f17' }],
    ['gateway endpoint', { GatewayId: 'vpce-0f17' }],
    ['NAT gateway', { NatGatewayId: 'nat-0f17' }],
    ['transit gateway', { TransitGatewayId: 'tgw-0f18' }],
    ['peering connection', { VpcPeeringConnectionId: 'pcx-0f17' }],
    ['network interface', { NetworkInterfaceId: 'eni-0f17' }],
    ['local gateway', { LocalGatewayId: 'lgw-0f17' }],
    ['carrier gateway', { CarrierGatewayId: 'cagw-0f17' }],
    ['core network', { CoreNetworkArn: 'arn:aws:networkmanager::000000000000:core-network/core-network-0f17' }],
  ];
  for (const [kind, target] of originals) {
    faultCase(
      'routes pre-existing / blackholed / every kind',
      `original via ${kind}: swapped, then put back as it was`,
      async (c) => {
        await swapAndRestore(c);
      },
      { routes: table(target) },
    );
  }

  faultCase(
    'routes pre-existing / blackholed / every kind',
    'the local route: refused before any change, naming the route, or pointed at an appliance and reset to local',
    async (c) => {
      const r = await c.run(
        c.plan([
          {
            id: 'a',
            routes: [{ routeTableId: RTB, destination: '10.0.0.0/16', via: { networkInterfaceId: 'eni-0f99' } }],
          },
        ]),
      );
      if (r.execution.status === 'FAILED' && (await manifest(c, r.runId)) === null) {
        // refused by ValidatePlan: nothing written, nothing changed
        expect(r.execution.error?.message).toMatch(/10\.0\.0\.0\/16|local/);
        expect(c.aws.ec2Calls).toEqual([]);
        return;
      }
      const m = await manifest(c, r.runId);
      expect(m.restore?.status, m.restore?.errors?.join('; ')).toBe('ok');
    },
    { routes: table({ GatewayId: 'igw-0f17' }) },
  );

  faultCase(
    'routes pre-existing / blackholed / every kind',
    'a route already via the target: nothing changes, nothing is put back wrongly',
    async (c) => {
      await swapAndRestore(c);
      expect(c.aws.ec2Calls.filter((x) => !x.startsWith('describe'))).toEqual([]);
    },
    { routes: table({ TransitGatewayId: TGW.transitGatewayId }) },
  );

  faultCase(
    'routes pre-existing / blackholed / every kind',
    'no route to the destination before: created for the run, removed after',
    async (c) => {
      await swapAndRestore(c);
    },
    { routes: { [RTB]: table({ GatewayId: 'igw-0f17' })[RTB].slice(0, 1) } },
  );

  faultCase(
    'routes pre-existing / blackholed / every kind',
    'a blackholed original (its ENI detached): put back as it was and reported restored',
    async (c) => {
      c.aws.deadTargets.add('eni-0dead');
      await swapAndRestore(c);
    },
    { routes: table({ NetworkInterfaceId: 'eni-0dead' }, { State: 'blackhole' }) },
  );
});

describe.concurrent('swap to every target kind a plan may name', () => {
  const targets: Record<string, string> = {
    vpcPeeringConnectionId: 'pcx-0f99',
    transitGatewayId: 'tgw-0f99',
    gatewayId: 'igw-0f99',
    natGatewayId: 'nat-0f99',
    networkInterfaceId: 'eni-0f99',
    vpcEndpointId: 'vpce-0f99',
  };
  for (const [kind, id] of Object.entries(targets)) {
    faultCase(
      'routes pre-existing / blackholed / every kind',
      `swap to ${kind}: active during the probe, original after`,
      async (c) => {
        let during: WorldRoute | undefined;
        c.faults.add({
          site: 'runner.send',
          action: {
            hook: () => {
              during = c.aws.snapshot()[RTB].find((r) => r.DestinationCidrBlock === DEST);
            },
          },
        });
        await swapAndRestore(c, { [kind]: id });
        expect(Object.values(during ?? {})).toContain(id);
        expect(during?.State).toBe('active');
      },
      { routes: table({ VpcPeeringConnectionId: 'pcx-0f17' }) },
    );
  }
});

describe.concurrent('EC2 faults during the swap', () => {
  const two = (c: FaultCase) =>
    c.plan([
      {
        id: 'a',
        routes: [
          { routeTableId: RTB, destination: DEST, via: TGW },
          { routeTableId: RTB, destination: '10.30.0.0/16', via: TGW },
        ],
      },
      { id: 'b' },
    ]);
  const routes = {
    [RTB]: [
      ...table({ VpcPeeringConnectionId: 'pcx-0f17' })[RTB],
      { DestinationCidrBlock: '10.30.0.0/16', NatGatewayId: 'nat-0f17', State: 'active', Origin: 'CreateRoute' },
    ] as WorldRoute[],
  };

  faultCase(
    'routes pre-existing / blackholed / every kind',
    'RequestLimitExceeded on the second ReplaceRoute: the swap is retried and completes',
    async (c) => {
      c.faults.add({
        site: 'routes.point',
        nth: 2,
        action: { throw: () => awsError('RequestLimitExceeded', 'Request limit exceeded.', 503) },
      });
      const r = await c.run(two(c));
      const m = await manifest(c, r.runId);
      expect(m.paths[0].status, m.paths[0].error).toBe('succeeded');
    },
    { routes },
  );

  faultCase(
    'routes pre-existing / blackholed / every kind',
    'the second route never turns active: the path fails, both routes are put back, the next path measures',
    async (c) => {
      c.faults.add({
        site: 'routes.verify',
        match: (a) => (a[0] as { destination: string }).destination === '10.30.0.0/16',
        action: { replace: async () => false },
      });
      const r = await c.run(two(c));
      const m = await manifest(c, r.runId);
      expect(m.paths[0].status).toBe('failed');
      expect(m.paths[0].failedStep).toBe('SwapRoutes');
      expect(m.paths[1].status).toBe('succeeded');
    },
    { routes },
  );

  faultCase(
    'routes pre-existing / blackholed / every kind',
    'ReplaceRoute fails with a 5xx during the restore: retried until every route is back',
    async (c) => {
      c.faults.add({
        site: 'routes.point',
        nth: 3,
        action: { throw: () => awsError('InternalError', 'An internal error has occurred', 500) },
      });
      const r = await c.run(two(c));
      const m = await manifest(c, r.runId);
      expect(m.paths[0].status, m.paths[0].error).toBe('succeeded');
    },
    { routes },
  );
});

describe.concurrent('a route an earlier run left swapped', () => {
  faultCase(
    'routes pre-existing / blackholed / every kind',
    "an earlier run's restore failed: the next run is refused naming the route and that run; after its cleanup is redriven the run measures",
    async (c) => {
      // The first run's restore is refused by IAM (not retried): the route stays via the TGW.
      let deny = true;
      c.faults.add({
        site: 'routes.point',
        match: (a) => deny && String(a[1]).includes('pcx-0f17'),
        action: {
          throw: () => awsError('UnauthorizedOperation', 'You are not authorized to perform this operation.', 403),
        },
      });
      const plan = c.plan([{ id: 'a', routes: [{ routeTableId: RTB, destination: DEST, via: TGW }] }]);
      const first = await c.run(plan);
      expect((await manifest(c, first.runId)).restore?.status).toBe('failed');
      deny = false;
      const next = await c.run(plan);
      expect(next.execution.status).toBe('FAILED');
      const why = JSON.stringify(next.execution.error);
      expect(why).toMatch(
        new RegExp(`route ap-northeast-1 ${RTB} ${DEST.replace('.', '\\.')} is still via .*tgw-0f17`),
      );
      expect(why).toMatch(new RegExp(`left changed by run ${first.runId} \\(original [^)]*pcx-0f17\\)`));
      expect(await manifest(c, next.runId)).toBeNull();
      // The operator redrives the first run's cleanup (EventBridge → CleanupAfterExecution).
      await cleanupAfterExecution(c.deps as NonNullable<FaultCase['deps']>, { runId: first.runId, status: 'FAILED' });
      const m = await swapAndRestore(c);
      expect(m.routeChanges[0].original).toMatch(/pcx-0f17/);
    },
    { routes: table({ VpcPeeringConnectionId: 'pcx-0f17' }) },
  );
});
