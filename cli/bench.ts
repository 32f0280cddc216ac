/**
 * `pathbench bench` (npm run bench): figures, not pass/fail. Each part prints its own lines;
 * comparisons are ratios taken in one run, because this machine is noisy.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import type { ResolvedPlan } from '../core/resolved-plan.js';
import { type RunManifest, readManifest } from '../core/run-manifest.js';
import { AWS_POLL_SECONDS } from '../functions/adapters/aws/aws-deps.js';
import { silentLogger } from '../functions/log.js';
import {
  chunkEventBound,
  HISTORY_EVENT_LIMIT,
  largestExecutionBound,
  pathEventBound,
  runEventBound,
} from '../functions/pipeline/limits.js';
import { DirStore } from '../local/dir-store.js';
import { requireValidPlan, runLocal } from '../local/local-driver.js';
import { awsEventsOf, type ExecutionEvent, type RunMachineResult } from '../local/local-execution.js';
import { startLoopbackTargets } from '../local/targets.js';
import { PATHS_PER_CHUNK } from '../statemachine/asl.js';
import { ROOT } from './cli-root.js';
import { exitAfterFlush } from './exit.js';
import { loadPlanFile } from './plan-file.js';
import { liveStatus } from './progress.js';

type Interval = [number, number];

/** Total length of a union of intervals. */
export function unionLength(intervals: Interval[]): number {
  const s = intervals.filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
  let total = 0;
  let cur: Interval | undefined;
  for (const iv of s) {
    if (!cur || iv[0] > cur[1]) {
      if (cur) total += cur[1] - cur[0];
      cur = [iv[0], iv[1]];
    } else cur[1] = Math.max(cur[1], iv[1]);
  }
  if (cur) total += cur[1] - cur[0];
  return total;
}

/**
 * Per path: wall time of the Map iteration, time inside Wait states and inside the agent's
 * probes (their union: the probe runs while the state machine waits), and what is left —
 * the orchestration's own cost (tasks, manifest writes, parsing, DuckDB registration).
 */
export function orchestrationOverhead(events: ExecutionEvent[], manifest: RunManifest): string[] {
  const lines = ['path           wall ms   waits ∪ probe ms   overhead ms'];
  // Attribute events by the path id in their state input: the interpreter announces every Map
  // iteration up front, so iteration events alone do not say which path a state belongs to.
  const byPath = new Map<string, { first: number; last: number; waits: Interval[]; open: Map<string, number> }>();
  for (const e of events) {
    const id = (e as unknown as { state?: { input?: { path?: { id?: string }; pathId?: string } } }).state?.input;
    const pathId = id?.path?.id ?? id?.pathId;
    if (!pathId || !e.state) continue;
    let p = byPath.get(pathId);
    if (!p) {
      p = { first: e.timestamp, last: e.timestamp, waits: [], open: new Map() };
      byPath.set(pathId, p);
    }
    p.first = Math.min(p.first, e.timestamp);
    p.last = Math.max(p.last, e.timestamp);
    if (e.state.type === 'Wait' && e.type === 'StateEntered') p.open.set(e.state.name, e.timestamp);
    if (e.state.type === 'Wait' && e.type === 'StateExited') {
      p.waits.push([p.open.get(e.state.name) ?? e.timestamp, e.timestamp]);
    }
  }
  for (const [pathId, p] of byPath) {
    const agent = manifest.paths.find((x) => x.id === pathId)?.provenance?.agent as
      | { startedAt?: string; endedAt?: string }
      | undefined;
    const spans: Interval[] = [...p.waits];
    if (agent?.startedAt && agent.endedAt) spans.push([Date.parse(agent.startedAt), Date.parse(agent.endedAt)]);
    const wall = p.last - p.first;
    const busy = unionLength(spans.map(([a, b]) => [Math.max(a, p.first), Math.min(b, p.last)] as Interval));
    lines.push(
      `${pathId.padEnd(12)} ${String(wall).padStart(9)} ${String(busy).padStart(18)} ${String(wall - busy).padStart(13)}`,
    );
  }
  return lines;
}

