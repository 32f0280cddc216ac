/**
 * Child process of scripts/bench/percentiles.bench.ts, one group of N samples (one path's long
 * sockperf run), in a fresh process so the peak RSS read before and after is the step's own
 * growth. Prints {"peakBytes", "ms"}.
 * - `query` (default): queries/percentiles.sql over the group in Parquet under DIR
 *   (path=one/run=bench/, written by the parent).
 * - `ranks`: the Parquet writer's rank step (core/sample-ranks.ts) on N records made
 *   here, both passes (the records are made twice, as the writer reads the JSONL twice).
 * Usage: `node --import tsx scripts/bench/percentiles-one-group.bench.ts N DIR [query|ranks]`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DuckDBInstance } from '@duckdb/node-api';
import { SampleRanks } from '../../core/sample-ranks.js';
import { sqlString } from '../../local/duckdb-query.js';
import { loadQuery } from '../../queries/sql.js';

/**
 * This process's peak RSS in bytes: VmHWM, which belongs to the process's own memory map. Not
 * resourceUsage().maxRSS: Linux carries ru_maxrss over fork and exec, so a child of the 2 GB
 * bench would report the bench's peak.
 */
function peakRss(): number {
  const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
  if (!m) throw new Error('no VmHWM in /proc/self/status');
  return Number(m[1]) * 1024;
}

const n = Number(process.argv[2]);
const dir = process.argv[3];
const mode = process.argv[4] ?? 'query';
if (!Number.isInteger(n) || n < 1 || !dir || !['query', 'ranks'].includes(mode)) {
  throw new Error('usage: percentiles-one-group.bench.ts N DIR [query|ranks]');
}

if (mode === 'ranks') {
  // Latency-like values with ties and a 3 % slow mode, ~1 % failed (as the parent's Parquet group).
  const records = function* () {
    let x = 0x9e3779b9;
    for (let i = 0; i < n; i++) {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      const failed = x % 100 === 0;
      const value = failed ? null : 20 + (x % 100000) / 1000 + ((x >>> 7) % 100 < 3 ? 500 : 0);
      yield { probe: 'sockperf', metric: 'rtt_us', unit: 'us', ok: !failed, value, flag: null };
    }
  };
  const before = peakRss();
  const t = performance.now();
  const ranks = new SampleRanks();
  for (const r of records()) ranks.add(r);
  ranks.seal();
  let checksum = 0;
  for (const r of records()) checksum += ranks.cells(r, () => 'bench')[0] ?? 0;
  ranks.verify();
  const ms = performance.now() - t;
  const peak = peakRss();
  if (!(checksum > 0)) throw new Error('no ranks');
  console.log(JSON.stringify({ peakBytes: peak - before, ms }));
  process.exit(0);
}

const instance = await DuckDBInstance.create(':memory:');
const conn = await instance.connect();
await conn.run(
  `CREATE VIEW samples AS SELECT * FROM read_parquet(${sqlString(path.join(dir, '*', '*', '*.parquet'))}, hive_partitioning = true)`,
);
const before = peakRss();
const t = performance.now();
const reader = await conn.runAndReadAll(loadQuery('percentiles'), ['bench']);
const ms = performance.now() - t;
const peak = peakRss();
const rows = reader.getRowObjectsJS();
if (rows.length !== 1 || Number(rows[0].total) !== n) {
  throw new Error(
    `expected one result row over ${n} samples, got ${JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? Number(v) : v))}`,
  );
}
conn.closeSync();
instance.closeSync();
console.log(JSON.stringify({ peakBytes: peak - before, ms }));
