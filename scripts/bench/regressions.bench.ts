/**
 * The regression judgement's power, measured on real local runs (`npx pathbench bench --only
 * regressions`): a three-path HTTP plan against three loopback servers of their own (a separate
 * process each, answering after a fixed delay slept in the kernel: 200 µs, 1 ms, 3 ms; as root at
 * real-time priority, as the far ends of real paths are out of the client host's load), run
 * through the whole local pipeline again and again in one data directory, so each run's summary step judges
 * it against the ones before (functions/pipeline/regressions.ts), as a weekly schedule would.
 *
 * Host load is injected: before each run, 0, 1 or 2 CPU hogs (busy processes) start, drawn at
 * random, and stop after it, so whole runs move together the way a busy shared host moves them.
 *
 * 1. Clean runs: every flag after the first judged run is a false alarm (a regression) or a false
 *    report (an improvement); printed per 100 judged runs, with the run shifts said. Each path's
 *    between-run spread is printed for its p50 and for the p50 of its kernel-timed part (latency
 *    less host_us), which says whether the noise is this host's own.
 * 2. Known shifts: path B's server then answers later by a share of its clean p50 (5, 10, 20 %),
 *    each shifted run judged against the clean history alone (its trend point removed after it),
 *    and the detection rate printed per shift size.
 * 3. Replayed shifts: every clean run's stored trend point judged once more with B's p50 raised by
 *    the same shares, against the clean runs before it: one trial per clean run, each with that
 *    run's real noise, many more trials than live shifted runs give (replayShifts below).
 * With `persistence` n (the plan's regression.persistence), a regression is flagged only when n
 * runs in a row show it: each shift trial is then n shifted runs in a row.
 * Figures only; the goals (≤ 1 false alarm per 100 clean runs, ≥ 95 % detection of +10 %) are
 * printed next to them.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { keys } from '../../core/keys.js';
import type { Summary } from '../../core/run-summary.js';
import { readTrendPoints, type TrendPoint } from '../../core/trend-point.js';
import { silentLogger } from '../../functions/log.js';
import { judge, mad, median, REGRESSION_RULE } from '../../functions/pipeline/regressions.js';
import { DirStore } from '../../local/dir-store.js';
import { DuckDbQueryEngine } from '../../local/duckdb-query.js';
import { runLocal } from '../../local/local-driver.js';
import { HTTP_PAIR_METRIC } from '../../probes/http/http.schema.js';

/** Each path's server delay (µs) before it answers: what makes the three paths differ. */
export const BASE_DELAY_US: Record<string, number> = { A: 200, B: 1000, C: 3000 };
const SHIFTS = [0.05, 0.1, 0.2];

/** A loopback HTTP server in its own process whose answer delay can be changed while it runs. */
export interface DelayServer {
  port: number;
  setDelay(us: number): void;
  stop(): Promise<void>;
}

