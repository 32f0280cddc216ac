import { describe, expect, it } from 'vitest';
import { orderedPositions, orderPlan, runIndexOf } from '../../core/path-order.js';
import { parsePlan } from '../../core/plan.js';
import { expectOk } from '../helpers/plans.js';

const plan = (extra: Record<string, unknown> = {}) => ({
  name: 'order',
  defaults: {
    client: { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' },
    probes: [{ kind: 'tcp-connect' }],
  },
  paths: ['A', 'B', 'C', 'D'].map((id, i) => ({ id, target: { host: `10.0.0.${i + 1}`, port: 7000 } })),
  ...extra,
});

describe('path order', () => {
  it('keeps, reverses and rotates by the run index', () => {
    expect(orderedPositions(4, undefined, 7)).toEqual([0, 1, 2, 3]);
    expect(orderedPositions(4, { mode: 'as-written' }, 7)).toEqual([0, 1, 2, 3]);
    expect(orderedPositions(4, { mode: 'reversed' }, 7)).toEqual([3, 2, 1, 0]);
    expect(orderedPositions(4, { mode: 'rotated' }, 0)).toEqual([0, 1, 2, 3]);
    expect(orderedPositions(4, { mode: 'rotated' }, 1)).toEqual([1, 2, 3, 0]);
    expect(orderedPositions(4, { mode: 'rotated' }, 6)).toEqual([2, 3, 0, 1]);
  });

  it('puts every path at every position once over n rotated runs', () => {
    const at = Array.from({ length: 4 }, (_, run) => orderedPositions(4, { mode: 'rotated' }, run));
    for (let path = 0; path < 4; path++) expect(new Set(at.map((o) => o.indexOf(path))).size).toBe(4);
  });

  it('shuffles reproducibly from the seed and the run index, a permutation every time', () => {
    const a = orderedPositions(8, { mode: 'shuffled', seed: 42 }, 3);
    expect(orderedPositions(8, { mode: 'shuffled', seed: 42 }, 3)).toEqual(a);
    expect([...a].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const runs = new Set([0, 1, 2, 3, 4, 5].map((i) => orderedPositions(8, { mode: 'shuffled', seed: 42 }, i).join()));
    expect(runs.size).toBeGreaterThan(1);
    expect(orderedPositions(8, { mode: 'shuffled', seed: 7 }, 3)).not.toEqual(a);
  });

  it('orders a resolved plan and derives an index from a run id', () => {
    const resolved = expectOk(parsePlan(plan({ order: 'rotated' })));
    expect(resolved.order).toEqual({ mode: 'rotated' });
    expect(orderPlan(resolved, 5).paths.map((p) => p.id)).toEqual(['B', 'C', 'D', 'A']);
    expect(expectOk(parsePlan(plan())).order).toBeUndefined();
    expect(runIndexOf('run-1')).toBe(runIndexOf('run-1'));
    expect(runIndexOf('run-1')).not.toBe(runIndexOf('run-2'));
  });

  it('refuses an unknown order and a seed without a shuffle, naming the field', () => {
    const bad = parsePlan(plan({ order: 'random' }));
    expect(bad.ok).toBe(false);
    if (!bad.ok)
      expect(bad.problems.join('\n')).toContain('order: expected one of as-written, reversed, rotated, shuffled');
    const seed = parsePlan(plan({ order: 'rotated', orderSeed: 3 }));
    expect(seed.ok).toBe(false);
    if (!seed.ok)
      expect(seed.problems).toEqual(['orderSeed: applies only to "order": "shuffled" (order is "rotated")']);
    expect(expectOk(parsePlan(plan({ order: 'shuffled', orderSeed: 3 }))).order).toEqual({ mode: 'shuffled', seed: 3 });
  });
});
