/**
 * Bench: a mesh of n sites, n·(n−1) pairs (24 and 46 by default), on the local runner — the real mesh ASL
 * (statemachine/mesh.asl.json), the local driver with its Distributed Map emulation, the real
 * handlers, store and DuckDB — with a fake instant probe at the command boundary only (the
 * CommandRunner port: what SSM or the local child process would do). Prints rounds used vs the
 * lower bound, the largest execution history vs 25,000 events, orchestration wall time, and
 * whether any instance was in two tests at once, checked from the event log; then the per-pair
 * cost of the largest mesh against the smallest.
 *
 * The region table (core/regions.ts) has 39 regions across all partitions; 46 sites
 * are those 39 plus a second instance (`<code>-b`) in the first 7, so n = 46 as in the seed mesh.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentSpecSchema } from '../../core/agent-spec.js';
import { RAW_EXT } from '../../core/keys.js';
import { type MeshSite, meshLayout, meshPlanInput, meshRoundLowerBound } from '../../core/mesh-schedule.js';
import { fibreRttMs, REGIONS } from '../../core/regions.js';
import { parseDocument } from '../../core/stored-document.js';
import { silentLogger } from '../../functions/log.js';
import { HISTORY_EVENT_LIMIT, meshChildEventBound, meshParentEventBound } from '../../functions/pipeline/limits.js';
import type { CommandInvocation, CommandRunner, ObjectStore, ProbeCommand } from '../../functions/ports.js';
import { COPY_CONNECTIONS } from '../../local/duckdb-query.js';
import { requireValidPlan, runLocal } from '../../local/local-driver.js';
import { awsEventsOf, type ChildExecution } from '../../local/local-execution.js';

/** Answers at once: writes what the agent would have written (tcp-connect lines at the pair's fibre RTT, agent.json). */
export class InstantRunner implements CommandRunner {
  private n = 0;
  constructor(
    private readonly store: ObjectStore,
    private readonly rttOf: (pathId: string) => number,
  ) {}
  async send(cmd: ProbeCommand): Promise<{ commandId: string }> {
    const spec = parseDocument(
      cmd.specKey,
      (await this.store.getText(cmd.specKey)) ?? '',
      agentSpecSchema,
      'agent spec',
    );
    const t0 = Date.now();
    const rtt = this.rttOf(cmd.pathId);
    for (const p of spec.probes) {
      const count = p.kind === 'tcp-connect' ? p.count : 1;
      const lines = Array.from({ length: count }, (_, i) =>
        JSON.stringify({ seq: i, t_start: t0 + i, t_end: t0 + i + 1, ok: true, rtt_ms: rtt, clock: 'app-hrtime' }),
      );
      await this.store.put(`${cmd.rawPrefix}${p.name}/1.${RAW_EXT[p.kind]}`, `${lines.join('\n')}\n`);
    }
    const at = new Date(t0).toISOString();
    await this.store.put(
      `${cmd.rawPrefix}agent.json`,
      JSON.stringify({
        agentVersion: 'bench-instant',
        host: 'instant',
        kernel: 'none',
        platform: 'linux',
        node: process.version,
        startedAt: at,
        endedAt: at,
        probes: spec.probes.map((p) => ({
          probe: p.name,
          kind: p.kind,
          status: 'ok',
          trials: 1,
          files: [`${p.name}/1.${RAW_EXT[p.kind]}`],
          startedAt: at,
          endedAt: at,
        })),
      }),
    );
    return { commandId: `instant-${++this.n}` };
  }
  async status(): Promise<CommandInvocation> {
    return { status: 'Success' };
  }
  async cancel(): Promise<void> {}
}

/** The sites of the bench mesh: every region of the table, then second instances until there are `n`. */
export function benchSites(n: number): MeshSite[] {
  const sites: MeshSite[] = REGIONS.map((r) => ({ code: r.code, lat: r.lat, lon: r.lon }));
  for (let i = 0; sites.length < n; i++) sites.push({ ...sites[i], code: `${REGIONS[i].code}-b` });
  return sites.slice(0, n);
}

/**
 * Pairs of child executions that share an instance and overlap in the event log's order (each
 * child spans its first to its last event).
 */
export function overlaps(children: readonly ChildExecution[], sitesOf: (c: ChildExecution) => string[]): number {
  const bySite = new Map<string, [number, number][]>();
  for (const c of children) {
    const seqs = c.events.map((e) => e.seq ?? 0);
    const span: [number, number] = [Math.min(...seqs), Math.max(...seqs)];
    for (const s of sitesOf(c)) bySite.set(s, [...(bySite.get(s) ?? []), span]);
  }
  let bad = 0;
  for (const spans of bySite.values()) {
    spans.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < spans.length; i++) if (spans[i][0] <= spans[i - 1][1]) bad++;
  }
  return bad;
}

