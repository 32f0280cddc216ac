/**
 * A plan with `regression.paired`, end to end on loopback: real HTTP servers, real agent child
 * processes, the real ASL in-process, DuckDB. B's and C's http probes also measure reference A's
 * server; the reference's series lands as http_pair_ref_ms beside each path's own, is never
 * compared between paths, and after five runs a change of B's server is judged by B's difference
 * from A in the same probe; `compare` of the runs before and after shows that difference's change.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareText } from '../../cli/compare.js';
import { compareRuns } from '../../cli/compare-runs.js';
import type { Summary } from '../../core/run-summary.js';
import { silentLogger } from '../../functions/log.js';
import { DirStore } from '../../local/dir-store.js';
import { DuckDbQueryEngine } from '../../local/duckdb-query.js';
import { runLocal } from '../../local/local-driver.js';
import { HTTP_PAIR_METRIC } from '../../probes/http/http.schema.js';
import { renderTable } from '../../report/report-text.js';
import { expectHonestComparisons } from '../helpers/honest-comparisons.js';

/** Each path's server: answers after `delayMs` (changed while it runs). */
const delays: Record<string, number> = { A: 0, B: 2, C: 6 };
const servers: http.Server[] = [];
const ports: Record<string, number> = {};
let dir: string;
const summaries: Summary[] = [];

const plan = () => ({
  name: 'paired-it',
  regression: { reference: 'A', paired: true },
  defaults: {
    client: { instanceId: 'local', region: 'local' },
    reboot: false,
    creditWaitSeconds: 0,
    probes: [{ kind: 'http', count: 60, payloadBytes: 100 }],
  },
  paths: Object.keys(delays).map((id) => ({ id, target: { host: '127.0.0.1', port: ports[id] } })),
});

async function run(i: number): Promise<Summary> {
  const r = await runLocal({
    plan: plan(),
    dataDir: dir,
    runId: `p${String(i).padStart(2, '0')}`,
    log: silentLogger,
    waitTimeOverrides: { WaitForProbe: 250 },
  });
  expect(r.execution.status).toBe('SUCCEEDED');
  if (!r.summary) throw new Error('no summary');
  return r.summary;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pathbench-paired-'));
  for (const id of Object.keys(delays)) {
    const s = http.createServer((_req, res) => {
      setTimeout(() => res.writeHead(200, { 'content-length': '100' }).end(Buffer.alloc(100)), delays[id]);
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    ports[id] = (s.address() as net.AddressInfo).port;
    servers.push(s);
  }
  // Five runs build the paired baseline; the sixth is judged with B's server 5 ms later, a
  // seventh (the same) gives `compare` of the last two five other clean runs, p00–p04, for a spread.
  for (let i = 0; i < 5; i++) summaries.push(await run(i));
  delays.B += 5;
  summaries.push(await run(5));
  summaries.push(await run(6));
}, 600_000);

afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  await rm(dir, { recursive: true, force: true });
});

describe('a paired plan on loopback', () => {
  it("gives B and C the reference's series beside their own, and A none", () => {
    const metrics = (id: string) =>
      summaries[0].paths
        .find((p) => p.id === id)
        ?.results.map((r) => [r.metric, r.n])
        .sort();
    expect(metrics('A')).toEqual([['http_latency_ms', 60]]);
    for (const id of ['B', 'C'])
      expect(metrics(id)).toEqual([
        ['http_latency_ms', 60],
        [HTTP_PAIR_METRIC, 60],
      ]);
  });

  it('stores both series as samples of the same probe, the servers telling them apart', async () => {
    const engine = await DuckDbQueryEngine.open(dir);
    try {
      const rows = await engine.query(
        `SELECT path, metric, count(*) AS n, quantile_disc(value, 0.5) AS p50 FROM samples
         WHERE run = 'p00' AND ok GROUP BY path, metric ORDER BY path, metric`,
        [],
        'paired samples',
      );
      const p50 = (path: string, metric: string) =>
        Number(rows.find((r) => r.path === path && r.metric === metric)?.p50);
      // C's own server answers 6 ms later than A's; the A measured inside C's probe does not (half
      // of it at least: a busy host delays the servers' timers, the 0 ms one's too)
      expect(p50('C', 'http_latency_ms') - p50('C', HTTP_PAIR_METRIC)).toBeGreaterThan(3);
      expect(rows.map((r) => [r.path, r.metric, Number(r.n)])).toEqual([
        ['A', 'http_latency_ms', 60],
        ['B', 'http_latency_ms', 60],
        ['B', HTTP_PAIR_METRIC, 60],
        ['C', 'http_latency_ms', 60],
        ['C', HTTP_PAIR_METRIC, 60],
      ]);
    } finally {
      engine.close();
    }
  });

  it("never compares the reference's series between paths, and every comparison is honest", () => {
    for (const s of summaries) {
      expect(s.comparisons?.length).toBeGreaterThan(0);
      expect(s.comparisons?.some((c) => c.metric === HTTP_PAIR_METRIC)).toBe(false);
      expectHonestComparisons(s);
    }
  });

  it("judges B's change by its difference from A in the same probe, and says so in the report", () => {
    const last = summaries[5];
    const b = (last.regressions ?? []).find((g) => g.path === 'B' && g.percentile === 'p50');
    expect(b).toMatchObject({ direction: 'regression', pairedWith: 'A', runsInBaseline: 5 });
    expect(b?.change_pct).toBeGreaterThan(50);
    expect(b?.value).toBeGreaterThan(b?.band[1] as number);
    // the reference's own series is no figure of its own in the judgement
    expect(last.trend?.some((t) => t.metric === HTTP_PAIR_METRIC)).toBe(false);
    expect(renderTable(last)).toMatch(/B\s+http\s+http_latency_ms.*regression \(paired with A\)/);
  });

  it("compare: run p05 − p04 of B less A in the same probe, about B's 5 ms", async () => {
    const engine = await DuckDbQueryEngine.open(dir);
    try {
      const c = await compareRuns({ query: engine, store: new DirStore(dir) }, 'p04', 'p05');
      const own = (path: string) => c.diffs.find((d) => d.path === path && d.metric === 'http_latency_ms');
      expect(own('A')?.paired).toBeUndefined();
      expect(own('C')?.paired).toBeDefined();
      expect(c.diffs.filter((d) => d.metric === HTTP_PAIR_METRIC).every((d) => d.paired === undefined)).toBe(true);
      const b = own('B')?.paired?.p50;
      // half of the 5 ms at least: a busy host delays the servers' timers
      expect(b?.diff).toBeGreaterThan(2.5);
      expect(b?.verdict).toBe('slower');
      expect(b!.ci95[0]).toBeGreaterThan(0);
      // p06 − p05, against p00–p04: the paired figure's spread beside the path's own
      const later = await compareRuns({ query: engine, store: new DirStore(dir) }, 'p05', 'p06');
      const d = later.diffs.find((x) => x.path === 'B' && x.metric === 'http_latency_ms');
      expect(d?.betweenRuns?.runs).toBe(5);
      expect(d?.pairedBetweenRuns?.runs).toBe(5);
      const [lo, hi] = d!.pairedBetweenRuns!.p50!;
      expect((lo + hi) / 2).toBeCloseTo(d!.paired!.p50.diff, 9);
      expect(hi).toBeGreaterThan(lo);
      expect(compareText(later)).toMatch(
        /^ {2}B http http_latency_ms p50 \(paired\): .* over 5 runs: (within|beyond)/m,
      );
    } finally {
      engine.close();
    }
  });
});
