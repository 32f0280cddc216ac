/**
 * Run the lab mesh through the whole pipeline: `plans/lab-mesh.json` on the mesh state machine
 * (statemachine/mesh.asl.json, the local runner's Distributed Map emulation) against the lab's
 * `mesh` profile, which must be up under `prefix`. Shared by the lab test
 * (test/lab/lab-mesh.lab.test.ts) and the bench (cli/bench.ts).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../cli/cli-root.js';
import type { MeshSummary } from '../../core/run-summary.js';
import { silentLogger } from '../../functions/log.js';
import { createLabPorts } from '../../lab/index.js';
import {
  LAB_MESH_REGIONS,
  LAB_MESH_ROUTE_FACTOR,
  type LabMeshRow,
  labMeshMatrixLines,
  labMeshRows,
} from '../../lab/lab-mesh.js';
import { DEFAULT_PREFIX } from '../../lab/namespace-names.js';
import { type LocalRunResult, runLocal } from '../../local/local-driver.js';
import { meshFitLines } from '../../report/report-mesh.js';

export interface LabMeshRun {
  result: LocalRunResult;
  mesh: MeshSummary | undefined;
  rows: LabMeshRow[];
  /** The matrix (measured / emulated ms) and the fit lines, as printed. */
  lines: string[];
}

export async function runLabMesh(opts: { prefix: string; dataDir: string; runId?: string }): Promise<LabMeshRun> {
  const plan = JSON.parse(await readFile(join(ROOT, 'plans', 'lab-mesh.json'), 'utf8'));
  for (const p of plan.paths) p.client.instanceId = p.client.instanceId.replace(DEFAULT_PREFIX, opts.prefix);
  const ports = await createLabPorts({ prefix: opts.prefix });
  const result = await runLocal({
    plan,
    dataDir: opts.dataDir,
    runId: opts.runId ?? 'lab-mesh',
    log: silentLogger,
    fleet: ports.fleet,
    routes: ports.routes,
    wrap: ports.wrap,
  });
  const mesh = result.summary?.mesh;
  const rows = mesh ? labMeshRows(mesh) : [];
  const errs = rows.filter((r) => r.error !== null).map((r) => Math.abs(r.error!));
  const lines = mesh
    ? [
        'lab mesh, TCP-connect p50 measured / emulated RTT (ms):',
        ...labMeshMatrixLines(rows),
        `largest deviation ${(Math.max(...errs) * 100).toFixed(1)} % (${errs.filter((e) => e <= 0.05).length}/${rows.length} pairs within 5 %)`,
        ...meshFitLines(mesh),
      ]
    : ['lab mesh: the summary has no mesh section'];
  return { result, mesh, rows, lines };
}

/** Prefix of the bench's own lab mesh (apart from a lab the other rows may have up). */
const BENCH_PREFIX = 'pb-bm-';

/**
 * Bench row: the lab mesh (profile `mesh`) brought up under its own prefix, run through the
 * pipeline, and taken down: per pair the measured TCP-connect p50 against the emulated round trip
 * (±5 %), and r of latency against distance. Skipped with a line where no lab can run (not root,
 * no namespaces or NFQUEUE).
 */
export async function benchLabMesh(): Promise<{ lines: string[] }> {
  const lab = await import('../../lab/index.js');
  const can = await lab.labAvailable();
  if (!can.ok) return { lines: [`lab mesh: skipped (no lab here: ${can.reason})`] };
  const opts = { prefix: BENCH_PREFIX };
  const dir = await mkdtemp(join(tmpdir(), 'pathbench-bench-lab-mesh-'));
  try {
    await lab.labDown(opts);
    await lab.labUp({ ...opts, profile: 'mesh', delay: 'nfqueue' });
    const t0 = Date.now();
    const run = await runLabMesh({ prefix: BENCH_PREFIX, dataDir: dir, runId: 'bench-lab-mesh' });
    const wall = (Date.now() - t0) / 1000;
    const fit = run.mesh?.latencyVsDistance;
    const within = run.rows.filter((r) => r.error !== null && Math.abs(r.error) <= 0.05).length;
    return {
      lines: [
        `lab mesh: ${run.rows.length} directed pairs of ${LAB_MESH_REGIONS.length} region namespaces, ${run.result.execution.status} in ${wall.toFixed(0)} s; fibre RTT, route factor ${LAB_MESH_ROUTE_FACTOR}`,
        ...run.lines,
        `  measured within ±5 % of emulated: ${within}/${run.rows.length} pairs; latency vs distance r = ${fit ? fit.r.toFixed(4) : '–'} (≥ 0.9 wanted)`,
      ],
    };
  } finally {
    await lab.labDown(opts).catch(() => undefined);
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
