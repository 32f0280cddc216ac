/**
 * The rank columns of the Parquet samples table (queries/sql.ts RANK_COLUMNS), computed in two
 * passes over a partition's records: the first pass collects every successful value of each
 * (probe, metric, unit) group and sorts it once; the second gives each record its columns.
 *
 *   value_rank           the value's position (1 … value_count) in the group's successful values
 *                        in ascending order; equal values take consecutive positions in the
 *                        order they come. NULL on a failed row
 *   value_count          how many successful values the group has
 *   unflagged_rank       the same among the group's unflagged successful values (flag null);
 *   unflagged_count      NULL on flagged rows, and on every row of a group that has no flagged row
 *                        (its unflagged values are all of its values: value_rank says it)
 *   group_rows           how many rows the group has, failed ones included
 *   group_unflagged_rows how many of them have no flag
 *   value_permille_lo    the per-mille interval (lo, hi] of the group's values that the row's
 *   value_permille_hi    position covers (permilleInterval); NULL where value_rank is
 *   unflagged_permille_lo / _hi the same for unflagged_rank
 *
 * value_rank is SQL's row_number() OVER (PARTITION BY … ORDER BY value) over the same rows, with
 * its ties in some order (local/duckdb-query.ts computes the columns so for JSONL that has no
 * Parquet copy yet): the value at each position is the same whichever order ties take. So the
 * value at nearest rank ceil(k n / 1000) is the value of the one row whose per-mille interval
 * holds k, and queries/percentiles.sql finds it with a filter of constant comparisons, in one
 * pass, without sorting.
 *
 * A sample is successful when ok is true and value is a number (the query's `ok = true AND value
 * IS NOT NULL`; anything else is refused by the Parquet writer's type checks). Hand-written
 * rather than a library: the ranks are part of the measurement's exactness, and typed arrays keep
 * 10 million values at 13 bytes each (the value, an unflagged bit, a counter of its ties) plus 12
 * for each unflagged value of a group that has flags.
 */
import { CollectError } from './errors.js';

/** A typed array that grows by doubling (also used by scripts/bench/percentiles.bench.ts). */
export class Growable<T extends Float64Array | Uint8Array> {
  length = 0;
  constructor(
    private data: T,
    private readonly make: (size: number) => T,
  ) {}

