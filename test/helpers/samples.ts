/** Test helpers: a seeded PRNG and writing sample records in the contract's file layout. */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { keys } from '../../functions/core/keys.js';

/** mulberry32: small, seeded, good enough to vary test data reproducibly. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function tempDataDir(prefix: string): Promise<string> {
  return mkdtemp(path.join(tmpdir(), `pb-${prefix}-`));
}

/** Write records to `<dir>/samples/path=<id>/run=<runId>/<probe>-<trial>.jsonl`, one file per key. */
export async function writeSamples(dir: string, records: Record<string, unknown>[]): Promise<string[]> {
  const files = new Map<string, string[]>();
  for (const r of records) {
    const key = keys.samples(String(r.path_id), String(r.run_id), String(r.probe), Number(r.trial));
    const lines = files.get(key) ?? [];
    lines.push(JSON.stringify(r));
    files.set(key, lines);
  }
  for (const [key, lines] of files) {
    const file = path.join(dir, key);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, `${lines.join('\n')}\n`);
  }
  return [...files.keys()];
}

/** A standard normal draw from a uniform source (Box–Muller; one of the pair is used). */
export function normalFrom(rand: () => number): () => number {
  return () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}

/** Standard normal quantiles for the percentiles the reports carry (per-mille → z). */
export const NORMAL_QUANTILE: Record<number, number> = {
  500: 0,
  950: 1.6448536269514722,
  990: 2.3263478740408408,
};

/** A latency-like distribution with a known quantile function: a sampler and its percentile at per-mille k. */
export interface KnownDistribution {
  name: string;
  draw: () => number;
  quantile: (perMille: number) => number;
}

/** Log-normal exp(mu + sigma·Z): a right-skewed latency. */
export function lognormal(rand: () => number, mu: number, sigma: number): KnownDistribution {
  const z = normalFrom(rand);
  return {
    name: `lognormal(${mu}, ${sigma})`,
    draw: () => Math.exp(mu + sigma * z()),
    quantile: (k) => Math.exp(mu + sigma * NORMAL_QUANTILE[k]),
  };
}

/** shift + Exponential(mean): a floor plus queueing. */
export function shiftedExponential(rand: () => number, shift: number, mean: number): KnownDistribution {
  return {
    name: `${shift} + exponential(${mean})`,
    draw: () => shift - mean * Math.log(1 - rand()),
    quantile: (k) => shift - mean * Math.log(1 - k / 1000),
  };
}
