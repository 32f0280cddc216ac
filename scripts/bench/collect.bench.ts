/**
 * Collect at scale: CollectOutput on a generated 1 M-line sockperf full log
 * (≈ 20 minutes of same-AZ exchanges at ~830/s), plain and gzip-compressed as the agent now
 * stores it, and on a 1 M-line pingpong log (.csv.gz; a same-AZ minute) and on the seed's 10,000-request HTTP matrix
 * (4 probes: keep-alive on/off × concurrency 1/16, 3 trials each: 120,000 lines in 12 files),
 * each in a child process under `node --max-old-space-size=512` (a Lambda-sized heap), through
 * the real directory store and DuckDB engine. Prints lines/s and the peak heap and RSS.
 * Then, for 1 M and 10 M samples of one path as collect writes them (`--engine-samples`), the
 * time to make them queryable with exact percentiles (the engine's Parquet copy, then
 * queries/percentiles.sql) against DuckDB's own quantile_disc over the same JSONL, as a ratio
 * taken in one run (the copy alone and the query alone beside it).
 */
import { execFile } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { createGzip } from 'node:zlib';
import { z } from 'zod';
import { type AgentSpec, readSpec } from '../../core/agent-spec.js';
import { keys } from '../../core/keys.js';
import { parseDocument } from '../../core/stored-document.js';
import { silentLogger } from '../../functions/log.js';
import { writeParquetCopy } from '../../functions/pipeline/parquet-copy.js';
import { validatePlanStep } from '../../functions/pipeline/validate.js';
import type { Deps } from '../../functions/ports.js';
import { DirStore } from '../../local/dir-store.js';
import { DuckDbQueryEngine } from '../../local/duckdb-query.js';
import { FileLock } from '../../local/file-lock.js';
import { loadQuery } from '../../queries/sql.js';

const CHILD = join(import.meta.dirname, 'collect-child.bench.ts');
/** The heap limit the bench runs the collect step under (the collect Lambda's memory, infra). */
export const HEAP_MB = 512;

/** What the child (collect-child.bench.ts) prints as its last line. */
const childResultSchema = z.object({
  seconds: z.number(),
  lines: z.number(),
  samples: z.number(),
  parquetSeconds: z.number(),
  parquetRows: z.number(),
  peakHeapBytes: z.number(),
  peakRssBytes: z.number(),
  heapLimitBytes: z.number(),
});
type ChildResult = z.output<typeof childResultSchema>;

/** Write `lines()` to a file through a stream, respecting back-pressure. */
async function writeLines(file: string, lines: Iterable<string>): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const ws = createWriteStream(file);
  let buf = '';
  for (const l of lines) {
    buf += l;
    if (buf.length > 1 << 16) {
      if (!ws.write(buf)) await new Promise<void>((r) => ws.once('drain', () => r()));
      buf = '';
    }
  }
  ws.write(buf);
  await new Promise<void>((resolve, reject) => ws.end((e?: Error | null) => (e ? reject(e) : resolve())));
}

/** A sockperf 3.7 `--full-log` CSV of `n` exchanges (the shape of test/fixtures/sockperf). */
function* sockperfLog(n: number): Generator<string> {
  yield '------------------------------\n';
  yield `test was performed using the following parameters: --mps=830 --burst=1 --reply-every=1 --msg-size=14 --time=1200\n`;
  yield '------------------------------\n';
  yield `sockperf: [Total Run] RunTime=1200.000 sec; Warm up time=400 msec; SentMessages=${n}; ReceivedMessages=${n}\n`;
  yield '------------------------------\n';
  yield 'packet, txTime(sec), rxTime(sec), latency(usec)\n';
  let x = 12345;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const tx = 1000 + i / 830;
    const lat = 30 + (x % 4000) / 100;
    yield `${i}, ${tx.toFixed(9)}, ${(tx + (2 * lat) / 1e6).toFixed(9)}, ${lat.toFixed(3)}\n`;
  }
  yield '------------------------------\n';
}