  push(v: number): void {
    if (this.length === this.data.length) {
      const next = this.make(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }

  /** The filled part (a view of the buffer, no copy). */
  view(): T {
    return this.data.subarray(0, this.length) as T;
  }
}

/** Index of the first element not below v (the count of elements below v). */
function lowerBound(sorted: Float64Array, v: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** One subset's sorted values and, per first position of a run of equal values, how many of them were handed out. */
class Ranking {
  private readonly taken: Uint32Array;
  /** Ranks handed out by the second pass. */
  handed = 0;

  /** `values` is sorted in place and kept. */
  constructor(private readonly sorted: Float64Array) {
    sorted.sort();
    this.taken = new Uint32Array(sorted.length);
  }

  get count(): number {
    return this.sorted.length;
  }

  /** The next free position (1-based) of value v, or undefined when the first pass had no more of it. */
  take(v: number): number | undefined {
    const first = lowerBound(this.sorted, v);
    const at = first + (first < this.taken.length ? this.taken[first] : 0);
    if (at >= this.sorted.length || this.sorted[at] !== v) return undefined;
    this.taken[first]++;
    this.handed++;
    return at + 1;
  }
}

interface Group {
  /** First pass: the successful values in arrival order, and 1 for each that is unflagged. */
  values?: Growable<Float64Array>;
  unflaggedBits?: Growable<Uint8Array>;
  /** After seal: the rankings (unflagged only in a group with a flagged row). */
  all?: Ranking;
  unflagged?: Ranking;
  rows: number;
  unflaggedRows: number;
  /** Rows seen by the second pass (checked against the first). */
  seenRows: number;
}

/** The rank columns of one record, in RANK_COLUMNS order (null where they do not apply). */
export type RankCells = [
  number | null,
  number,
  number | null,
  number | null,
  number,
  number,
  number | null,
  number | null,
  number | null,
  number | null,
];

/**
 * The per-mille interval (lo, hi] of a group's values that position r of n covers: lo =
 * floor(1000 (r - 1) / n), hi = floor(1000 r / n). Position r is the nearest rank ceil(k n / 1000)
 * of exactly the integer per-mille k with lo < k <= hi, since the intervals of 1 … n tile
 * (0, 1000]; hi = 1000 only at r = n. Exact: r and n stay far below 2^53 / 1000.
 */
export function permilleInterval(r: number, n: number): [number, number] {
  return [Math.floor((1000 * (r - 1)) / n), Math.floor((1000 * r) / n)];
}

const isSuccess = (r: Record<string, unknown>) => r.ok === true && typeof r.value === 'number';
const isUnflagged = (r: Record<string, unknown>) => r.flag === undefined || r.flag === null;
/** The query's group within a partition: GROUP BY path, probe, metric, unit (path is the partition). */
const groupKey = (r: Record<string, unknown>) => JSON.stringify([r.probe ?? null, r.metric ?? null, r.unit ?? null]);

export class SampleRanks {
  private readonly groups = new Map<string, Group>();
  private sealed = false;
  /** The last record's group: consecutive records mostly share one, so the key is built less often. */
  private last?: { probe: unknown; metric: unknown; unit: unknown; group: Group };

  private groupOf(record: Record<string, unknown>, create: boolean): Group | undefined {
    const { probe, metric, unit } = record;
    const last = this.last;
    if (last && last.probe === probe && last.metric === metric && last.unit === unit) return last.group;
    const key = groupKey(record);
    let g = this.groups.get(key);
    if (!g && create) {
      g = {
        values: new Growable(new Float64Array(1024), (n) => new Float64Array(n)),
        unflaggedBits: new Growable(new Uint8Array(1024), (n) => new Uint8Array(n)),
        rows: 0,
        unflaggedRows: 0,
        seenRows: 0,
      };
      this.groups.set(key, g);
    }
    if (g) this.last = { probe, metric, unit, group: g };
    return g;
  }

  /** First pass: one record (every record of the partition, in any order). */
  add(record: Record<string, unknown>): void {
    if (this.sealed) throw new Error('SampleRanks: add() after seal()');
    const g = this.groupOf(record, true) as Group;
    g.rows++;
    const unflagged = isUnflagged(record);
    if (unflagged) g.unflaggedRows++;
    if (!isSuccess(record)) return;
    g.values?.push(record.value as number);
    g.unflaggedBits?.push(unflagged ? 1 : 0);
  }

  /** End of the first pass: sort each group's values once. */
  seal(): void {
    if (this.sealed) return;
    for (const g of this.groups.values()) {
      const values = (g.values as Growable<Float64Array>).view();
      const bits = (g.unflaggedBits as Growable<Uint8Array>).view();
      // A group without flagged rows stores no unflagged ranks (its unflagged values are all).
      if (g.unflaggedRows < g.rows) {
        let n = 0;
        for (let i = 0; i < bits.length; i++) n += bits[i];
        const unflagged = new Float64Array(n);
        for (let i = 0, j = 0; i < values.length; i++) if (bits[i] === 1) unflagged[j++] = values[i];
        g.unflagged = new Ranking(unflagged);
      }
      g.all = new Ranking(values);
      g.values = undefined;
      g.unflaggedBits = undefined;
    }
    this.sealed = true;
    this.last = undefined;
  }

  /**
   * Second pass: the rank columns of one record. The record must be one the first pass saw; a
   * group or value it did not see (or saw fewer times) means the input changed between the
   * passes, an error.
   */
  cells(record: Record<string, unknown>, where: () => string): RankCells {
    if (!this.sealed) throw new Error('SampleRanks: cells() before seal()');
    const g = this.groupOf(record, false);
    if (!g) throw changed(`${where()}: a group the first pass did not see`);
    g.seenRows++;
    const all = g.all as Ranking;
    const unflaggedCount = g.unflagged ? g.unflagged.count : null;
    const tail = [g.rows, g.unflaggedRows] as const;
    if (!isSuccess(record)) return [null, all.count, null, unflaggedCount, ...tail, null, null, null, null];
    const v = record.value as number;
    const rank = all.take(v);
    if (rank === undefined) throw changed(`${where()}: a value the first pass did not see`);
    let unflaggedRank: number | null = null;
    if (g.unflagged && isUnflagged(record)) {
      const u = g.unflagged.take(v);
      if (u === undefined) throw changed(`${where()}: an unflagged value the first pass did not see`);
      unflaggedRank = u;
    }
    const [lo, hi] = permilleInterval(rank, all.count);
    const [ulo, uhi] =
      unflaggedRank === null ? [null, null] : permilleInterval(unflaggedRank, unflaggedCount as number);
    return [rank, all.count, unflaggedRank, unflaggedCount, ...tail, lo, hi, ulo, uhi];
  }

  /** After the second pass: every group saw as many rows and values as in the first, or the input changed. */
  verify(): void {
    for (const [key, g] of this.groups) {
      const all = g.all as Ranking;
      const u = g.unflagged;
      if (g.seenRows !== g.rows || all.handed !== all.count || (u && u.handed !== u.count)) {
        throw changed(
          `group ${key}: ${g.seenRows} of ${g.rows} rows and ${all.handed} of ${all.count} successful values in the second pass`,
        );
      }
    }
  }
}

function changed(what: string): CollectError {
  return new CollectError(`samples changed while their Parquet copy was written (${what}); retry the collect`);
}
