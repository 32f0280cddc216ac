/** The runs and paths tables' rows (functions/pipeline/run-tables.ts) from a summary, manifest and plan. */

import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backfillTablesOn } from '../../../cli/commands/sql.command.js';
import { keys } from '../../../core/keys.js';
import { parsePlan } from '../../../core/plan.js';
import type { RunManifest } from '../../../core/run-manifest.js';
import type { Summary } from '../../../core/run-summary.js';
import {
  type BackfillOutcome,
  backfillRunTables,
  fitRow,
  pathRows,
  runRow,
  writeRunTables,
} from '../../../functions/pipeline/run-tables.js';
import { DirStore } from '../../../local/dir-store.js';
import { DuckDbQueryEngine } from '../../../local/duckdb-query.js';
import { runTableColumns } from '../../../queries/sql.js';
import { expectOk } from '../../helpers/plans.js';
import { ROOT } from '../../helpers/repo.js';

const client = { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' };
const plan = expectOk(
  parsePlan({
    name: 'tables',
    defaults: { client, probes: [{ kind: 'tcp-connect' }] },
    paths: [
      {
        id: 'D',
        target: { host: '10.1.0.10', port: 7000 },
        routes: [
          {
            region: 'ap-northeast-1',
            routeTableId: 'rtb-2',
            destination: '10.1.0.0/16',
            via: { transitGatewayId: 'tgw-1' },
          },
        ],
      },
      { id: 'X', target: { host: '10.0.0.5', port: 7000 } },
    ],
  }),
);

const summary = {
  runId: '20261202T180000Z-abc123',
  status: 'partial',
  planName: 'tables',
  startedAt: '2026-12-02T18:00:00.000Z',
  endedAt: '2026-12-02T18:05:00.000Z',
  paths: [
    {
      id: 'D',
      label: 'via TGW',
      status: 'succeeded',
      steps: [],
      results: [],
      provenance: { instanceType: 'c6i.large', azId: 'apne1-az1', agentVersion: '1.2.0' },
      az: {
        from: { region: 'ap-northeast-1', azId: 'apne1-az1' },
        to: { region: 'ap-northeast-1', azId: 'apne1-az4' },
      },
    },
    { id: 'X', label: 'X', status: 'failed', failedStep: 'RunProbe', error: 'timeout', steps: [], results: [] },
  ],
} as unknown as Summary;

const manifest = {
  runId: summary.runId,
  planName: 'tables',
  driver: 'aws',
  trigger: 'schedule',
  status: 'partial',
  startedAt: summary.startedAt,
  paths: [
    { id: 'D', startedAt: '2026-12-02T18:00:01.000Z', endedAt: '2026-12-02T18:02:00.000Z' },
    { id: 'X', startedAt: '2026-12-02T18:02:01.000Z', endedAt: '2026-12-02T18:04:00.000Z' },
  ],
  routeChanges: [],
  cost: { estimateUsd: 0.42 },
} as unknown as RunManifest;

describe('the runs and paths tables', () => {
  it("gives the run's row every DDL column, in order, null where unknown", () => {
    const r = runRow(summary, manifest, plan);
    expect(Object.keys(r)).toEqual(runTableColumns('runs').map((c) => c.name));
    expect(r).toMatchObject({
      run_id: summary.runId,
      plan_name: 'tables',
      driver: 'aws',
      started_by: 'schedule',
      status: 'partial',
      paths: 2,
      failed_paths: 1,
      instance_types: 'c6i.large',
      regions: 'ap-northeast-1',
      agent_version: '1.2.0',
      estimate_usd: 0.42,
    });
    // nothing but the summary: still every column
    const bare = runRow({ ...summary, paths: [] } as Summary, undefined, undefined);
    expect(bare).toMatchObject({
      driver: null,
      started_by: null,
      instance_types: null,
      regions: null,
      estimate_usd: null,
      paths: 0,
    });
  });

  it('says per path its method, route targets, AZ ids, status and why it failed', () => {
    const [d, x] = pathRows(summary, manifest, plan);
    expect(Object.keys(d)).toEqual(runTableColumns('paths').map((c) => c.name));
    expect(d).toMatchObject({
      path_id: 'D',
      label: 'via TGW',
      method: 'transit-gateway',
      route_targets: 'rtb-2 10.1.0.0/16 → tgw-1',
      client_instance: client.instanceId,
      client_region: 'ap-northeast-1',
      client_az_id: 'apne1-az1',
      target_az_id: 'apne1-az4',
      instance_type: 'c6i.large',
      target_host: '10.1.0.10',
      started_at: '2026-12-02T18:00:01.000Z',
      failed_step: null,
      distance_km: null,
    });
    expect(x).toMatchObject({
      path_id: 'X',
      status: 'failed',
      failed_step: 'RunProbe',
      error: 'timeout',
      route_targets: null,
    });
  });

  it('refuses a key the DDL has no column for', () => {
    expect(() => fitRow('paths', { path_id: 'A', colour: 'red' })).toThrow(
      /no column for colour in queries\/paths.ddl.sql/,
    );
  });

  it('writes one object per run to each table', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pb-run-tables-'));
    const store = new DirStore(dir);
    await writeRunTables(store, summary, manifest, plan);
    expect((await store.list('tables/')).sort()).toEqual([
      `tables/paths/${summary.runId}.jsonl`,
      `tables/runs/${summary.runId}.json`,
    ]);
    const lines = (await store.getText(`tables/paths/${summary.runId}.jsonl`))!.trim().split('\n');
    expect(lines.map((l) => JSON.parse(l).path_id)).toEqual(['D', 'X']);
    await rm(dir, { recursive: true, force: true });
  });
});

