/** The small order statistics in stats.ts: the two middles (mean of two vs nearest rank) stay distinct. */
import { describe, expect, it } from 'vitest';
import { median, percentileOf } from '../../core/stats.js';

describe('median', () => {
  it('is the middle value of an odd count, in any input order', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([7])).toBe(7);
  });

  it('is the mean of the two middle values of an even count', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([10, 20])).toBe(15);
  });

  it('is NaN for no values and leaves its input alone', () => {
    expect(median([])).toBeNaN();
    const xs = [3, 1, 2];
    median(xs);
    expect(xs).toEqual([3, 1, 2]);
  });
});

describe('percentileOf', () => {
  it('is the nearest-rank percentile of values in any order: p50 is the lower middle of an even count', () => {
    expect(percentileOf([4, 1, 3, 2], 500)).toBe(2);
    expect(percentileOf([5, 1, 3], 500)).toBe(3);
    expect(percentileOf([10, 9, 8, 7, 6, 5, 4, 3, 2, 1], 990)).toBe(10);
  });

  it('is null for no values and leaves its input alone', () => {
    expect(percentileOf([], 500)).toBeNull();
    const xs = [3, 1, 2];
    percentileOf(xs, 500);
    expect(xs).toEqual([3, 1, 2]);
  });
});
