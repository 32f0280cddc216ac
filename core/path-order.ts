/**
 * The order a run measures its plan's paths in (the plan's `order`): as written, reversed,
 * rotated (run k starts at path k mod n) or shuffled (a seeded Fisher–Yates shuffle whose
 * stream is the plan's seed mixed with the run's index). Position effects — a path measured
 * after a long iperf3 drained the client's credits (seed 000's E→A) — show up when the same
 * path's figures are read by the position it ran at (cli/trend.ts). Pure.
 */
import type { PathOrder, ResolvedPlan } from './resolved-plan.js';

/** A run's index from its id when no run counter is known: FNV-1a, 32 bits. */
export function runIndexOf(runId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < runId.length; i++) {
    h ^= runId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** mulberry32: a small seeded generator of floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The plan positions in run order: element i is the index (as written) of the path run i-th. */
export function orderedPositions(n: number, order: PathOrder | undefined, runIndex: number): number[] {
  const idx = Array.from({ length: n }, (_, i) => i);
  if (n === 0 || !order) return idx;
  switch (order.mode) {
    case 'as-written':
      return idx;
    case 'reversed':
      return idx.reverse();
    case 'rotated': {
      const k = ((runIndex % n) + n) % n;
      return [...idx.slice(k), ...idx.slice(0, k)];
    }
    case 'shuffled': {
      const next = mulberry32(Math.imul((order.seed ?? 0) ^ 0x9e3779b9, 31) ^ runIndex);
      for (let i = n - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [idx[i], idx[j]] = [idx[j], idx[i]];
      }
      return idx;
    }
  }
}

/** The plan with its paths in this run's order (the plan unchanged when it sets none). */
export function orderPlan(plan: ResolvedPlan, runIndex: number): ResolvedPlan {
  if (!plan.order || plan.order.mode === 'as-written') return plan;
  const positions = orderedPositions(plan.paths.length, plan.order, runIndex);
  return { ...plan, paths: positions.map((i) => plan.paths[i]) };
}
