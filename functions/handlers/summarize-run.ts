/**
 * SummarizeRun: the run's summary and reports, with their charts (functions/pipeline/summary.ts);
 * as PrepareSummary, the calls of the summary's queries (functions/pipeline/summary-queries.ts).
 */
import { summarizeInput } from '../pipeline/contracts.js';
import { summarizeRun as summarize } from '../pipeline/summary.js';
import type { Deps } from '../ports.js';
import { parseTaskInput } from './task-input.js';

export async function summarizeRun(deps: Deps, input: unknown) {
  return summarize(deps, parseTaskInput(summarizeInput, input, 'SummarizeRun'));
}
