/**
 * Run the lab mesh through the whole pipeline: `plans/lab-mesh.json` on the mesh state machine
 * (statemachine/mesh.asl.json, the local runner's Distributed Map emulation) against the lab's
 * `mesh` profile, which must be up under `prefix`. Shared by the lab test
 * (test/lab/mesh.lab.test.ts) and the bench (cli/bench.ts).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MeshSummary, Summary } from '../../functions/core/model.js';
import { silentLogger } from '../../functions/log.js';
import { meshFitLines } from '../../functions/pipeline/mesh.js';
import { createLabPorts } from '../../lab/index.js';
import { type LabMeshRow, labMeshMatrixLines, labMeshRows } from '../../lab/mesh.js';
import { DEFAULT_PREFIX } from '../../lab/topology.js';
import { type LocalRunResult, runLocal } from '../../local/driver.js';
import { ROOT } from '../../local/run-machine.js';

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
  const mesh = (result.summary as Summary | undefined)?.mesh;
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
