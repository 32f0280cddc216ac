/** Shared by the benches: n, p50 and p99 (nearest rank, as the SQL) of a series, NaN when empty. */
import { nearestRank } from '../../functions/core/stats.js';

export interface Stat {
  n: number;
  p50: number;
  p99: number;
}

export function stat(values: number[]): Stat {
  const s = [...values].sort((a, b) => a - b);
  return {
    n: s.length,
    p50: s.length ? (nearestRank(s, 500) as number) : Number.NaN,
    p99: s.length ? (nearestRank(s, 990) as number) : Number.NaN,
  };
}