const SERVER = `
const http = require('node:http');
let delayNs = BigInt(Math.round(Number(process.argv[1]) * 1000));
process.stdin.on('data', (d) => { for (const l of d.toString().split('\\n')) if (l.trim()) delayNs = BigInt(Math.round(Number(l) * 1000)); });
const body = Buffer.alloc(1024, 120);
// The delay sleeps in the kernel (a futex wait), as a path's propagation delay would: it must
// not grow with CPU load the way a busy wait does, or the hogs would move the paths, not the host.
const cell = new Int32Array(new SharedArrayBuffer(4));
const server = http.createServer((req, res) => {
  Atomics.wait(cell, 0, 0, Number(delayNs) / 1e6);
  res.writeHead(200, { 'content-length': body.length });
  res.end(body);
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

export async function startServer(delayUs: number): Promise<DelayServer> {
  // The servers stand for the far ends of the paths, which the client host's load does not reach:
  // as root they run at real-time priority (chrt), so the hogs load the client side only.
  const argv = [process.execPath, '-e', SERVER, String(delayUs)];
  const rt = process.getuid?.() === 0 && existsSync('/usr/bin/chrt');
  const child = rt
    ? spawn('chrt', ['-f', '50', ...argv], { stdio: ['pipe', 'pipe', 'inherit'] })
    : spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    child.once('exit', (code) => reject(new Error(`bench server exited (${code})`)));
  });
  return {
    port,
    setDelay: (us) => child.stdin.write(`${us}\n`),
    stop: async () => {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** Busy processes loading the machine's CPUs during a run (stopped by PID afterwards). */
export function startHogs(n: number): ChildProcess[] {
  return Array.from({ length: n }, () => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
}

export async function stopHogs(hogs: ChildProcess[]): Promise<void> {
  for (const h of hogs) h.kill('SIGKILL');
  await Promise.all(hogs.map((h) => (h.exitCode === null ? new Promise((r) => h.once('exit', r)) : undefined)));
}

function plan(ports: Record<string, number>, persistence: number, paired: boolean) {
  const regression = {
    ...(persistence > 1 ? { persistence } : {}),
    ...(paired ? { reference: 'A', paired: true } : {}),
  };
  return {
    name: 'regressions-bench',
    ...(Object.keys(regression).length ? { regression } : {}),
    defaults: {
      client: { instanceId: 'local', region: 'local' },
      reboot: false,
      creditWaitSeconds: 0,
      probes: [{ kind: 'http', count: 300, concurrency: 1, keepAlive: true, payloadBytes: 1024 }],
    },
    paths: Object.keys(BASE_DELAY_US).map((id) => ({
      id,
      label: `server answering after ${BASE_DELAY_US[id]} µs`,
      target: { host: '127.0.0.1', port: ports[id] },
    })),
  };
}

/** Between-run spread of one figure: median, robust sd (1.4826 · MAD), plain sd and the largest deviation, as shares of the median. */
function spreadOf(xs: number[]) {
  const m = median(xs);
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length);
  const largest = xs.reduce((a, x) => (Math.abs(x - m) > Math.abs(a) ? x - m : a), 0);
  return {
    median: m,
    sdPct: (100 * 1.4826 * mad(xs)) / m,
    plainSdPct: (100 * sd) / mean,
    largestPct: (100 * largest) / m,
    runs: xs.length,
  };
}

/** Per `<run>/<path>` of the given runs: the p50 (quantile_disc) of latency less host_us, over the kernel-timed samples. */
async function kernelTimedP50s(dir: string, runs: Set<string>): Promise<Map<string, number>> {
  const engine = await DuckDbQueryEngine.open(dir);
  try {
    const rows = await engine.query(
      `SELECT run, path, quantile_disc(value - host_us / 1000, 0.5) AS p50 FROM samples_jsonl
       WHERE ok AND value IS NOT NULL AND host_us IS NOT NULL AND metric = 'http_latency_ms' GROUP BY run, path`,
      [],
      'kernel-timed p50',
    );
    return new Map(rows.filter((r) => runs.has(String(r.run))).map((r) => [`${r.run}/${r.path}`, Number(r.p50)]));
  } finally {
    engine.close();
  }
}

interface RunOutcome {
  summary: Summary;
  hogs: number;
}

/** A seeded draw in [0, 1) (a linear congruential generator): the benches' hog counts and orders repeat run to run. */
export function seededRandom(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

/** A copy of a trend point with path `id`'s http p50 (and its interval) raised by `byMs`. */
export function raised(point: TrendPoint, id: string, byMs: number): TrendPoint {
  return {
    ...point,
    paths: point.paths.map((p) =>
      p.id !== id
        ? p
        : {
            ...p,
            results: p.results.map((r) =>
              r.metric !== 'http_latency_ms' || r.p50 === null
                ? r
                : {
                    ...r,
                    p50: r.p50 + byMs,
                    ...(r.ci95?.p50
                      ? { ci95: { ...r.ci95, p50: [r.ci95.p50[0] + byMs, r.ci95.p50[1] + byMs] as [number, number] } }
                      : {}),
                  },
            ),
          },
    ),
  };
}

/**
 * Replayed shifts: for each clean run (oldest first), that run and the `persistence` − 1 before
 * it raised by `byMs`, judged by the same judge against the clean runs before them; a trial only
 * where each raised run had a band for path `id`'s p50 (enough clean runs before it). Returns the trials and how many flagged `id`'s p50 a
 * regression, and how many flagged another path.
 */
export function replayShifts(
  clean: readonly TrendPoint[],
  id: string,
  byMs: number,
  persistence: number,
): { trials: number; found: number; others: number } {
  const ordered = [...clean].sort(
    (a, b) => (a.startedAt ?? '').localeCompare(b.startedAt ?? '') || a.runId.localeCompare(b.runId),
  );
  let trials = 0;
  let found = 0;
  let others = 0;
  for (let i = persistence - 1; i < ordered.length; i++) {
    const first = i - persistence + 1;
    const shifted = ordered.slice(first, i + 1).map((pt) => raised(pt, id, byMs));
    const banded = (j: ReturnType<typeof judge>) =>
      j.trend.some((t) => t.path === id && t.percentile === 'p50' && t.metric === 'http_latency_ms' && t.band);
    // A trial only where every raised run has a baseline to be judged against (the earliest runs have none).
    const historyOf = (k: number) => [...ordered.slice(0, first), ...shifted.slice(0, k)];
    if (!shifted.slice(0, -1).every((pt, k) => banded(judge(pt, historyOf(k), undefined, true)))) continue;
    const j = judge(shifted[shifted.length - 1], historyOf(shifted.length - 1));
    if (!banded(j)) continue;
    trials++;
    if (j.regressions.some((r) => r.path === id && r.percentile === 'p50' && r.direction === 'regression')) found++;
    if (j.regressions.some((r) => r.path !== id)) others++;
  }
  return { trials, found, others };
}

export async function benchRegressions(
  opts: {
    cleanRuns?: number;
    shiftedRuns?: number;
    persistence?: number;
    paired?: boolean;
    seed?: number;
    /** Keep the runs' data directory (its path is printed) instead of removing it. */
    keepData?: boolean;
  } = {},
) {
  const cleanRuns = opts.cleanRuns ?? 110;
  const shiftedRuns = opts.shiftedRuns ?? 20;
  const paired = opts.paired ?? true;
  // The setting the docs recommend with pairing (docs/local.md); unpaired as measured before pairing.
  const persistence = opts.persistence ?? (paired ? 2 : 1);
  const rand = seededRandom(opts.seed ?? 20261202);
  const dir = await mkdtemp(path.join(tmpdir(), 'pb-regressions-'));
  const servers: Record<string, DelayServer> = {};
  const lines: string[] = [];
  let n = 0;
  try {
    for (const [id, us] of Object.entries(BASE_DELAY_US)) servers[id] = await startServer(us);
    const p = plan(Object.fromEntries(Object.entries(servers).map(([id, s]) => [id, s.port])), persistence, paired);
    const runOnce = async (): Promise<RunOutcome> => {
      const hogs = Math.floor(rand() * 3);
      const running = startHogs(hogs);
      try {
        await sleep(200);
        const runId = `r${String(n++).padStart(4, '0')}`;
        // The finished probe polled every 0.25 s instead of the adaptive wait: when a poll happens
        // does not touch the measurement, and it keeps 170 runs within an hour.
        const r = await runLocal({
          plan: p,
          dataDir: dir,
          runId,
          log: silentLogger,
          waitTimeOverrides: { WaitForProbe: 250 },
        });
        if (!r.summary) throw new Error(`run ${runId} has no summary (${r.execution.status})`);
        return { summary: r.summary, hogs };
      } finally {
        await stopHogs(running);
      }
    };
    const t0 = Date.now();
    const clean: RunOutcome[] = [];
    for (let i = 0; i < cleanRuns; i++) {
      clean.push(await runOnce());
      if (i % 10 === 9 || i === 0)
        process.stderr.write(
          `bench regressions: ${i + 1}/${cleanRuns} clean runs (${Math.round((Date.now() - t0) / 1000)} s)\n`,
        );
    }
    const judged = clean.filter((c) => c.summary.trend?.some((t) => t.band));
    const alarms = judged.filter((c) => c.summary.regressions?.some((r) => r.direction === 'regression'));
    const reports = judged.filter((c) => c.summary.regressions?.some((r) => r.direction === 'improvement'));
    const shifted = judged.filter((c) => c.summary.runShifts?.length);
    const p50Of = (c: RunOutcome, id: string) =>
      c.summary.paths.find((x) => x.id === id)?.results.find((r) => r.metric === 'http_latency_ms')?.p50 ?? Number.NaN;
    const perHundred = (k: number) => ((100 * k) / Math.max(1, judged.length)).toFixed(1);
    lines.push(
      paired
        ? "paired: B's and C's probes measure reference path A's server too, one request to each in turn; each judged by its difference from A (the plan's regression.paired)"
        : 'unpaired: each path judged after the run shift (--unpaired)',
    );
    lines.push(
      `persistence ${persistence}: ${persistence > 1 ? `a regression is flagged when ${persistence} runs in a row show it (the plan's regression.persistence)` : 'a regression is flagged by one run'}`,
    );
    lines.push(
      `clean runs ${cleanRuns} (judged ${judged.length}: ${cleanRuns - judged.length} build the first baseline)`,
    );
    lines.push(
      `  hogs per run: ${[0, 1, 2].map((h) => `${h}: ${clean.filter((c) => c.hogs === h).length}`).join(', ')}`,
    );
    // Each clean run's p50 of the kernel-timed part of each request (latency less host_us, this
    // host's own part, probes/http/http.parser.ts): where the between-run noise lies. If the host's
    // load made it, this figure would be quieter than the p50 itself.
    const netP50 = await kernelTimedP50s(dir, new Set(clean.map((c) => c.summary.runId)));
    for (const id of Object.keys(BASE_DELAY_US)) {
      const app = spreadOf(clean.map((c) => p50Of(c, id)).filter(Number.isFinite));
      const net = spreadOf(
        clean.map((c) => netP50.get(`${c.summary.runId}/${id}`) ?? Number.NaN).filter(Number.isFinite),
      );
      // The paired difference (the path's p50 less the reference's measured in its probe), as a share of the path's p50.
      const diffs = clean
        .map((c) => {
          const r = c.summary.paths.find((x) => x.id === id)?.results;
          const own = r?.find((x) => x.metric === 'http_latency_ms')?.p50;
          const ref = r?.find((x) => x.metric === HTTP_PAIR_METRIC)?.p50;
          return own != null && ref != null ? own - ref : Number.NaN;
        })
        .filter(Number.isFinite);
      const d = diffs.length ? spreadOf(diffs) : undefined;
      lines.push(
        `  path ${id}: p50 median ${app.median.toFixed(3)} ms, between-run robust sd ${app.sdPct.toFixed(1)} %, sd ${app.plainSdPct.toFixed(1)} %, largest ${app.largestPct.toFixed(1)} %; ` +
          (d
            ? `less A in its probe: median ${d.median.toFixed(3)} ms, robust sd ${((d.sdPct * d.median) / app.median).toFixed(1)} %, largest ${((d.largestPct * d.median) / app.median).toFixed(1)} % of the path's p50 (${d.runs} runs)`
            : net.runs
              ? `kernel-timed part: median ${net.median.toFixed(3)} ms, robust sd ${net.sdPct.toFixed(1)} %, sd ${net.plainSdPct.toFixed(1)} %, largest ${net.largestPct.toFixed(1)} % (${net.runs} runs)`
              : 'no kernel-timed part (Node client)'),
      );
    }
    lines.push(
      `  false alarms (a regression flagged)          ${alarms.length} in ${judged.length} judged runs = ${perHundred(alarms.length)} per 100 (goal ≤ 1)`,
    );
    lines.push(
      `  false reports (an improvement flagged)       ${reports.length} = ${perHundred(reports.length)} per 100`,
    );
    lines.push(
      `  runs said to have moved as a whole           ${shifted.length} = ${perHundred(shifted.length)} per 100`,
    );
    for (const c of alarms)
      lines.push(
        `    ${c.summary.runId} (hogs ${c.hogs}): ${(c.summary.regressions ?? []).map((r) => `${r.path} ${r.percentile} ${r.change_pct.toFixed(1)} %`).join(', ')}`,
      );

    // Known shifts on path B, each judged against the clean history only.
    const baseB = median(clean.map((c) => p50Of(c, 'B')).filter(Number.isFinite));
    // Replayed first (no runs, judged at once): the clean runs' own trend points, B raised.
    const cleanIds = new Set(clean.map((c) => c.summary.runId));
    const points = (await readTrendPoints(new DirStore(dir), p.name)).filter((t) => cleanIds.has(t.runId));
    lines.push(
      `replayed shifts: each clean run's trend point judged again with B's p50 raised by a share of its clean p50, against the clean runs before it${persistence > 1 ? ` (it and the ${persistence - 1} before it raised)` : ''}`,
    );
    for (const share of SHIFTS) {
      const r = replayShifts(points, 'B', share * baseB, persistence);
      lines.push(
        r.trials === 0
          ? `  +${(share * 100).toFixed(0).padStart(2)} %: no trial: too few clean runs (each raised run needs ${REGRESSION_RULE.minRuns} clean runs before it)`
          : `  +${(share * 100).toFixed(0).padStart(2)} %: detected ${r.found}/${r.trials} (${((100 * r.found) / r.trials).toFixed(0)} %)${share === 0.1 ? ' (goal ≥ 95 %)' : ''}; another path flagged in ${r.others}`,
      );
    }
    lines.push(
      `shifted runs: path B's server answers later by a share of its clean p50 (${baseB.toFixed(3)} ms)${persistence > 1 ? `; each trial is ${persistence} shifted runs in a row, the last one's flags counted` : ''}`,
    );
    for (const share of SHIFTS) {
      servers.B.setDelay(BASE_DELAY_US.B + share * baseB * 1000);
      let found = 0;
      let others = 0;
      for (let i = 0; i < shiftedRuns; i++) {
        // A shift lasts: with persistence n, the n − 1 runs before the judged one are shifted too.
        const trial: RunOutcome[] = [];
        for (let k = 0; k < persistence; k++) trial.push(await runOnce());
        const flags = trial[trial.length - 1].summary.regressions ?? [];
        if (flags.some((r) => r.path === 'B' && r.percentile === 'p50' && r.direction === 'regression')) found++;
        if (flags.some((r) => r.path !== 'B')) others++;
        // Out of the history: the next trial is judged against the clean runs alone.
        for (const o of trial) await rm(path.join(dir, keys.trendPoint(p.name, o.summary.runId)), { force: true });
      }
      lines.push(
        `  +${(share * 100).toFixed(0).padStart(2)} %: detected ${found}/${shiftedRuns} (${((100 * found) / shiftedRuns).toFixed(0)} %)${share === 0.1 ? ' (goal ≥ 95 %)' : ''}; another path flagged in ${others}`,
      );
    }
    servers.B.setDelay(BASE_DELAY_US.B);
    lines.push(`wall time ${Math.round((Date.now() - t0) / 1000)} s for ${n} runs`);
    return { lines };
  } finally {
    for (const s of Object.values(servers)) await s.stop();
    if (opts.keepData) process.stderr.write(`bench regressions: the runs' data kept in ${dir}\n`);
    else await rm(dir, { recursive: true, force: true });
  }
}
