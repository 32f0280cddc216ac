/** Test helpers: a seeded PRNG and writing sample records in the contract's file layout. */

import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { keys } from '../../core/keys.js';
import { mulberry32 } from '../../core/path-order.js';
import { silentLogger } from '../../functions/log.js';
import { writeParquetCopy } from '../../functions/pipeline/parquet-copy.js';
import { DirStore } from '../../local/dir-store.js';
import { DuckDbQueryEngine } from '../../local/duckdb-query.js';

/** mulberry32 (core/path-order.ts): small, seeded, good enough to vary test data reproducibly. */
export const prng = mulberry32;

export async function tempDataDir(prefix: string): Promise<string> {
  return mkdtemp(path.join(tmpdir(), `pb-${prefix}-`));
}

/**
 * Write records to `<dir>/samples/path=<id>/run=<runId>/<probe>-<trial>.jsonl`, one file per key;
 * with `parquet`, also each partition's Parquet copy (the pipeline's writeParquetCopy), so
 * the `samples` view reads Parquet instead of the JSONL.
 */
export async function writeSamples(
  dir: string,
  records: Record<string, unknown>[],
  opts: { parquet?: boolean } = {},
): Promise<string[]> {
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
  if (opts.parquet) {
    const partitions = new Set(records.map((r) => JSON.stringify([String(r.path_id), String(r.run_id)])));
    const store = new DirStore(dir);
    const query = await DuckDbQueryEngine.open(dir);
    try {
      for (const p of partitions) {
        const [pathId, runId] = JSON.parse(p) as [string, string];
        await writeParquetCopy({ store, log: silentLogger, query }, { pathId, runId });
      }
    } finally {
      query.close();
    }
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

/**
 * A run of several paths to compare: http in three trials (some failures), tcp-connect in one,
 * iperf3 throughput and retransmits in two; heavy ties on path C, a path with one sample and a
 * path whose every sample failed. Records follow the sample contract (writeSamples).
 */
export function comparisonRun(runId: string, seed: number): Record<string, unknown>[] {
  const rand = prng(seed);
  const z = normalFrom(rand);
  const recs: Record<string, unknown>[] = [];
  const add = (
    path: string,
    probe: string,
    kind: string,
    metric: string,
    unit: string,
    trial: number,
    seq: number,
    value: number | null,
  ) =>
    recs.push({
      run_id: runId,
      path_id: path,
      probe,
      kind,
      trial,
      seq,
      t_start: 1_700_000_000_000 + seq,
      t_end: 1_700_000_000_001 + seq,
      metric,
      value,
      unit,
      ok: value !== null,
      ...(value === null ? { error: 'timeout' } : {}),
    });
  const shapes: Record<string, (trial: number) => number> = {
    A: (t) => Math.exp(0.1 * t + 0.3 * z()),
    B: (t) => 1.4 + 0.05 * t - 0.5 * Math.log(1 - rand()),
    C: () => Math.round(10 * Math.exp(0.3 * z())) / 10, // 0.1 ms resolution: heavy ties
  };
  for (const [path, draw] of Object.entries(shapes)) {
    for (let trial = 1; trial <= 3; trial++)
      for (let i = 0; i < 400; i++)
        add(path, 'http', 'http', 'http_latency_ms', 'ms', trial, i, rand() < 0.03 ? null : draw(trial));
    for (let i = 0; i < 300; i++) add(path, 'tcp-connect', 'tcp-connect', 'connect_rtt_ms', 'ms', 1, i, draw(1) / 2);
    if (path === 'B') continue; // B ran no iperf3
    for (let trial = 1; trial <= 2; trial++)
      for (let i = 0; i < 10; i++) {
        add(path, 'iperf3', 'iperf3', 'throughput_bps', 'bit/s', trial, i, (path === 'A' ? 9e8 : 8e8) + 1e7 * z());
        add(path, 'iperf3', 'iperf3', 'retransmits', 'count', trial, i, Math.floor(rand() * 3));
      }
  }
  add('single', 'tcp-connect', 'tcp-connect', 'connect_rtt_ms', 'ms', 1, 0, 0.25);
  for (let i = 0; i < 5; i++) add('dead', 'tcp-connect', 'tcp-connect', 'connect_rtt_ms', 'ms', 1, i, null);
  return recs;
}

/** Successful values of one group of records, ascending (the independent sort the SQL is held to). */
export function sortedValues(
  records: readonly Record<string, unknown>[],
  group: { path: string; probe: string; metric: string; unit: string; trial?: number },
): Float64Array {
  const values = records
    .filter(
      (r) =>
        r.path_id === group.path &&
        r.probe === group.probe &&
        r.metric === group.metric &&
        r.unit === group.unit &&
        (group.trial === undefined || r.trial === group.trial) &&
        r.ok === true &&
        typeof r.value === 'number',
    )
    .map((r) => r.value as number);
  return Float64Array.from(values).sort();
}
