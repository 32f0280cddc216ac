/**
 * core/shape.ts on synthetic data drawn from known distributions: the right number
 * of modes at the right places with the right shares, and no mode made of noise.
 */
import { describe, expect, it } from 'vitest';
import {
  BINS_PER_DECADE,
  binEdges,
  binIndex,
  contiguousBins,
  detectModes,
  histogram,
  meanInValley,
} from '../../core/shape.js';
import { prng } from '../helpers/samples.js';

/** Standard normal draws (Box–Muller) from a seeded PRNG. */
function normal(rand: () => number): () => number {
  return () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}

/** n draws from a mixture of log-normals: [median, sigma (natural log), weight]. */
function mixture(seed: number, n: number, parts: [number, number, number][]): number[] {
  const rand = prng(seed);
  const z = normal(rand);
  const total = parts.reduce((s, p) => s + p[2], 0);
  return Array.from({ length: n }, () => {
    const u = rand() * total;
    let acc = 0;
    const part =
      parts.find((p) => {
        acc += p[2];
        return u < acc;
      }) ?? parts[parts.length - 1];
    return part[0] * Math.exp(part[1] * z());
  });
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

function modesOf(values: number[]) {
  const bins = histogram(values);
  return { bins, analysis: detectModes(bins) };
}

describe('log-spaced bins', () => {
  it('puts a value in the fixed fraction of a decade it belongs to', () => {
    expect(binIndex(1)).toBe(0);
    expect(binIndex(10)).toBe(BINS_PER_DECADE);
    expect(binIndex(0.999)).toBe(-1);
    const { lo, hi } = binEdges(binIndex(3.3));
    expect(lo).toBeLessThanOrEqual(3.3);
    expect(hi).toBeGreaterThan(3.3);
    expect(hi / lo).toBeCloseTo(10 ** (1 / BINS_PER_DECADE), 12);
  });

  it('fills the gaps between occupied bins and leaves out values ≤ 0', () => {
    const bins = histogram([1, 1.01, 2, 0, -3, Number.NaN]);
    expect(bins.length).toBe(binIndex(2) + 1);
    expect(bins.reduce((s, b) => s + b.count, 0)).toBe(3);
    expect(bins[0].count).toBe(2);
    expect(bins.filter((b) => b.count === 0).length).toBe(bins.length - 2);
    expect(contiguousBins([])).toEqual([]);
  });
});

describe('detectModes', () => {
  it('finds one mode in unimodal data, at its median', () => {
    for (const [seed, n, sigma] of [
      [1, 300, 0.05],
      [2, 1000, 0.2],
      [3, 10000, 0.5],
      [4, 300, 0.01],
    ] as const) {
      const { analysis } = modesOf(mixture(seed, n, [[2.5, sigma, 1]]));
      expect(analysis?.modes.length, `seed ${seed}`).toBe(1);
      expect(analysis?.modes[0].at).toBeGreaterThan(2.5 / 1.1);
      expect(analysis?.modes[0].at).toBeLessThan(2.5 * 1.1);
      expect(analysis?.modes[0].share).toBe(1);
    }
  });

  it('finds two modes with their locations and shares in bimodal data', () => {
    const values = mixture(5, 2000, [
      [2, 0.03, 0.3],
      [6, 0.03, 0.7],
    ]);
    const { bins, analysis } = modesOf(values);
    expect(analysis?.modes.length).toBe(2);
    const [a, b] = analysis!.modes;
    expect(a.at).toBeGreaterThan(1.9);
    expect(a.at).toBeLessThan(2.1);
    expect(b.at).toBeGreaterThan(5.7);
    expect(b.at).toBeLessThan(6.3);
    expect(a.share).toBeCloseTo(0.3, 1);
    expect(b.share).toBeCloseTo(0.7, 1);
    expect(a.share + b.share).toBeCloseTo(1, 12);
    // The mean (≈ 4.8) lies between the modes, where there are no samples.
    expect(meanInValley(bins, analysis!, mean(values))).toBe(true);
    // …and a value at a mode is not in a valley.
    expect(meanInValley(bins, analysis!, 6)).toBe(false);
  });

  it('finds three modes in trimodal data (seed 004 shape)', () => {
    const values = mixture(6, 3000, [
      [1, 0.05, 0.5],
      [3, 0.05, 0.3],
      [9, 0.05, 0.2],
    ]);
    const { analysis } = modesOf(values);
    expect(analysis?.modes.map((m) => Math.round(m.at))).toEqual([1, 3, 9]);
    expect(analysis?.modes.map((m) => Math.round(m.share * 10) / 10)).toEqual([0.5, 0.3, 0.2]);
  });

  it('calls no noise a mode: many unimodal, skewed and heavy-tailed samples of every size', () => {
    let falseModes = 0;
    for (let seed = 100; seed < 400; seed++) {
      const rand = prng(seed);
      const n = [30, 100, 300, 1000, 3000][seed % 5];
      const shape = seed % 4;
      let values: number[];
      if (shape === 0) values = mixture(seed, n, [[1 + rand() * 10, 0.02 + rand() * 0.6, 1]]);
      else if (shape === 1)
        values = Array.from({ length: n }, () => 1 - Math.log(1 - rand())); // shifted exponential
      else if (shape === 2)
        values = Array.from({ length: n }, () => 0.5 / (1 - rand()) ** 0.7); // Pareto tail
      else values = Array.from({ length: n }, () => 1 + rand() * 2); // flat
      const { analysis } = modesOf(values);
      if ((analysis?.modes.length ?? 1) !== 1) falseModes += 1;
    }
    expect(falseModes).toBe(0);
  });

  it('does not call a small cluster of outliers a mode, nor report modes below 30 samples', () => {
    const body = mixture(7, 1000, [[1, 0.05, 1]]);
    const outliers = Array.from({ length: 20 }, (_, i) => 30 + i * 0.01); // 2 %: below MIN_SHARE
    expect(modesOf([...body, ...outliers]).analysis?.modes.length).toBe(1);
    expect(modesOf(body.slice(0, 29)).analysis).toBeNull();
  });

  it('separates close modes only when the valley between them is deep', () => {
    // 1.0 and 1.4 ms (≈ 6 bins apart; the kernel's ±2 bins set the resolution), narrow: a clear valley.
    const clear = mixture(8, 3000, [
      [1, 0.02, 0.5],
      [1.4, 0.02, 0.5],
    ]);
    expect(modesOf(clear).analysis?.modes.length).toBe(2);
    // The same centres with wide spread overlap into one hump.
    const merged = mixture(9, 3000, [
      [1, 0.2, 0.5],
      [1.4, 0.2, 0.5],
    ]);
    expect(modesOf(merged).analysis?.modes.length).toBe(1);
  });

  it('reports no valley for a unimodal distribution', () => {
    const values = mixture(10, 1000, [[3, 0.3, 1]]);
    const { bins, analysis } = modesOf(values);
    expect(meanInValley(bins, analysis!, mean(values))).toBe(false);
  });
});