/** The pingpong helper's log of `n` exchanges (probes/native/pingpong.c; ~33 µs round trips). */
function* pingpongLog(n: number): Generator<string> {
  yield '# pathbench pingpong v1 mode=tcp req=16 resp=16 clock=pingpong-monotonic-busypoll realtime_minus_monotonic_ns=1796000000000000000\n';
  yield 'seq,tx_ns,rtt_ns,status\n';
  let x = 12345;
  let tx = 1_000_000_000_000;
  for (let i = 1; i <= n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const rtt = 50_000 + (x % 40_000);
    yield `${i},${tx},${rtt},ok\n`;
    tx += rtt + 2_000;
  }
  yield `# end exchanges=${n} ok=${n}\n`;
}

/** gzip `src` into `dst`, streaming (what the agent's compress.ts does). */
async function gzipFile(src: string, dst: string): Promise<void> {
  await pipeline(createReadStream(src), createGzip(), createWriteStream(dst));
}

/** The http probe's raw JSON lines (the C client's shape). */
function* httpLines(n: number, t0: number): Generator<string> {
  for (let i = 0; i < n; i++) {
    const lat = 0.2 + (i % 97) / 100;
    yield `${JSON.stringify({ seq: i, t_start: t0 + i, t_end: t0 + i + lat, ok: true, latency_ms: lat, status: 200, bytes: 1024, lport: 40000 + (i % 16), clock: 'httping-monotonic' })}\n`;
  }
}

function benchPlan(sockperfSeconds: number) {
  const http = (name: string, concurrency: number, keepAlive: boolean) => ({
    kind: 'http',
    name,
    count: 10000,
    trials: 3,
    concurrency,
    keepAlive,
    payloadBytes: 1024,
  });
  return {
    name: 'bench-collect',
    defaults: { client: { instanceId: 'bench', region: 'local' }, reboot: false, creditWaitSeconds: 0 },
    paths: [
      {
        id: 'sockperf',
        target: { host: '127.0.0.1', port: 11111 },
        probes: [{ kind: 'sockperf', port: 11111, mode: 'udp', durationSeconds: sockperfSeconds }],
      },
      {
        id: 'sockperf-gz',
        target: { host: '127.0.0.1', port: 11111 },
        probes: [{ kind: 'sockperf', port: 11111, mode: 'udp', durationSeconds: sockperfSeconds }],
      },
      {
        id: 'pingpong-gz',
        target: { host: '127.0.0.1', port: 7007 },
        probes: [{ kind: 'pingpong', mode: 'tcp', durationSeconds: 60 }],
      },
      {
        id: 'http',
        target: { host: '127.0.0.1', port: 8080 },
        probes: [
          http('http-ka-c1', 1, true),
          http('http-ka-c16', 16, true),
          http('http-noka-c1', 1, false),
          http('http-noka-c16', 16, false),
        ],
      },
    ],
  };
}

async function runChild(dataDir: string, runId: string, pathId: string): Promise<ChildResult> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [`--max-old-space-size=${HEAP_MB}`, '--import', 'tsx', CHILD, dataDir, runId, pathId],
    { maxBuffer: 1 << 20 },
  );
  return parseDocument(
    'collect-child.bench.ts output',
    stdout.trim().split('\n').pop() ?? '',
    childResultSchema,
    'result',
  );
}

/** n sample records of one sockperf path, as collect writes them (one JSONL file). */
function* sampleLines(n: number, runId: string, pathId: string): Generator<string> {
  let x = 12345;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const t = 1000 + i / 830;
    const failed = x % 1000 === 0;
    yield `${JSON.stringify({
      run_id: runId,
      path_id: pathId,
      probe: 'sockperf-udp',
      kind: 'sockperf',
      trial: 1,
      seq: i,
      t_start: t,
      t_end: t + 0.0001,
      metric: 'rtt_us',
      // sockperf reads to the nanosecond: some 40,000 distinct values (the low bits of this
      // generator repeat too soon, so the value takes higher ones).
      value: failed ? null : 30 + ((x >> 8) % 40000) / 1000,
      unit: 'us',
      ok: !failed,
      ...(failed ? { error: 'lost' } : {}),
      clock: 'sockperf',
    })}\n`;
  }
}

