/** The runs and paths tables' rows (functions/pipeline/run-tables.ts) from a summary, manifest and plan. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePlan } from '../../../core/plan.js';
import type { RunManifest } from '../../../core/run-manifest.js';
import type { Summary } from '../../../core/run-summary.js';
import { fitRow, pathRows, runRow, writeRunTables } from '../../../functions/pipeline/run-tables.js';
import { DirStore } from '../../../local/dir-store.js';
import { runTableColumns } from '../../../queries/sql.js';
import { expectOk } from '../../helpers/plans.js';

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
