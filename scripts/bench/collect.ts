/**
 * Collect at scale (issue 18 item 3): CollectOutput on a generated 1 M-line sockperf full log
 * (≈ 20 minutes of same-AZ exchanges at ~830/s) and on the seed's 10,000-request HTTP matrix
 * (4 probes: keep-alive on/off × concurrency 1/16, 3 trials each: 120,000 lines in 12 files),
 * each in a child process under `node --max-old-space-size=512` (a Lambda-sized heap), through
 * the real directory store and DuckDB engine. Prints lines/s and the peak heap and RSS.
 */
import { execFile } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { keys } from '../../functions/core/keys.js';
import type { AgentSpec } from '../../functions/core/model.js';
import { silentLogger } from '../../functions/log.js';
import { validatePlanStep } from '../../functions/pipeline/validate.js';
import type { Deps } from '../../functions/ports.js';
import { DirStore } from '../../local/dir-store.js';
import { FileLock } from '../../local/file-lock.js';

const CHILD = join(import.meta.dirname, 'collect-child.ts');
/** The heap limit the bench runs the collect step under (the collect Lambda's memory, infra). */
export const HEAP_MB = 512;

interface ChildResult {
  seconds: number;
  lines: number;
  samples: number;
  peakHeapBytes: number;
  peakRssBytes: number;
  heapLimitBytes: number;
}

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
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as ChildResult;
}

const mb = (b: number) => `${(b / 1048576).toFixed(0)} MB`;

export async function benchCollect(opts: { sockperfLines?: number } = {}): Promise<{ lines: string[] }> {
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
    } as unknown as Deps;
    const runId = 'bench-collect';
    await validatePlanStep(deps, { input: { plan: benchPlan(Math.ceil(n / 830)) }, runId });
    await deps.lock.release(runId);
    const spec = (pathId: string) =>
      store.getText(keys.spec(runId, pathId)).then((t) => JSON.parse(t ?? '{}') as AgentSpec);
    const sock = await spec('sockperf');
    const sockFile = join(dir, ...`${keys.rawPrefix('sockperf', runId)}${sock.probes[0].name}/1.csv`.split('/'));
    await writeLines(sockFile, sockperfLog(n));
    const http = await spec('http');
    for (const p of http.probes) {
      for (let t = 1; t <= 3; t++) {
        await writeLines(
          join(dir, ...`${keys.rawPrefix('http', runId)}${p.name}/${t}.jsonl`.split('/')),
          httpLines(10000, 1.7e12),
        );
      }
    }
    const out = [
      `collect under node --max-old-space-size=${HEAP_MB} (a child process each; real directory store and DuckDB):`,
    ];
    for (const [pathId, what, file] of [
      ['sockperf', `sockperf full log, ${n.toLocaleString('en-US')} lines`, sockFile],
      ['http', 'http matrix, 4 probes × 3 trials × 10,000 requests', undefined],
    ] as const) {
      const r = await runChild(dir, runId, pathId);
      const size = file ? ` (${mb((await stat(file)).size)} raw)` : '';
      out.push(
        `  ${what}${size}: ${r.lines.toLocaleString('en-US')} lines → ${r.samples.toLocaleString('en-US')} samples in ${r.seconds.toFixed(1)} s · ` +
          `${Math.round(r.lines / r.seconds).toLocaleString('en-US')} lines/s · peak heap ${mb(r.peakHeapBytes)} · peak RSS ${mb(r.peakRssBytes)} (heap limit ${mb(r.heapLimitBytes)})`,
      );
    }
    return { lines: out };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
