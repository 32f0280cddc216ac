/**
 * The task inputs the state machine hands the pipeline steps, written once: the handlers
 * validate events with these schemas and the steps take the inferred types.
 */
import { z } from 'zod';
import { probeCommandStateSchema } from '../../core/path-manifest.js';
import { clientRefSchema } from '../../core/resolved-plan.js';

export const runRef = z.object({ runId: z.string().min(1) });
export type RunRef = z.infer<typeof runRef>;

export const pathRef = runRef.extend({ pathId: z.string().min(1) });
export type PathRef = z.infer<typeof pathRef>;

export const clientInput = pathRef.extend({ client: clientRefSchema });
export type ClientInput = z.infer<typeof clientInput>;

/** A bounded poll loop's state (DescribeClient): the state machine never waits forever. */
export const pollState = z.object({
  attempt: z.number().int().min(0),
  since: z.string(),
  waitSeconds: z.number().int().min(0),
  done: z.boolean().optional(),
});
export type PollState = z.infer<typeof pollState>;

export const describeClientInput = clientInput.extend({ want: z.enum(['stopped', 'ready']), poll: pollState });
export type DescribeClientInput = z.infer<typeof describeClientInput>;

export const pollProbeInput = clientInput.extend({ probe: probeCommandStateSchema });
export type PollProbeInput = z.infer<typeof pollProbeInput>;

/** What a Catch puts at its ResultPath: the error's name and cause. */
export const stateError = z.object({ Error: z.string().optional(), Cause: z.string().optional() });
export type StateError = z.infer<typeof stateError>;

export const failureInput = pathRef.extend({
  step: z.string(),
  error: stateError,
});
export type FailureInput = z.infer<typeof failureInput>;

/** One ended query of the SummaryQueries Map, as its last state hands it on (summary-queries.ts). */
export const summaryQueryExecution = z.object({ name: z.string().min(1), QueryExecutionId: z.string().min(1) });
export type SummaryQueryExecution = z.infer<typeof summaryQueryExecution>;

/**
 * SummarizeRun's input: `prepare` (the PrepareSummary state) asks for the summary's query calls;
 * otherwise `queries` are the SummaryQueries Map's executions to compose from (absent: the
 * summary runs its queries itself, as `pathbench report` and the cleanup do).
 */
export const summarizeInput = runRef.extend({
  prepare: z.literal(true).optional(),
  queries: z.array(summaryQueryExecution).optional(),
});
export type SummarizeInput = z.infer<typeof summarizeInput>;

/** `summaryError`: a summary state failed (ReleaseLockAfterSummaryFailure), to record in the manifest. */
export const releaseLockInput = runRef.extend({
  rejected: z.boolean().optional(),
  summaryError: stateError.optional(),
});
export type ReleaseLockInput = z.infer<typeof releaseLockInput>;
