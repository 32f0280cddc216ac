/**
 * The resolved plan's reader (`runs/run=<id>/plan.json`, as ValidatePlan stores it): every
 * example plan's resolution reads back whole, a plan an earlier version resolved (fields added
 * since absent) still reads, and a damaged one fails naming the key and the field.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../../core/keys.js';
import { parsePlanText } from '../../core/plan.js';
import { readResolvedPlan } from '../../core/resolved-plan.js';
import { DirStore } from '../../local/dir-store.js';
import { expectOk } from '../helpers/plans.js';
import { ROOT } from '../helpers/repo.js';

let dir: string;
let store: DirStore;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'pb-resolved-'));
  store = new DirStore(dir);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Stored as ValidatePlan stores it: the plan as received and as resolved. */
const stored = (source: unknown, resolved: unknown) => `${JSON.stringify({ source, resolved }, null, 2)}\n`;

describe('readResolvedPlan', () => {
  const files = readdirSync(path.join(ROOT, 'plans')).filter((f) => f.endsWith('.json'));

  it.each(files)('reads the resolution of plans/%s back whole', async (file) => {
    const text = readFileSync(path.join(ROOT, 'plans', file), 'utf8');
    const plan = expectOk(parsePlanText(text));
    const runId = `r-${file.replace(/\W/g, '-')}`;
    await store.put(keys.plan(runId), stored(JSON.parse(text), plan));
    expect(await readResolvedPlan(store, runId)).toEqual(plan);
  });

  it('reads a plan an earlier version resolved: no client kind, mesh, AZ pair, comparisons, budget or settings', async () => {
    const earlier = {
      name: 'old',
      paths: [
        {
          id: 'A',
          label: 'A',
          client: { instanceId: 'i-0abc', region: 'ap-northeast-1' },
          target: { host: '10.0.1.10', port: 7000 },
          routes: [
            {
              region: 'ap-northeast-1',
              routeTableId: 'rtb-1',
              destination: '10.1.0.0/16',
              via: { vpcPeeringConnectionId: 'pcx-1' },
            },
          ],
          probes: [{ kind: 'tcp-connect', name: 'tcp-connect', count: 300, intervalMs: 200, timeoutMs: 400 }],
          skipped: [],
          reboot: true,
          creditWaitSeconds: 0,
        },
      ],
    };
    await store.put(keys.plan('r-old'), stored({ name: 'old' }, earlier));
    expect(await readResolvedPlan(store, 'r-old')).toEqual(earlier);
  });

  it('is undefined for a run without one, and fails naming the key and field of a damaged one', async () => {
    expect(await readResolvedPlan(store, 'r-none')).toBeUndefined();
    const plan = expectOk(parsePlanText(readFileSync(path.join(ROOT, 'plans', 'local-loopback.json'), 'utf8')));
    const bad = {
      ...plan,
      paths: [{ ...plan.paths[0], probes: [{ ...plan.paths[0].probes[0], kind: 'traceroute' }] }],
    };
    await store.put(keys.plan('r-bad'), stored({}, bad));
    await expect(readResolvedPlan(store, 'r-bad')).rejects.toThrow(
      /^runs\/run=r-bad\/plan\.json is not a valid resolved plan: resolved\.paths\[0\]\.probes\[0\]\.kind: unknown probe kind "traceroute"/,
    );
  });
});
