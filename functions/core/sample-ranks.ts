/**
 * The rank columns of the Parquet samples table (functions/sql.ts RANK_COLUMNS), computed in two
 * passes over a partition's records: the first pass collects every successful value of each
 * (probe, metric, unit) group and sorts it once; the second gives each record its columns.
 *
 *   value_rank      1 + how many successful values of the group are smaller (ties share it)
 *   value_count     how many successful values the group has
 *   unflagged_rank  the same among the group's unflagged successful values (flag null)
 *   unflagged_count how many of those there are
 *
 * The ranks are those of SQL's rank() OVER (PARTITION BY … ORDER BY value) over the same rows
 * (local/duckdb-query.ts computes them so for JSONL that has no Parquet copy yet). With them the
 * value at nearest rank k is the largest value whose value_rank is at most k: every value at or
 * below the k-th has a rank at most k, every larger one a rank above k. queries/percentiles.sql
 * reads percentiles that way, with one pass and no sort.
 *
 * A sample is successful when ok is true and value is a number (the query's `ok = true AND value
 * IS NOT NULL`; anything else is refused by the Parquet writer's type checks). Hand-written
 * rather than a library: the ranks are part of the measurement's exactness, and typed arrays keep
 * 10 million values at 8 bytes each (16 at most while an array grows).
 */
import { CollectError } from './errors.js';

/** A Float64Array that grows by doubling. */
class Values {
  private data = new Float64Array(1024);
  length = 0;

  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }

  /** The values sorted ascending, in place (no copy: a view of the buffer). */
  sorted(): Float64Array {
    return this.data.subarray(0, this.length).sort();
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

interface Group {
  all: Values;
  unflagged: Values;
  sortedAll?: Float64Array;
  sortedUnflagged?: Float64Array;
  /** Successful / unflagged successful records seen by the second pass (checked against the first). */
  seenAll: number;
  seenUnflagged: number;
}

/** The rank columns of one record, in RANK_COLUMNS order (null where they do not apply). */
export type RankCells = [number | null, number, number | null, number];

const isSuccess = (r: Record<string, unknown>) => r.ok === true && typeof r.value === 'number';
const isUnflagged = (r: Record<string, unknown>) => r.flag === undefined || r.flag === null;
/** The query's group within a partition: GROUP BY path, probe, metric, unit (path is the partition). */
const groupKey = (r: Record<string, unknown>) => JSON.stringify([r.probe ?? null, r.metric ?? null, r.unit ?? null]);

export class SampleRanks {
  private readonly groups = new Map<string, Group>();
  private sealed = false;

  /** First pass: one record (every record of the partition, in any order). */
  add(record: Record<string, unknown>): void {
    if (this.sealed) throw new Error('SampleRanks: add() after seal()');
    const key = groupKey(record);
    let g = this.groups.get(key);
    if (!g) {
      g = { all: new Values(), unflagged: new Values(), seenAll: 0, seenUnflagged: 0 };
      this.groups.set(key, g);
    }
    if (!isSuccess(record)) return;
    const v = record.value as number;
    g.all.push(v);
    if (isUnflagged(record)) g.unflagged.push(v);
  }

  /** End of the first pass: sort each group's values once. */
  seal(): void {
    if (this.sealed) return;
    for (const g of this.groups.values()) {
      g.sortedAll = g.all.sorted();
      g.sortedUnflagged = g.unflagged.sorted();
    }
    this.sealed = true;
  }

  /**
   * Second pass: the rank columns of one record. The record must be one the first pass saw; a
   * group or value it did not see means the input changed between the passes, an error.
   */
  cells(record: Record<string, unknown>, where: () => string): RankCells {
    if (!this.sealed) throw new Error('SampleRanks: cells() before seal()');
    const g = this.groups.get(groupKey(record));
    const sortedAll = g?.sortedAll;
    const sortedUnflagged = g?.sortedUnflagged;
    if (!g || !sortedAll || !sortedUnflagged) throw changed(`${where()}: a group the first pass did not see`);
    if (!isSuccess(record)) return [null, sortedAll.length, null, sortedUnflagged.length];
    const v = record.value as number;
    const rank = lowerBound(sortedAll, v);
    if (sortedAll[rank] !== v) throw changed(`${where()}: a value the first pass did not see`);
    g.seenAll++;
    let unflaggedRank: number | null = null;
    if (isUnflagged(record)) {
      const u = lowerBound(sortedUnflagged, v);
      if (sortedUnflagged[u] !== v) throw changed(`${where()}: an unflagged value the first pass did not see`);
      unflaggedRank = u + 1;
      g.seenUnflagged++;
    }
    return [rank + 1, sortedAll.length, unflaggedRank, sortedUnflagged.length];
  }

  /** After the second pass: every group saw as many values as in the first, or the input changed. */
  verify(): void {
    for (const [key, g] of this.groups) {
      const all = g.sortedAll?.length ?? 0;
      const unflagged = g.sortedUnflagged?.length ?? 0;
      if (g.seenAll !== all || g.seenUnflagged !== unflagged) {
        throw changed(
          `group ${key}: ${g.seenAll} of ${all} successful values and ${g.seenUnflagged} of ${unflagged} unflagged ones in the second pass`,
        );
      }
    }
  }
}

function changed(what: string): CollectError {
  return new CollectError(`samples changed while their Parquet copy was written (${what}); retry the collect`);
}
