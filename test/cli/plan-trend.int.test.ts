/**
 * The local commands from the command line (cli/pathbench.mjs): plan put / list / get / rm in a
 * data directory, schedule create printing the crontab line, trend over two summarized runs of
 * a plan and compare of the two runs (DuckDB over the samples written by the test).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeReports } from '../../functions/pipeline/summary.js';
import { DirStore } from '../../local/dir-store.js';
import { DuckDbQueryEngine } from '../../local/duckdb-query.js';
import { ROOT } from '../helpers/repo.js';
import { comparisonRun, writeSamples } from '../helpers/samples.js';

let data: string;
const cli = (...args: string[]) =>
  spawnSync(process.execPath, [path.join(ROOT, 'cli/pathbench.mjs'), ...args, '--data', data], {
    env: { PATH: process.env.PATH ?? '', HOME: data, AWS_EC2_METADATA_DISABLED: 'true' },
    encoding: 'utf8',
  });

beforeAll(async () => {
  data = mkdtempSync(path.join(tmpdir(), 'pb-cli-plans-'));
  // two runs of plan "cli-plan": the second with path B's http latency × 1.5
  const store = new DirStore(data);
  const slower = (r: Record<string, unknown>) =>
    r.path_id === 'B' && r.probe === 'http' && r.value !== null ? { ...r, value: Number(r.value) * 1.5 } : r;
  await writeSamples(data, [
    ...comparisonRun('run-1', 1),
    ...comparisonRun('run-2', 1).map((r) => slower({ ...r, run_id: 'run-2' })),
  ]);
  for (const [i, runId] of ['run-1', 'run-2'].entries()) {
    const manifest = {
      runId,
      planName: 'cli-plan',
      driver: 'local',
      status: 'succeeded',
      startedAt: `2026-12-0${i + 1}T00:00:00.000Z`,
      paths: ['A', 'B', 'C'].map((id) => ({ id, label: id, status: 'succeeded', steps: [], probes: [], notes: [] })),
      routeChanges: [],
    };
    await store.put(`runs/run=${runId}/manifest.json`, JSON.stringify(manifest));
    const query = await DuckDbQueryEngine.open(data);
    try {
      await writeReports({ store, query }, runId);
    } finally {
      query.close();
    }
  }
}, 120_000);

afterAll(() => rmSync(data, { recursive: true, force: true }));

describe('plan and schedule, locally', () => {
  it('puts, lists, gets and removes a plan; refuses a bad one naming the field', () => {
    const file = path.join(data, 'in.json');
    const plan = {
      name: 'weekly tokyo',
      defaults: {
        client: { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' },
        probes: [{ kind: 'tcp-connect', count: 5 }],
      },
      paths: [{ id: 'A', target: { host: '10.0.0.1', port: 7000 } }],
    };
    writeFileSync(file, JSON.stringify(plan));
    const put = cli('plan', 'put', 'weekly tokyo', file);
    expect(put.stderr).toBe('');
    expect(put.stdout).toMatch(/^plan "weekly tokyo" stored in .* \(\d+ bytes\)\n$/);
    expect(cli('plan', 'list').stdout).toBe('weekly tokyo\n');
    expect(JSON.parse(cli('plan', 'get', 'weekly tokyo').stdout)).toEqual(plan);
    const cron = cli('schedule', 'create', 'weekly tokyo', '--cron', 'cron(0 18 ? * SUN *)');
    expect(cron.stdout).toMatch(/^0 18 \* \* SUN cd .* npx pathbench run --local --plan '.*weekly\\%20tokyo\.json'/);
    writeFileSync(file, JSON.stringify({ ...plan, paths: [{ id: 'A', target: { host: '10.0.0.1', port: 0 } }] }));
    const bad = cli('plan', 'put', 'weekly tokyo', file);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/paths\[0\]\.target\.port/);
    expect(cli('plan', 'rm', 'weekly tokyo').stdout).toBe('plan "weekly tokyo" removed\n');
    expect(cli('plan', 'get', 'weekly tokyo').status).toBe(2);
  });
});

describe('trend and compare, locally', () => {
  it('shows each percentile of the plan across its runs', () => {
    const r = cli('trend', '--plan', 'cli-plan', '--path', 'B', '--metric', 'http_latency_ms');
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(
      /^cli-plan · B http http_latency_ms p50 \[ms\]\n {2}run-1 .*\n {2}run-2 .*\n {2}between runs: 2 clean run\(s\), fewer than 5: no spread yet\ncli-plan · B http http_latency_ms p99/,
    );
    const rows = JSON.parse(cli('trend', '--plan', 'cli-plan', '--json').stdout) as { runId: string; path: string }[];
    expect(new Set(rows.map((x) => x.runId))).toEqual(new Set(['run-1', 'run-2']));
    expect(cli('trend', '--runs', 'x').stderr).toMatch(/--runs: expected a positive integer/);
  });

  it('compares the two runs: B slower at p50 by about 50 %', () => {
    const r = cli('compare', 'run-1', 'run-2');
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^run run-2 \(cli-plan\) − run run-1 \(cli-plan\)\n/);
    const b = r.stdout.split('\n').find((l) => /^B\s+http\s/.test(l));
    expect(b).toMatch(/\(\+50\.0%\) \[.*\] slower/);
  });
});
