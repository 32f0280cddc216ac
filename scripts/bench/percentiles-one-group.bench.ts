/**
 * Child process of scripts/bench/percentiles.bench.ts, one group of N samples (one path's long
 * sockperf run), in a fresh process so the peak RSS read before and after is the step's own
 * growth. Prints {"peakBytes", "ms"}.
 * queries/percentiles.sql over the group in Parquet under DIR (path=one/run=bench/, written by
 * the parent). Usage: `node --import tsx scripts/bench/percentiles-one-group.bench.ts N DIR`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DuckDBInstance } from '@duckdb/node-api';
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
if (!Number.isInteger(n) || n < 1 || !dir) {
  throw new Error('usage: percentiles-one-group.bench.ts N DIR');
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
