/**
 * One CollectOutput task of the collect bench, in its own process so the heap limit is Lambda's:
 * run as `node --max-old-space-size=512 --import tsx scripts/bench/collect-child.bench.ts <dataDir>
 * <runId> <pathId>` by scripts/bench/collect.bench.ts. Like the task handler (functions/handlers),
 * collect, then the partition's Parquet copy (written by DuckDB). Prints one JSON line: seconds
 * of each, lines read, samples kept, Parquet rows, peak V8 heap used and RSS (sampled every
 * 5 ms, over both steps), and the heap limit.
 */
import { getHeapStatistics } from 'node:v8';
import { silentLogger } from '../../functions/log.js';
import { collectOutput } from '../../functions/pipeline/collect.js';
import { loadManifest } from '../../functions/pipeline/manifest.js';
import { writeParquetCopy } from '../../functions/pipeline/parquet-copy.js';
import type { Deps } from '../../functions/ports.js';
import { DirStore } from '../../local/dir-store.js';
import { DuckDbQueryEngine } from '../../local/duckdb-query.js';
import { FileLock } from '../../local/file-lock.js';

const [dataDir, runId, pathId] = process.argv.slice(2);
const store = new DirStore(dataDir);
const query = await DuckDbQueryEngine.open(dataDir);
const deps = {
  store,
  query,
  lock: new FileLock(dataDir, silentLogger),
  log: silentLogger,
  driver: 'local',
  now: () => new Date(),
} as unknown as Deps;

let peakHeap = 0;
let peakRss = 0;
const sample = () => {
  const m = process.memoryUsage();
  peakHeap = Math.max(peakHeap, m.heapUsed);
  peakRss = Math.max(peakRss, m.rss);
};
const timer = setInterval(sample, 5);
const t0 = process.hrtime.bigint();
const out = await collectOutput(deps, { runId, pathId });
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
const t1 = process.hrtime.bigint();
const parquet = await writeParquetCopy(deps, { runId, pathId });
const parquetSeconds = Number(process.hrtime.bigint() - t1) / 1e9;
if (parquet.rows === undefined) throw new Error('the DuckDB engine did not say how many rows it copied');
clearInterval(timer);
sample();
const p = (await loadManifest(store, runId)).paths.find((x) => x.id === pathId);
const lines = (p?.probes ?? []).flatMap((x) => x.files ?? []).reduce((a, f) => a + f.lines, 0);
await query.close();
process.stdout.write(
  `${JSON.stringify({
    seconds,
    lines,
    samples: out.samples,
    parquetSeconds,
    parquetRows: parquet.rows,
    peakHeapBytes: peakHeap,
    peakRssBytes: peakRss,
    heapLimitBytes: getHeapStatistics().heap_size_limit,
  })}\n`,
);
