/** The rank columns' two passes (core/sample-ranks.ts) on their own, against a sort. */
import { describe, expect, it } from 'vitest';
import { CollectError } from '../../core/errors.js';
import { permilleInterval, SampleRanks } from '../../core/sample-ranks.js';
import { prng } from '../helpers/samples.js';

const where = () => 'test';

describe('SampleRanks', () => {
  it('gives each successful value its position in the sorted group, ties in arrival order, and the counts', () => {
    const rand = prng(5);
    const recs = Array.from({ length: 5000 }, (_, i) => ({
      probe: i % 2 ? 'a' : 'b',
      metric: 'm',
      unit: i % 3 ? 'ms' : undefined,
      ok: rand() > 0.1,
      value: rand() < 0.02 ? null : Math.floor(rand() * 40) - 10,
      // group b (even i) carries flags; group a none
      flag: i % 2 === 0 && rand() < 0.3 ? 'x' : null,
    }));
    const ranks = new SampleRanks();
    for (const r of recs) ranks.add(r);
    ranks.seal();
    const good = (r: (typeof recs)[number]) => r.ok && r.value !== null;
    const seen = new Map<string, number[]>();
    for (const r of recs) {
      const rows = recs.filter((x) => x.probe === r.probe && x.unit === r.unit);
      const group = rows.filter(good);
      const clean = group.filter((x) => x.flag === null);
      const flags = rows.some((x) => x.flag !== null);
      const cells = ranks.cells(r, where);
      const tail = [rows.length, rows.filter((x) => x.flag === null).length];
      if (!good(r)) {
        expect(cells).toEqual([null, group.length, null, flags ? clean.length : null, ...tail, null, null, null, null]);
        continue;
      }
      const v = r.value as number;
      // ties: the k-th arrival of a value takes the k-th of its positions
      const key = `${r.probe}/${r.unit}/${v}`;
      const before = seen.get(key) ?? [0, 0];
      const rank = 1 + group.filter((x) => (x.value as number) < v).length + before[0];
      const unflaggedRank =
        flags && r.flag === null ? 1 + clean.filter((x) => (x.value as number) < v).length + before[1] : null;
      seen.set(key, [before[0] + 1, before[1] + (r.flag === null ? 1 : 0)]);
      const interval = (r: number, n: number) => [Math.floor((1000 * (r - 1)) / n), Math.floor((1000 * r) / n)];
      expect(cells).toEqual([
        rank,
        group.length,
        unflaggedRank,
        flags ? clean.length : null,
        ...tail,
        ...interval(rank, group.length),
        ...(unflaggedRank === null ? [null, null] : interval(unflaggedRank, clean.length)),
      ]);
    }
    ranks.verify();
  });

  it('gives each position the per-mille interval that holds exactly the k whose nearest rank it is', () => {
    for (const n of [1, 2, 3, 7, 19, 20, 21, 99, 100, 101, 999, 1000, 1001, 2047]) {
      const holders = new Map<number, number>();
      let previousHi = 0;
      for (let r = 1; r <= n; r++) {
        const [lo, hi] = permilleInterval(r, n);
        expect(lo).toBe(previousHi);
        previousHi = hi;
        for (let k = lo + 1; k <= hi; k++) holders.set(k, r);
      }
      expect(previousHi).toBe(1000);
      for (let k = 1; k <= 1000; k++) expect(holders.get(k)).toBe(Math.ceil((k * n) / 1000 - 1e-9));
      // and with integer arithmetic, as the query's reference does
      for (const k of [500, 950, 990, 999]) expect(holders.get(k)).toBe(Math.floor((k * n + 999) / 1000));
    }
  });

  it('refuses a second pass that differs from the first', () => {
    const rec = { probe: 'a', metric: 'm', unit: 'ms', ok: true, value: 1 };
    const ranks = new SampleRanks();
    ranks.add(rec);
    ranks.add({ ...rec, value: 2 });
    ranks.seal();
    expect(() => ranks.cells({ ...rec, probe: 'b' }, where)).toThrow(CollectError);
    expect(() => ranks.cells({ ...rec, value: 3 }, where)).toThrow(/test: a value the first pass did not see/);
    ranks.cells(rec, where);
    // a value comes back more often than it went in
    expect(() => ranks.cells(rec, where)).toThrow(/a value the first pass did not see/);
    // one of the two values never came back
    expect(() => ranks.verify()).toThrow(/1 of 2 successful values/);
  });

  it('is used in order: add, seal, cells', () => {
    const ranks = new SampleRanks();
    expect(() => ranks.cells({}, where)).toThrow(/before seal/);
    ranks.seal();
    expect(() => ranks.add({})).toThrow(/after seal/);
  });
});