export async function benchMesh(
  opts: { sites?: number } = {},
): Promise<{ lines: string[]; perPairMs: number; succeeded: boolean }> {
  const n = opts.sites ?? 46;
  const layout = meshLayout(benchSites(n));
  const plan = meshPlanInput(
    `bench mesh ${n}`,
    layout,
    (code) => ({
      instanceId: `i-${code}`,
      region: code.replace(/-b$/, ''),
      host: `${code}.mesh.invalid`,
      port: 5201,
    }),
    [{ kind: 'tcp-connect', count: 5, intervalMs: 100, timeoutMs: 1000 }],
  );
  const resolved = requireValidPlan(plan);
  const byId = new Map(resolved.paths.map((p) => [p.id, p]));
  const rttOf = (pathId: string) => fibreRttMs(byId.get(pathId)?.mesh?.distanceKm ?? 0);
  const dir = await mkdtemp(join(tmpdir(), 'pathbench-bench-mesh-'));
  try {
    const t0 = Date.now();
    let validated = 0;
    let summarizing = 0;
    let done = 0;
    const r = await runLocal({
      plan,
      dataDir: dir,
      log: silentLogger,
      waitTimeOverrides: { WaitForProbe: 0, WaitForStop: 0, WaitForReady: 0, WaitForCredits: 0 },
      decorate: { deps: (d) => ({ ...d, runner: new InstantRunner(d.store, rttOf) }) },
      onEvent: (e) => {
        if (!e.execution && e.type === 'StateExited' && e.state?.name === 'ValidatePlan') validated = Date.now();
        if (!e.execution && e.type === 'StateEntered' && e.state?.name === 'PrepareSummary') summarizing = Date.now();
        if (e.execution && e.type === 'StateEntered' && e.state?.name === 'PathSucceeded' && ++done % 100 === 0)
          process.stderr.write(`bench: mesh ${done}/${layout.pairs.length} pairs\n`);
      },
    });
    const wall = Date.now() - t0;
    const ex = r.execution;
    // The pairs' child executions (the summary's queries run as children of SummaryQueries).
    const children = ex.children.filter((c) => c.state === 'MeasureRound');
    const roundsRun = ex.events.filter((e) => e.type === 'StateEntered' && e.state?.name === 'MeasureRound').length;
    const pathOf = (c: ChildExecution) => {
      // The interpreter's StateEntered event carries the state's input under `state`.
      const begin = c.events.find((e) => e.type === 'StateEntered') as unknown as {
        state?: { input?: { path?: { id?: string } } };
      };
      const p = byId.get(begin?.state?.input?.path?.id ?? '');
      return p?.mesh ? [p.mesh.from, p.mesh.to] : [];
    };
    const childEvents = children.map((c) => awsEventsOf(c.events));
    const maxChild = Math.max(...childEvents);
    const parent = awsEventsOf(ex.events);
    const boundChild = Math.max(...resolved.paths.map((p) => meshChildEventBound(p, 0)));
    const boundParent = meshParentEventBound(layout.rounds);
    const succeeded = children.filter((c) => c.status === 'SUCCEEDED').length;
    const bad = overlaps(children, pathOf);
    const perPair = (validated && summarizing ? summarizing - validated : wall) / Math.max(1, children.length);
    const fmt = (x: number) => x.toLocaleString('en-US');
    return {
      perPairMs: perPair,
      succeeded: ex.status === 'SUCCEEDED' && succeeded === children.length,
      lines: [
        `mesh ${n} sites, ${fmt(layout.pairs.length)} directed pairs: ${ex.status}, ${fmt(succeeded)} child executions succeeded`,
        `  rounds used ${roundsRun} (schedule ${layout.rounds}), lower bound ${meshRoundLowerBound(n)}`,
        `  largest history: parent ${fmt(parent)} events, child ${fmt(maxChild)} events (AWS-equivalent, from the event log); worst-case bounds ${fmt(boundParent)} / ${fmt(boundChild)}; limit ${fmt(HISTORY_EVENT_LIMIT)}`,
        `  orchestration wall time ${(wall / 1000).toFixed(1)} s: ValidatePlan ${((validated - t0) / 1000).toFixed(1)} s, rounds ${((summarizing - validated) / 1000).toFixed(1)} s (${perPair.toFixed(0)} ms a pair; Parquet copies on ${COPY_CONNECTIONS} DuckDB connections), summary and finish ${((t0 + wall - summarizing) / 1000).toFixed(1)} s`,
        ...(ex.error ? [`  error: ${ex.error.name}: ${ex.error.message.slice(0, 400)}`] : []),
        ...children
          .filter((c) => c.error)
          .slice(0, 3)
          .map((c) => `  child ${c.name}: ${c.error?.name}: ${c.error?.message.slice(0, 300)}`),
        `  instances in two tests at once (event log, ${fmt(children.length)} child executions): ${bad === 0 ? 'none' : `${bad} overlaps`}`,
      ],
    };
  } finally {
    // Children still writing after a failure must not hide it.
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Largest site count benchSites can make: every region of the table, each twice. */
export const MAX_BENCH_SITES = 2 * REGIONS.length;

/**
 * The mesh at each site count, one after the other in this process, then the per-pair cost of
 * the largest against the smallest (the goal: within 1.2×, and at most 25 ms a pair at 46 sites).
 * Both are measured in one run, as this machine's noise moves them together.
 */
export async function benchMeshSizes(sizes: number[]): Promise<{ lines: string[] }> {
  const lines: string[] = [];
  const perPair: number[] = [];
  let allSucceeded = true;
  for (const n of sizes) {
    const r = await benchMesh({ sites: n });
    lines.push(...r.lines);
    perPair.push(r.perPairMs);
    allSucceeded &&= r.succeeded;
  }
  if (!allSucceeded) lines.push('mesh per pair: not compared (a mesh run or one of its pairs did not succeed)');
  else if (new Set(sizes).size > 1) {
    const lo = sizes.indexOf(Math.min(...sizes));
    const hi = sizes.indexOf(Math.max(...sizes));
    lines.push(
      `mesh per pair: ${sizes[hi]} sites ${perPair[hi].toFixed(1)} ms, ${sizes[lo]} sites ${perPair[lo].toFixed(1)} ms: ${(perPair[hi] / perPair[lo]).toFixed(2)}× (goal: ≤ 1.2× from 24 to 46 sites, ≤ 25 ms a pair at 46)`,
    );
  }
  return { lines };
}
