import { describe, expect, it } from 'vitest';
import { connectStats } from '../../lab/measure.js';

describe('connectStats', () => {
  it('takes the shared nearest rank over the successful samples', () => {
    const v = Array.from({ length: 200 }, (_, i) => i + 1);
    expect(connectStats([...v, null, null])).toMatchObject({ n: 200, failed: 2, p50: 100, p95: 190, min: 1, max: 200 });
    expect(connectStats([null])).toMatchObject({ n: 0, failed: 1 });
    expect(connectStats([7]).p50).toBe(7);
  });
});
