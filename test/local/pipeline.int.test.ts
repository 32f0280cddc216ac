/**
 * The `npm start` loopback plan end to end: real agent child processes, real listeners on
 * 127.0.0.1, the real ASL in-process, a temp data directory and DuckDB.
 */

import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunManifest, readManifest } from '../../core/run-manifest.js';
import type { Summary } from '../../core/run-summary.js';
import type { SampleRecord } from '../../core/sample-record.js';
import { silentLogger } from '../../functions/log.js';
import { DirStore } from '../../local/dir-store.js';
import { DuckDbQueryEngine } from '../../local/duckdb-query.js';
import { type LocalRunResult, runLocal } from '../../local/local-driver.js';
import { type LoopbackTargets, startLoopbackTargets } from '../../local/targets.js';
import { expectHonestComparisons } from '../helpers/honest-comparisons.js';
import { ROOT } from '../helpers/repo.js';

const planFile = join(ROOT, 'plans', 'local-loopback.json');
let dir: string;
let targets: LoopbackTargets;
let result: LocalRunResult;

/** The real `pathbench` command, as a user runs it. */
const cli = (...args: string[]) =>
  spawnSync(process.execPath, [join(ROOT, 'cli/pathbench.mjs'), ...args], { encoding: 'utf8' });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pathbench-it-'));
  targets = await startLoopbackTargets(silentLogger);
  const plan = JSON.parse(await readFile(planFile, 'utf8'));
  result = await runLocal({ plan, dataDir: dir, runId: 'it-loopback', log: silentLogger });
});