describe('backfill of runs summarized before the tables existed', () => {
  const older = '20261101T120000Z-old001';
  const damaged = '20261101T130000Z-bad002';
  const done = '20261101T140000Z-has003';
  /** A data directory as an older pathbench left it: summaries (one damaged), no table rows but one run's. */
  async function olderData(): Promise<{ dir: string; store: DirStore }> {
    const dir = await mkdtemp(join(tmpdir(), 'pb-backfill-'));
    const store = new DirStore(dir);
    await store.put(keys.report(older, 'json'), JSON.stringify({ ...summary, runId: older }));
    await store.put(keys.report(older, 'md'), '# not a summary.json: ignored\n');
    await store.put(keys.report(damaged, 'json'), '{"runId": "20261101T13');
    await store.put(keys.report(done, 'json'), JSON.stringify({ ...summary, runId: done }));
    await writeRunTables(store, { ...summary, runId: done } as Summary, undefined, undefined);
    return { dir, store };
  }

  it('writes the rows of every summarized run without them, leaves the others, names what it skips', async () => {
    const { dir, store } = await olderData();
    const seen: [string, BackfillOutcome][] = [];
    const doneRows = await store.getText(keys.runsTable(done));
    // a dry run writes nothing
    const dry = await backfillRunTables(store, () => {}, { dryRun: true });
    expect(dry).toEqual({ runs: 3, written: 1, present: 1, skipped: 1 });
    expect(await store.getText(keys.runsTable(older))).toBeUndefined();
    const totals = await backfillRunTables(store, (id, o) => seen.push([id, o]));
    expect(totals).toEqual({ runs: 3, written: 1, present: 1, skipped: 1 });
    expect(seen.map(([id, o]) => [id, o.kind])).toEqual([
      [older, 'written'],
      [damaged, 'skipped'],
      [done, 'present'],
    ]);
    expect(seen[1][1]).toMatchObject({ why: expect.stringMatching(/summary/) });
    expect(await store.getText(keys.runsTable(done))).toBe(doneRows);
    // the rows are SummarizeRun's, and the engine reads them as the docs' joins do
    expect(JSON.parse((await store.getText(keys.runsTable(older)))!)).toEqual(
      runRow({ ...summary, runId: older } as Summary, undefined, undefined),
    );
    const engine = await DuckDbQueryEngine.open(dir);
    try {
      const rows = await engine.query(
        `SELECT r.run_id, p.path_id, p.status FROM runs r JOIN paths p ON p.run_id = r.run_id WHERE r.run_id = '${older}' ORDER BY p.path_id`,
        [],
        'backfilled',
      );
      expect(rows).toEqual([
        { run_id: older, path_id: 'D', status: 'succeeded' },
        { run_id: older, path_id: 'X', status: 'failed' },
      ]);
    } finally {
      engine.close();
    }
    // a second backfill has nothing left to write
    expect((await backfillRunTables(store, () => {})).written).toBe(0);
    await rm(dir, { recursive: true, force: true });
  });

  it('skips a run whose manifest is damaged, naming it, and writes neither table for it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pb-backfill-'));
    const store = new DirStore(dir);
    await store.put(keys.report(older, 'json'), JSON.stringify({ ...summary, runId: older }));
    await store.put(keys.manifest(older), '{"runId": 7}');
    const seen: BackfillOutcome[] = [];
    expect(await backfillRunTables(store, (_id, o) => seen.push(o))).toMatchObject({ written: 0, skipped: 1 });
    expect(seen).toEqual([
      { kind: 'skipped', why: expect.stringContaining('manifest.json is not a valid run manifest') },
    ]);
    expect(await store.list('tables/')).toEqual([]);
    await rm(dir, { recursive: true, force: true });
  });

  it('is `pathbench tables backfill`: a line per run, the totals, exit 1 when a run was skipped', async () => {
    const { dir, store } = await olderData();
    let printed = '';
    expect(await backfillTablesOn(store, true, (t) => (printed += t))).toBe(1);
    expect(printed).toContain(`  ${older}: would write (runs 1 row, paths 2 rows)`);
    expect(printed).toContain('3 summarized runs: 1 to write, 1 had their rows, 1 skipped');
    // as typed, through the CLI
    let out = '';
    let code = 0;
    try {
      out = execFileSync(process.execPath, [join(ROOT, 'cli/pathbench.mjs'), 'tables', 'backfill', '--data', dir], {
        cwd: ROOT,
        encoding: 'utf8',
      });
    } catch (e) {
      const err = e as { status: number; stdout: string };
      code = err.status;
      out = err.stdout;
    }
    expect(code).toBe(1);
    expect(out).toContain(`backfilling the runs and paths tables in ${dir}`);
    expect(out).toContain(`  ${older}: written (runs 1 row, paths 2 rows)`);
    expect(out).toContain(`  ${damaged}: skipped:`);
    expect(out).toContain(`  ${done}: has its rows`);
    expect(out).toContain('3 summarized runs: 1 written, 1 had their rows, 1 skipped');
    expect(await store.getText(keys.runsTable(older))).toBeDefined();
    await rm(dir, { recursive: true, force: true });
  }, 60_000);
});