/**
 * The run's histories: the events of each execution in AWS terms from the local event logs (the
 * run's own, and the largest chunk's and path's), beside the worst case computed from the ASL at
 * the AWS poll interval (functions/pipeline/limits.ts) for each kind of execution.
 */
export function historyLines(plan: ResolvedPlan, execution: RunMachineResult): string[] {
  const fmt = (n: number) => n.toLocaleString('en-US');
  const largest = (state: string) =>
    Math.max(0, ...execution.children.filter((c) => c.state === state).map((c) => awsEventsOf(c.events)));
  const count = (state: string) => execution.children.filter((c) => c.state === state).length;
  const chunks = Math.ceil(plan.paths.length / PATHS_PER_CHUNK);
  const pathBound = Math.max(0, ...plan.paths.map((p) => pathEventBound(p, AWS_POLL_SECONDS)));
  const worst = largestExecutionBound(plan.paths, AWS_POLL_SECONDS);
  return [
    `history (AWS-equivalent events, from the event logs): run ${fmt(awsEventsOf(execution.events))}; ${fmt(count('MeasureChunk'))} chunk executions (largest ${fmt(largest('MeasureChunk'))}); ${fmt(count('MeasurePath'))} path executions (largest ${fmt(largest('MeasurePath'))})`,
    `  worst case on AWS (every poll to its bound, every retry; ${AWS_POLL_SECONDS} s polls): run ${fmt(runEventBound(chunks))}, chunk ${fmt(chunkEventBound(Math.min(plan.paths.length, PATHS_PER_CHUNK)))}, path ${fmt(pathBound)}; the largest, ${fmt(worst.events)} (${worst.execution}), against the limit of ${fmt(HISTORY_EVENT_LIMIT)}`,
  ];
}

/** The largest execution the local runner counted (AWS-equivalent events): the run or any child. */
export function largestCounted(execution: RunMachineResult): { events: number; name: string } {
  let best = { events: awsEventsOf(execution.events), name: 'run' };
  for (const c of execution.children) {
    const n = awsEventsOf(c.events);
    if (n > best.events)
      best = { events: n, name: c.state === 'MeasurePath' ? 'path' : c.state === 'MeasureChunk' ? 'chunk' : c.state };
  }
  return best;
}