afterAll(async () => {
  await targets?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('local driver, loopback plan', () => {
  it('succeeds as an execution and writes the contract layout', async () => {
    expect(result.execution.status).toBe('SUCCEEDED');
    const keys = await new DirStore(dir).list('');
    for (const k of [
      'runs/run=it-loopback/plan.json',
      'runs/run=it-loopback/manifest.json',
      'runs/run=it-loopback/paths/path=plain.json',
      'specs/run=it-loopback/path=plain/client=local/spec.json',
      'raw/path=plain/run=it-loopback/client=local/tcp-connect/1.jsonl',
      'raw/path=plain/run=it-loopback/client=local/agent.json',
      'samples/path=plain/run=it-loopback/tcp-connect-1.jsonl',
      'samples/path=closed/run=it-loopback/tcp-connect-1.jsonl',
      'reports/run=it-loopback/summary.json',
      'reports/run=it-loopback/summary.md',
      'reports/run=it-loopback/summary.csv',
    ]) {
      expect(keys).toContain(k);
    }
    expect(keys).not.toContain('lock.json');
  });

  it("writes every path's Parquet copy after collect, with the same rows as its JSONL", async () => {
    const keys = await new DirStore(dir).list('parquet/');
    expect(keys).toEqual(
      expect.arrayContaining([
        'parquet/path=plain/run=it-loopback/samples.parquet',
        'parquet/path=closed/run=it-loopback/samples.parquet',
      ]),
    );
    const engine = await DuckDbQueryEngine.open(dir);
    try {
      const count = "SELECT path, count(*) AS n FROM samples WHERE run = 'it-loopback' GROUP BY path ORDER BY path";
      const fromParquet = await engine.query(count, [], 'parquet');
      expect(fromParquet).toEqual(await engine.query(count.replace('FROM samples', 'FROM samples_jsonl'), [], 'jsonl'));
      expect(fromParquet.length).toBe(keys.length);
      const direct = await engine.query(
        `SELECT count(*) AS n FROM read_parquet('${dir}/parquet/*/*/samples.parquet')`,
        [],
        'direct',
      );
      expect(direct).toEqual([{ n: fromParquet.reduce((a, r) => a + Number(r.n), 0) }]);
    } finally {
      engine.close();
    }
  });

  it('keeps one sample per attempt, failed ones included', async () => {
    const text = await readFile(join(dir, 'samples/path=plain/run=it-loopback/tcp-connect-1.jsonl'), 'utf8');
    const recs = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as SampleRecord);
    expect(recs).toHaveLength(200);
    expect(recs[0]).toMatchObject({
      run_id: 'it-loopback',
      path_id: 'plain',
      probe: 'tcp-connect',
      metric: 'connect_rtt_ms',
      unit: 'ms',
    });
    const closed = (await readFile(join(dir, 'samples/path=closed/run=it-loopback/tcp-connect-1.jsonl'), 'utf8'))
      .trim()
      .split('\n');
    expect(closed).toHaveLength(200);
    expect(closed.every((l) => JSON.parse(l).ok === false && JSON.parse(l).error === 'refused')).toBe(true);
  });

  it('summarizes with the contract shape: loss on the closed port, the slow-accept target slower', () => {
    const s = result.summary as Summary;
    expect(s.runId).toBe('it-loopback');
    expect(s.status).toBe('succeeded');
    const by = Object.fromEntries(s.paths.map((p) => [p.id, p]));
    const plain = by.plain.results[0];
    // 200 samples: p99 and p99.9 rest on fewer than 10 samples beyond them, and say so
    expect(plain).toMatchObject({
      probe: 'tcp-connect',
      metric: 'connect_rtt_ms',
      unit: 'ms',
      flags: ['thin-tail:p99', 'thin-tail:p999'],
      tail: { p50: 100, p95: 10, p99: 2, p999: 0 },
    });
    expect(plain.ci95?.p50[0]).toBeLessThanOrEqual(plain.p50 ?? 0);
    expect(plain.ci95?.p50[1]).toBeGreaterThanOrEqual(plain.p50 ?? 0);
    expect(plain.n).toBe(200);
    expect(plain.loss).toBe(0);
    expect(plain.p50).toBeGreaterThan(0);
    for (const k of ['p50', 'p95', 'p99', 'p999', 'max'] as const) expect(typeof plain[k]).toBe('number');
    expect(by.closed.results[0]).toMatchObject({ n: 0, loss: 1, p50: null });
    const slow = by['slow-accept'].results[0];
    expect(slow.p50).toBeGreaterThan((plain.p50 ?? 0) * 10);
    // the plan declares no comparisons: every other path against the first; the closed port measured nothing
    expect(s.comparisons?.map((c) => [c.path, c.baseline, c.probe, c.metric])).toEqual([
      ['slow-accept', 'plain', 'tcp-connect', 'connect_rtt_ms'],
    ]);
    expect(s.comparisons?.[0].p50.verdict).toBe('slower');
    expect(expectHonestComparisons(s)).toBeGreaterThan(0);
    for (const p of s.paths) {
      expect(p.status).toBe('succeeded');
      expect(p.steps.map((x) => x.name)).toEqual(['WaitForCredits', 'Probe', 'Collect']);
      for (const st of p.steps) expect(st.ms).toBeGreaterThanOrEqual(0);
    }
  });

  it('records provenance and says that nothing was rebooted or swapped', async () => {
    const m = (await readManifest(new DirStore(dir), 'it-loopback')) as RunManifest;
    expect(m.status).toBe('succeeded');
    const agent = m.paths[0].provenance?.agent as Record<string, unknown>;
    expect(agent).toMatchObject({
      host: expect.any(String),
      kernel: expect.any(String),
      agentVersion: expect.any(String),
    });
    expect(m.paths[0].probes[0]).toMatchObject({ probe: 'tcp-connect', status: 'ok', samples: 200 });
    // the resolved comparisons travel with the run, and the stored summary.json carries them
    expect(m.compare).toEqual([
      { path: 'slow-accept', baseline: 'plain' },
      { path: 'closed', baseline: 'plain' },
    ]);
    const stored = JSON.parse(await readFile(join(dir, 'reports/run=it-loopback/summary.json'), 'utf8')) as Summary;
    expect(stored.comparisons).toEqual((result.summary as Summary).comparisons);
    expect(stored.comparisons?.length).toBe(1);
  });

  it('recomputes the same summary from the samples with `pathbench report --local --json`', () => {
    const r = cli('report', '--local', '--data', dir, 'it-loopback', '--json');
    expect(r.status, r.stderr).toBe(0);
    const again = JSON.parse(r.stdout) as Summary;
    expect(again.paths.map((p) => p.results)).toEqual((result.summary as Summary).paths.map((p) => p.results));
  });

  it("keeps a lab run's applied delays, which no sample holds, in the recomputed summary", async () => {
    // This loopback run has no lab: the stored summary is given a path's lab truth as a lab run
    // stores it, in a copy of the data directory.
    const copy = await mkdtemp(join(tmpdir(), 'pathbench-report-lab-'));
    try {
      await cp(dir, copy, { recursive: true });
      const file = join(copy, 'reports/run=it-loopback/summary.json');
      const stored = JSON.parse(await readFile(file, 'utf8')) as Summary;
      const lab = { targetRttMs: 0.5, achievedRttMs: 0.52, appliedRttMs: 0.49, bareRttMs: 0.03, packets: 400 };
      stored.paths[0].lab = lab;
      await writeFile(file, `${JSON.stringify(stored, null, 2)}\n`);
      const r = cli('report', '--local', '--data', copy, 'it-loopback', '--json');
      expect(r.status, r.stderr).toBe(0);
      const again = JSON.parse(r.stdout) as Summary;
      expect(again.paths[0].lab).toEqual(lab);
      expect(again.paths.slice(1).every((p) => p.lab === undefined)).toBe(true);
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  });

  it('says what the run and each path was in the runs and paths tables, joined with samples by `pathbench sql`', async () => {
    const plan = JSON.parse(await readFile(planFile, 'utf8'));
    const run = JSON.parse(await readFile(join(dir, 'tables/runs/it-loopback.json'), 'utf8'));
    expect(run).toMatchObject({
      run_id: 'it-loopback',
      plan_name: plan.name,
      driver: 'local',
      started_by: 'cli',
      status: 'succeeded',
    });
    expect(run.paths).toBe(plan.paths.length);
    // the CLI, as an analyst types it: one row per path, the join over samples
    const r = cli(
      'sql',
      '--data',
      dir,
      '--json',
      `SELECT p.path_id, p.status, r.plan_name, count(s.value) AS n
       FROM paths p JOIN runs r USING (run_id) LEFT JOIN samples s ON s.run = p.run_id AND s.path = p.path_id
       GROUP BY ALL ORDER BY p.path_id`,
    );
    expect(r.status, r.stderr).toBe(0);
    const rows = JSON.parse(r.stdout) as { path_id: string; status: string; plan_name: string; n: number }[];
    const summary = result.summary as Summary;
    expect(rows.map((x) => x.path_id)).toEqual(summary.paths.map((p) => p.id).sort());
    for (const row of rows) {
      expect(row.plan_name).toBe(plan.name);
      expect(row.status).toBe(summary.paths.find((p) => p.id === row.path_id)?.status);
      // the samples' own count of successful values, as the summary has it
      const n = summary.paths.find((p) => p.id === row.path_id)!.results.reduce((a, x) => a + x.n, 0);
      expect(row.n).toBe(n);
    }
    const csv = cli('sql', '--data', dir, '--csv', 'SELECT path_id, target_host FROM paths ORDER BY path_id');
    expect(csv.status, csv.stderr).toBe(0);
    expect(csv.stdout.split('\n')[0]).toBe('path_id,target_host');
    expect(csv.stdout.trim().split('\n')).toHaveLength(plan.paths.length + 1);
    const table = cli('sql', '--data', dir, 'SELECT count(*) AS runs FROM runs');
    expect(table.stdout).toMatch(/^runs\n-+\n\s*1\n\(1 row\)\n$/);
    // bad SQL: one line naming the problem, exit 2, nothing on stdout
    const bad = cli('sql', '--data', dir, 'SELECT nope FROM paths');
    expect(bad.status).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/^pathbench: sql: .*nope/);
  });

  it('runs every SQL example of docs/data.md over this run (DuckDB), the joins with rows', async () => {
    const doc = await readFile(join(ROOT, 'docs/data.md'), 'utf8');
    const examples = [...doc.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1].trim().replace(/;$/, ''));
    expect(examples.length).toBeGreaterThanOrEqual(3);
    const engine = await DuckDbQueryEngine.open(dir);
    try {
      for (const sql of examples) {
        const rows = await engine.query(sql, [], 'docs/data.md example');
        // The joins over paths find this run's rows; the others name a run or method it lacks.
        if (/JOIN paths/.test(sql) && /connect_rtt_ms/.test(sql)) expect(rows.length, sql).toBeGreaterThan(0);
      }
    } finally {
      engine.close();
    }
  });

  it('`run --json` prints the summary contract on stdout and nothing else, exit 0', () => {
    const data = join(dir, 'cli');
    const r = cli('run', '--local', '--plan', planFile, '--data', data, '--run-id', 'it-cli', '--json');
    expect(r.status, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout) as Summary;
    expect(Object.keys(s)).toEqual(expect.arrayContaining(['runId', 'status', 'paths']));
    expect(s).toMatchObject({ runId: 'it-cli', status: 'succeeded' });
    for (const p of s.paths) {
      expect(Object.keys(p)).toEqual(expect.arrayContaining(['id', 'label', 'status', 'steps', 'results']));
      for (const st of p.steps) expect(Object.keys(st).sort()).toEqual(['ms', 'name', 'status']);
      for (const res of p.results) {
        expect(Object.keys(res)).toEqual(
          expect.arrayContaining(['probe', 'metric', 'unit', 'n', 'loss', 'p50', 'p95', 'p99', 'p999', 'max', 'flags']),
        );
      }
    }
    expect(r.stderr).toMatch(/\[1\/3 plain\] starting/);
    // its targets were already listening (this suite started them): used, not started again
    expect(r.stderr).toContain('already listening: using those targets');
    // the same run id again is refused: exit 2, nothing overwritten
    const again = cli('run', '--local', '--plan', planFile, '--data', data, '--run-id', 'it-cli', '--json');
    expect(again.status).toBe(2);
    expect(again.stderr).toMatch(/RunExistsError: run it-cli already exists/);
  });

  it('rejects a bad plan with exit code 2, every problem listed, and no files written', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'pathbench-bad-'));
    const bad = join(empty, 'bad.json');
    await (await import('node:fs/promises')).writeFile(
      bad,
      JSON.stringify({ name: 'x', paths: [{ id: 'a b', target: { host: '127.0.0.1', port: 0 } }] }),
    );
    const r = cli('run', '--local', '--plan', bad, '--data', join(empty, 'data'));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/paths\[0\]\.id/);
    expect(r.stderr).toMatch(/paths\[0\]\.target\.port/);
    expect(r.stderr).not.toMatch(/at .*\.ts:\d+/);
    expect(r.stdout).toBe('');
    expect((await (await import('node:fs/promises')).readdir(empty)).sort()).toEqual(['bad.json']);
    await rm(empty, { recursive: true, force: true });
  });
});
