/**
 * `pathbench deploy --allow-plan`: the stack configuration derived from plans allows exactly the
 * plans' route swaps and clients, and cdk gets it as context (docs/aws.md).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { allowFromPlans, deploy } from '../../../cli/aws/deploy.js';
import { parsePlanText } from '../../../core/plan.js';
import type { ResolvedPlan } from '../../../core/resolved-plan.js';
import { parseAllowedRoutes, routeRefusal } from '../../../core/route-policy.js';
import { parseAllowedTargets, targetRefusal } from '../../../core/target-policy.js';

const ROUTE = { region: 'ap-northeast-1', routeTableId: 'rtb-0abc', destination: '10.1.0.0/16' };
const plan = {
  name: 'swaps',
  defaults: {
    client: { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' },
    probes: [{ name: 'tcp', kind: 'tcp-connect', count: 10, port: 7000 }],
  },
  paths: [
    {
      id: 'peering',
      label: 'via peering',
      target: { host: '10.1.0.10', port: 7000 },
      routes: [{ ...ROUTE, via: { vpcPeeringConnectionId: 'pcx-0abc' } }],
    },
    {
      id: 'tgw',
      label: 'via TGW',
      target: { host: '10.1.0.10', port: 7000 },
      routes: [{ ...ROUTE, via: { transitGatewayId: 'tgw-0abc' } }],
    },
    {
      id: 'other',
      label: 'other client',
      target: { host: '10.1.0.11', port: 7000 },
      client: { instanceId: 'i-0fedcba9876543210', region: 'ap-northeast-1' },
    },
  ],
};

function resolved(): ResolvedPlan {
  const r = parsePlanText(JSON.stringify(plan));
  if (!r.ok) throw new Error(r.problems.join('\n'));
  return r.plan;
}

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

describe('allowFromPlans', () => {
  it('allows each swapped route with the targets the plan uses, and no other', () => {
    const { allowedRoutes, allowedTargets, clientInstanceIds } = allowFromPlans([resolved()]);
    expect(allowedTargets).toEqual(['10.1.0.10/32', '10.1.0.11/32']);
    const targets = parseAllowedTargets(JSON.stringify(allowedTargets), 'test');
    expect(targetRefusal(targets, '10.1.0.10')).toBeUndefined();
    expect(targetRefusal(targets, '10.1.0.12')).toMatch(/not in the stack's allowedTargets/);
    expect(allowedRoutes).toEqual([
      { ...ROUTE, targets: ['vpcPeeringConnectionId:pcx-0abc', 'transitGatewayId:tgw-0abc'] },
    ]);
    expect(clientInstanceIds).toEqual(['i-0123456789abcdef0', 'i-0fedcba9876543210']);
    // what the stack will enforce with it
    const allowed = parseAllowedRoutes(JSON.stringify(allowedRoutes), 'test');
    expect(routeRefusal(allowed, ROUTE, 'transitGatewayId:tgw-0abc')).toBeUndefined();
    expect(routeRefusal(allowed, ROUTE, 'gatewayId:igw-0abc')).toMatch(/may not point at gatewayId:igw-0abc/);
    expect(routeRefusal(allowed, { ...ROUTE, destination: '0.0.0.0/0' }, 'transitGatewayId:tgw-0abc')).toMatch(
      /not in the stack's allowedRoutes/,
    );
  });
});

describe('deploy --allow-plan', () => {
  it('passes the derived context to cdk deploy', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pathbench-deploy-'));
    dirs.push(dir);
    const file = join(dir, 'plan.json');
    await writeFile(file, JSON.stringify(plan));
    const calls: string[][] = [];
    const code = await deploy({ allowPlan: [file], yes: true }, async (args) => {
      calls.push(args);
      return 0;
    });
    expect(code).toBe(0);
    const args = calls[0];
    expect(args.slice(0, 2)).toEqual(['deploy', 'Pathbench']);
    const ctx = (k: string) => args[args.indexOf('-c', args.findIndex((a) => a.startsWith(`${k}=`)) - 1) + 1];
    expect(JSON.parse(ctx('allowedRoutes').slice('allowedRoutes='.length))).toHaveLength(1);
    expect(ctx('allowedTargets')).toBe('allowedTargets=["10.1.0.10/32","10.1.0.11/32"]');
    expect(ctx('clientInstanceIds')).toBe('clientInstanceIds=i-0123456789abcdef0,i-0fedcba9876543210');
  });

  it('refuses an invalid plan before running cdk, naming the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pathbench-deploy-'));
    dirs.push(dir);
    const file = join(dir, 'bad.json');
    await writeFile(file, JSON.stringify({ ...plan, paths: [] }));
    let ran = false;
    await expect(
      deploy({ allowPlan: [file] }, async () => {
        ran = true;
        return 0;
      }),
    ).rejects.toThrow(new RegExp(`--allow-plan ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: the plan is invalid`));
    expect(ran).toBe(false);
  });
});