const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/**
 * The engine's Parquet copy of n samples of one path (DuckDB COPY of queries/parquet_copy.sql)
 * and percentiles.sql on it, against quantile_disc straight from the same JSONL; the copy and
 * quantile_disc take turns three times and the best of each counts, so a slow minute of this
 * shared machine weighs less. The figures must agree.
 */
export async function benchEngineCopy(dir: string, n: number): Promise<string[]> {
  const runId = 'bench-engine';
  const pathId = 'one';
  await writeLines(
    join(dir, ...keys.samples(pathId, runId, 'sockperf-udp', 1).split('/')),
    sampleLines(n, runId, pathId),
  );
  const query = await DuckDbQueryEngine.open(dir);
  const deps = { store: new DirStore(dir), log: silentLogger, query };
  const where = `WHERE path = '${pathId}' AND run = '${runId}'`;
  const quantileDisc = `SELECT quantile_disc(value, [0.5, 0.95, 0.99, 0.999]) AS q, max(value) AS mx FROM samples_jsonl ${where} AND ok AND value IS NOT NULL`;
  const copies: number[] = [];
  const discs: number[] = [];
  const copyOnly: number[] = [];
  const queryOnly: number[] = [];
  let figures: Record<string, unknown>[] = [];
  let disc: Record<string, unknown>[] = [];
  try {
    for (let round = 0; round < 3; round++) {
      let t = performance.now();
      disc = await query.query(quantileDisc, [], 'quantile_disc');
      discs.push(performance.now() - t);
      t = performance.now();
      await writeParquetCopy(deps, { runId, pathId });
      const copyMs = performance.now() - t;
      t = performance.now();
      figures = await query.query(loadQuery('percentiles'), [runId], 'percentiles');
      const pctMs = performance.now() - t;
      copies.push(copyMs + pctMs);
      copyOnly.push(copyMs);
      queryOnly.push(pctMs);
    }
  } finally {
    await query.close();
    await rm(dir, { recursive: true, force: true });
  }
  const all = figures.find((r) => r.subset === 'all');
  const [q, mx] = [disc[0]?.q as number[], disc[0]?.mx];
  const agree =
    all !== undefined && JSON.stringify([all.p50, all.p95, all.p99, all.p999, all.max]) === JSON.stringify([...q, mx]);
  const best = (xs: number[]) => Math.min(...xs);
  const ratio = (xs: number[]) => `${(best(xs) / best(discs)).toFixed(1)}×`;
  return [
    `${n.toLocaleString('en-US')} samples of one path, queryable with exact percentiles:`,
    `  engine Parquet copy + percentiles.sql ${secs(best(copies))} (rounds ${copies.map(secs).join(', ')}; the copy alone ${secs(best(copyOnly))}, the query alone ${secs(best(queryOnly))}) · ` +
      `DuckDB quantile_disc on the JSONL ${secs(best(discs))} (rounds ${discs.map(secs).join(', ')}) · ratio ${ratio(copies)} (goal ≤ 3×) · figures ${agree ? 'agree' : 'DIFFER'}`,
  ];
}

const mb = (b: number) => `${(b / 1048576).toFixed(1)} MB`;

