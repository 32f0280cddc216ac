/**
 * CleanupAfterExecution: not a state machine task. An EventBridge rule invokes it when an execution
 * ends FAILED, TIMED_OUT or ABORTED, so routes and the lock are cleaned up even when no Catch could
 * run (functions/pipeline/abandoned-run.ts).
 */
import { z } from 'zod';
import { cleanupAfterExecution as cleanup } from '../pipeline/abandoned-run.js';
import type { Deps } from '../ports.js';
import { CLEANUP_LATE_SWEEP_MARGIN_SECONDS, TASKS } from '../wiring.js';
import { parseTaskInput } from './task-input.js';

/** The part of EventBridge's "Step Functions Execution Status Change" event the cleanup reads. */
const executionStatusChange = z.object({
  detail: z.object({
    name: z.string().min(1),
    status: z.string().min(1),
    startDate: z.number().nullish(),
    stopDate: z.number().nullish(),
  }),
});

export async function cleanupAfterExecution(deps: Deps, event: unknown) {
  const { name, status, startDate, stopDate } = parseTaskInput(
    executionStatusChange,
    event,
    'CleanupAfterExecution',
    'event',
  ).detail;
  // startDate (epoch ms) is $$.Execution.StartTime: it names the execution that holds the lock.
  const startedAt = startDate == null ? undefined : new Date(startDate).toISOString();
  return cleanup(deps, {
    runId: name,
    status,
    ...(startedAt ? { startedAt } : {}),
    ...(stopDate != null ? { stoppedAt: stopDate } : {}),
    // A SwapRoutes invocation can run on after a stop until its own timeout: sweep again then.
    lateSweepAfterMs: (TASKS.SwapRoutes.timeoutSeconds + CLEANUP_LATE_SWEEP_MARGIN_SECONDS) * 1000,
  });
}
