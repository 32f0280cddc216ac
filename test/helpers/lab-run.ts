/**
 * A plan through the real ASL, agent and adapters on a lab test's own namespaces (its prefix):
 * the lab's fleet, routes and agent wrap, the lab's truth added to the summary, and the finished
 * probe polled every 0.25 s instead of the adaptive wait (when a poll happens does not touch the
 * measurement, and it keeps repeated runs within minutes). The run must succeed.
 */
import { expect } from 'vitest';
import type { ClientRef } from '../../core/resolved-plan.js';
import type { Summary } from '../../core/run-summary.js';
import { silentLogger } from '../../functions/log.js';
import { createLabPorts } from '../../lab/index.js';
import { type LocalRunOptions, runLocal } from '../../local/local-driver.js';

type Wrap = (argv: string[], client: ClientRef) => string[];

export async function runOnLab(
  lab: { prefix: string },
  run: Pick<LocalRunOptions, 'plan' | 'dataDir' | 'runId'> & { wrap?: (labWrap: Wrap) => Wrap },
): Promise<{ runId: string; summary: Summary }> {
  const ports = await createLabPorts(lab);
  const r = await runLocal({
    plan: run.plan,
    dataDir: run.dataDir,
    ...(run.runId ? { runId: run.runId } : {}),
    log: silentLogger,
    fleet: ports.fleet,
    routes: ports.routes,
    wrap: run.wrap ? run.wrap(ports.wrap) : ports.wrap,
    labTruth: ports.truth,
    waitTimeOverrides: { WaitForProbe: 250 },
  });
  expect(r.execution.status).toBe('SUCCEEDED');
  return { runId: r.runId, summary: r.summary as Summary };
}