async function benchOrchestration(sizes: number[]): Promise<string[]> {
  const file = join(ROOT, 'plans', 'local-loopback.json');
  const loaded = await loadPlanFile(file);
  if (!loaded.ok) throw new Error(loaded.problems.join('\n'));
  const raw = JSON.parse((await import('node:fs')).readFileSync(file, 'utf8'));
  const targets = await startLoopbackTargets(silentLogger);
  const lines: string[] = [];
  try {
    {
      const dir = await mkdtemp(join(tmpdir(), 'pathbench-bench-'));
      try {
        const events: ExecutionEvent[] = [];
        const t0 = Date.now();
        const r = await runLocal({ plan: raw, dataDir: dir, log: silentLogger, onEvent: (e) => events.push(e) });
        const total = Date.now() - t0;
        const manifest = await readManifest(new DirStore(dir), r.runId);
        if (!manifest) throw new Error(`run ${r.runId} left no manifest in ${dir}`);
        lines.push(
          `orchestration overhead, plans/local-loopback.json (whole run ${total} ms, ${r.execution.status}):`,
          ...orchestrationOverhead(events, manifest),
          ...historyLines(requireValidPlan(raw), r.execution),
        );
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
    lines.push(
      '',
      'plans of n loopback paths (one short tcp-connect probe each), one run each:',
      'paths   run s   per-path overhead ms   largest execution counted   worst case from the ASL (AWS)',
    );
    const perPath: number[] = [];
    for (const n of sizes) {
      const plan = {
        name: `orchestration-${n}`,
        defaults: {
          ...raw.defaults,
          probes: [{ kind: 'tcp-connect', count: 3, intervalMs: 10, timeoutMs: 400 }],
        },
        paths: Array.from({ length: n }, (_, i) => ({
          id: `p${String(i).padStart(4, '0')}`,
          target: raw.paths[0].target,
        })),
      };
      const dir = await mkdtemp(join(tmpdir(), 'pathbench-bench-'));
      const status = liveStatus(`bench: orchestration ${n} paths: `);
      try {
        const events: ExecutionEvent[] = [];
        let done = 0;
        const t0 = Date.now();
        const r = await runLocal({
          plan,
          dataDir: dir,
          log: silentLogger,
          onEvent: (e) => {
            events.push(e);
            if (e.type === 'StateEntered' && e.state?.name === 'EndPath') status.update(`${++done}/${n}`);
          },
        });
        const total = Date.now() - t0;
        status.done();
        const manifest = await readManifest(new DirStore(dir), r.runId);
        if (!manifest) throw new Error(`run ${r.runId} left no manifest in ${dir}`);
        // The paths' part of the run (the chunks' span) less the agent's own probing, per path.
        const own = r.execution.events.filter((e) => e.state?.name === 'MeasureChunks');
        const span = (own.at(-1)?.timestamp ?? 0) - (own[0]?.timestamp ?? 0);
        const probing = manifest.paths.reduce((sum, p) => {
          const a = p.provenance?.agent as { startedAt?: string; endedAt?: string } | undefined;
          return sum + (a?.startedAt && a.endedAt ? Date.parse(a.endedAt) - Date.parse(a.startedAt) : 0);
        }, 0);
        const overhead = (span - probing) / n;
        perPath.push(overhead);
        const failed = manifest.paths.filter((p) => p.status !== 'succeeded').length;
        const counted = largestCounted(r.execution);
        const worst = largestExecutionBound(requireValidPlan(plan).paths, AWS_POLL_SECONDS);
        lines.push(
          `${String(n).padStart(5)} ${(total / 1000).toFixed(1).padStart(7)} ${overhead.toFixed(0).padStart(22)}   ${`${counted.events.toLocaleString('en-US')} (${counted.name})`.padStart(25)}   ${`${worst.events.toLocaleString('en-US')} (${worst.execution})`.padStart(29)}${r.execution.status === 'SUCCEEDED' && failed === 0 ? '' : `  ${r.execution.status}, ${failed} paths not succeeded`}`,
        );
      } finally {
        status.done();
        await rm(dir, { recursive: true, force: true });
      }
    }
    if (perPath.length > 1)
      lines.push(
        `per-path overhead, ${sizes.at(-1)} paths : ${sizes[0]} paths = ${(perPath.at(-1)! / perPath[0]).toFixed(2)} (goal ≤ 1.5); goal ≤ 2,000 events in any execution`,
      );
    return lines;
  } finally {
    await targets.stop();
  }
}

type Part = { name: string; run: () => Promise<string[]> };

/** A lab for the lab-path rows of the benches: reuse a running one, else bring one up (and down). */
async function labForBench(): Promise<{ down: () => Promise<void> } | undefined> {
  const lab = await import('../lab/index.js');
  const can = await lab.labAvailable();
  if (!can.ok) {
    process.stderr.write(`bench: no lab here (${can.reason}); lab rows are skipped\n`);
    return undefined;
  }
  if ((await lab.labStatus()).healthy) return undefined;
  process.stderr.write('bench: bringing a lab up for the lab-path rows\n');
  const status = liveStatus('bench: lab up: ');
  try {
    await lab.labUp({ profile: 'seed-000', onProgress: (l: string) => status.update(l) });
    status.done();
  } catch (e) {
    status.done();
    process.stderr.write(`bench: lab up failed (${(e as Error).message}); lab rows are skipped\n`);
    await lab.labDown().catch(() => undefined);
    return undefined;
  }
  return { down: async () => void (await lab.labDown()) };
}

export function registerBench(program: Command): void {
  program
    .command('bench')
    .description(
      'print benchmark figures (percentile query, orchestration overhead, collect at scale, probe precision, pingpong vs sockperf, http probe cost, simulated mesh, regression detection under load, interleaved schedules under load, lab mesh)',
    )
    .option(
      '--only <parts>',
      'comma-separated: percentiles,orchestration,collect,precision,pingpong,http,mesh,regressions,schedules,lab-mesh',
    )
    .option('--mesh-sites <list>', 'comma-separated site counts of the simulated mesh (n·(n−1) pairs each)', '24,46')
    .option('--orchestration-paths <list>', 'comma-separated path counts of the orchestration bench', '10,100,1000')
    .option('--samples <n>', 'synthetic samples for the percentile bench', '10000000')
    .option('--collect-lines <n>', 'lines of the generated sockperf full log for the collect bench', '1000000')
    .option(
      '--engine-samples <list>',
      "comma-separated sample counts of the collect bench's engine copy against quantile_disc",
      '1000000,10000000',
    )
    .option('--clean-runs <n>', 'clean runs of the regressions bench', '110')
    .option('--shifted-runs <n>', 'trials per shift size of the regressions bench', '20')
    .option(
      '--persistence <n>',
      "the regressions bench plan's regression.persistence (runs in a row, 1-5; default 2, with --unpaired 1)",
    )
    .option('--keep-data', "keep the regressions bench's data directory (printed) for `pathbench sql` or DuckDB")
    .option(
      '--unpaired',
      "the regressions bench without the plan's regression.paired (each path judged after its run's shift, as before pairing)",
    )
    .option('--schedule-trials <n>', 'trials of the schedules bench (each: blocks, rounds, alternate)', '60')
    .option('--list', 'print the parts, one per line, and run none')
    .action(
      async (o: {
        only?: string;
        list?: boolean;
        samples: string;
        collectLines: string;
        engineSamples: string;
        meshSites: string;
        orchestrationPaths: string;
        cleanRuns: string;
        shiftedRuns: string;
        persistence?: string;
        unpaired?: boolean;
        keepData?: boolean;
        scheduleTrials: string;
      }) => {
        const parts: Part[] = [
          {
            name: 'percentiles',
            run: async () => {
              const { benchPercentiles } = await import('../scripts/bench/percentiles.bench.js');
              return (await benchPercentiles({ n: Number(o.samples) })).lines;
            },
          },
          {
            name: 'orchestration',
            run: () => {
              const sizes = o.orchestrationPaths.split(',').map((n) => Number(n.trim()));
              if (sizes.some((n) => !Number.isInteger(n) || n < 1))
                throw new Error(
                  `--orchestration-paths ${o.orchestrationPaths}: comma-separated whole numbers of paths`,
                );
              return benchOrchestration(sizes);
            },
          },
          {
            name: 'collect',
            run: async () => {
              const { benchCollect } = await import('../scripts/bench/collect.bench.js');
              const engineSamples = o.engineSamples.split(',').map((n) => Number(n.trim()));
              if (engineSamples.some((n) => !Number.isInteger(n) || n < 1))
                throw new Error(`--engine-samples ${o.engineSamples}: comma-separated whole numbers of samples`);
              return (await benchCollect({ sockperfLines: Number(o.collectLines), engineSamples })).lines;
            },
          },
          {
            name: 'precision',
            run: async () => {
              const { benchPrecision } = await import('../scripts/bench/precision.bench.js');
              return (await benchPrecision()).lines;
            },
          },
          {
            name: 'pingpong',
            run: async () => {
              const { benchPingpong } = await import('../scripts/bench/pingpong.bench.js');
              return (await benchPingpong()).lines;
            },
          },
          {
            name: 'http',
            run: async () => {
              const { benchHttp } = await import('../scripts/bench/http.bench.js');
              return (await benchHttp()).lines;
            },
          },
          {
            name: 'mesh',
            run: async () => {
              const { benchMeshSizes, MAX_BENCH_SITES } = await import('../scripts/bench/mesh.bench.js');
              const sizes = o.meshSites.split(',').map((n) => Number(n.trim()));
              if (sizes.some((n) => !Number.isInteger(n) || n < 2 || n > MAX_BENCH_SITES))
                throw new Error(
                  `--mesh-sites ${o.meshSites}: comma-separated whole numbers of sites, 2 to ${MAX_BENCH_SITES}`,
                );
              return (await benchMeshSizes(sizes)).lines;
            },
          },
          {
            name: 'regressions',
            run: async () => {
              const { benchRegressions } = await import('../scripts/bench/regressions.bench.js');
              const whole = (flag: string, v: string, min: number, max: number) => {
                const n = Number(v);
                if (!Number.isInteger(n) || n < min || n > max)
                  throw new Error(`${flag} ${v}: a whole number from ${min} to ${max}`);
                return n;
              };
              return (
                await benchRegressions({
                  cleanRuns: whole('--clean-runs', o.cleanRuns, 6, 10_000),
                  shiftedRuns: whole('--shifted-runs', o.shiftedRuns, 1, 10_000),
                  ...(o.persistence !== undefined ? { persistence: whole('--persistence', o.persistence, 1, 5) } : {}),
                  paired: !o.unpaired,
                  keepData: o.keepData === true,
                })
              ).lines;
            },
          },
          {
            name: 'schedules',
            run: async () => {
              const { benchSchedules } = await import('../scripts/bench/schedules.bench.js');
              const trials = Number(o.scheduleTrials);
              if (!Number.isInteger(trials) || trials < 5 || trials > 10_000)
                throw new Error(`--schedule-trials ${o.scheduleTrials}: a whole number from 5 to 10000`);
              return (await benchSchedules({ trials })).lines;
            },
          },
          {
            name: 'lab-mesh',
            run: async () => {
              const { benchLabMesh } = await import('../scripts/bench/lab-mesh.bench.js');
              return (await benchLabMesh()).lines;
            },
          },
        ];
        if (o.list) {
          process.stdout.write(`${parts.map((p) => p.name).join('\n')}\n`);
          return exitAfterFlush(0);
        }
        const only = o.only?.split(',').map((x) => x.trim());
        // A misspelt part ran nothing and succeeded: say which names exist instead.
        const unknown = (only ?? []).filter((x) => !parts.some((p) => p.name === x));
        if (unknown.length) {
          process.stderr.write(
            `pathbench: no bench part ${unknown.map((x) => JSON.stringify(x)).join(', ')}; the parts: ${parts.map((p) => p.name).join(', ')}\n`,
          );
          return exitAfterFlush(2);
        }
        const chosen = parts.filter((p) => !only || only.includes(p.name));
        // The precision, pingpong and http parts also measure lab paths; bring a lab up for them when this
        // machine can run one and none is up, and take it down again afterwards.
        const lab = chosen.some((p) => ['precision', 'pingpong', 'http'].includes(p.name))
          ? await labForBench()
          : undefined;
        let failed = false;
        try {
          for (const [i, p] of chosen.entries()) {
            // Which part runs and for how long, on stderr (live on a terminal); figures on stdout.
            const status = liveStatus('bench: ');
            const t0 = Date.now();
            const tick = () =>
              status.update(`${p.name} (${i + 1}/${chosen.length}) running ${Math.round((Date.now() - t0) / 1000)} s`);
            tick();
            const timer = process.stderr.isTTY ? setInterval(tick, 1000) : undefined;
            let lines: string[] = [];
            try {
              lines = await p.run();
            } catch (e) {
              failed = true;
              lines = [`${p.name} failed: ${(e as Error).message}`];
            } finally {
              if (timer) clearInterval(timer);
              status.done(`${p.name} (${i + 1}/${chosen.length}) done in ${Math.round((Date.now() - t0) / 1000)} s`);
            }
            process.stdout.write(`\n== ${p.name} ==\n`);
            for (const l of lines) process.stdout.write(`${l}\n`);
          }
        } finally {
          await lab?.down();
        }
        await exitAfterFlush(failed ? 1 : 0);
      },
    );
}