export async function benchCollect(
  opts: { sockperfLines?: number; engineSamples?: number[] } = {},
): Promise<{ lines: string[] }> {
  const n = opts.sockperfLines ?? 1_000_000;
  const dir = await mkdtemp(join(tmpdir(), 'pathbench-bench-collect-'));
  try {
    const store = new DirStore(dir);
    const deps = {
      store,
      lock: new FileLock(dir, silentLogger),
      log: silentLogger,
      driver: 'local',
      now: () => new Date(),
      // validatePlanStep checks the plan's probe time against the fleet's poll interval.
      fleet: { pollSeconds: 5 },
    } as unknown as Deps;
    const runId = 'bench-collect';
    await validatePlanStep(deps, { input: { plan: benchPlan(Math.ceil(n / 830)) }, runId });
    await deps.lock.release(runId);
    const spec = async (pathId: string): Promise<AgentSpec> => {
      const read = await readSpec(store, runId, pathId, 'bench');
      if (!read) throw new Error(`ValidatePlan wrote no spec for ${pathId}`);
      return read;
    };
    const sock = await spec('sockperf');
    const sockFile = join(
      dir,
      ...`${keys.clientRawPrefix('sockperf', runId, 'bench')}${sock.probes[0].name}/1.csv`.split('/'),
    );
    await writeLines(sockFile, sockperfLog(n));
    // The same log gzip-compressed, as the agent now stores it, and a pingpong log of n lines.
    const sockGz = join(
      dir,
      ...`${keys.clientRawPrefix('sockperf-gz', runId, 'bench')}${sock.probes[0].name}/1.csv.gz`.split('/'),
    );
    await mkdir(dirname(sockGz), { recursive: true });
    await gzipFile(sockFile, sockGz);
    const pp = await spec('pingpong-gz');
    const ppPlain = join(dir, 'pingpong-plain.csv');
    await writeLines(ppPlain, pingpongLog(n));
    const ppGz = join(
      dir,
      ...`${keys.clientRawPrefix('pingpong-gz', runId, 'bench')}${pp.probes[0].name}/1.csv.gz`.split('/'),
    );
    await mkdir(dirname(ppGz), { recursive: true });
    await gzipFile(ppPlain, ppGz);
    const http = await spec('http');
    for (const p of http.probes) {
      for (let t = 1; t <= 3; t++) {
        await writeLines(
          join(dir, ...`${keys.clientRawPrefix('http', runId, 'bench')}${p.name}/${t}.jsonl`.split('/')),
          httpLines(10000, 1.7e12),
        );
      }
    }
    const out = [
      `collect, then the Parquet copy (as the task handler does), under node --max-old-space-size=${HEAP_MB} (a child process each; real directory store and DuckDB):`,
    ];
    const lines = n.toLocaleString('en-US');
    for (const [pathId, what, file, plain] of [
      ['sockperf', `sockperf full log, ${lines} lines`, sockFile, undefined],
      ['sockperf-gz', `sockperf full log .csv.gz, ${lines} lines`, sockGz, sockFile],
      ['pingpong-gz', `pingpong log .csv.gz, ${lines} lines`, ppGz, ppPlain],
      ['http', 'http matrix, 4 probes × 3 trials × 10,000 requests', undefined, undefined],
    ] as const) {
      const r = await runChild(dir, runId, pathId);
      const bytes = file ? (await stat(file)).size : 0;
      const size = !file
        ? ''
        : plain
          ? ` (${mb(bytes)} gz of ${mb((await stat(plain)).size)} plain, ×${((await stat(plain)).size / bytes).toFixed(1)})`
          : ` (${mb(bytes)} raw)`;
      out.push(
        `  ${what}${size}: ${r.lines.toLocaleString('en-US')} lines → ${r.samples.toLocaleString('en-US')} samples in ${r.seconds.toFixed(1)} s · ` +
          `${Math.round(r.lines / r.seconds).toLocaleString('en-US')} lines/s · then Parquet, ${r.parquetRows.toLocaleString('en-US')} rows, in ${r.parquetSeconds.toFixed(1)} s · peak heap ${mb(r.peakHeapBytes)} · peak RSS ${mb(r.peakRssBytes)} (heap limit ${mb(r.heapLimitBytes)})`,
      );
    }
    for (const samples of opts.engineSamples ?? [n])
      out.push(...(await benchEngineCopy(join(dir, `engine-${samples}`), samples)));
    return { lines: out };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
