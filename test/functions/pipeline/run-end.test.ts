/**
 * The summary's failure as ReleaseLock records it (functions/pipeline/run-end.ts) and the lines a
 * failed run prints from its manifest (core/run-manifest.ts runFailureLines). The run through the
 * state machine is test/faults/lambda.fault.test.ts ("summary queries").
 */
import { describe, expect, it } from 'vitest';
import { runFailureLines } from '../../../core/run-manifest.js';
import { SUMMARY_ERROR_MAX_CHARS, summaryFailureText } from '../../../functions/pipeline/run-end.js';

describe('summaryFailureText', () => {
  it("names the error and keeps a Lambda's message, on one line", () => {
    expect(
      summaryFailureText({
        Error: 'QueryFailedError',
        Cause: JSON.stringify({ errorMessage: 'percentiles:\nout of memory', errorType: 'QueryFailedError' }),
      }),
    ).toBe('QueryFailedError: percentiles: out of memory');
    expect(summaryFailureText({ Error: 'States.Timeout' })).toBe('States.Timeout');
    expect(summaryFailureText({ Cause: 'a Map failed' })).toBe('Error: a Map failed');
  });

  it('cuts a long cause to the limit, marking the cut', () => {
    const text = summaryFailureText({ Error: 'States.ExceedToleratedFailureThreshold', Cause: 'x'.repeat(50_000) });
    expect(text).toHaveLength(SUMMARY_ERROR_MAX_CHARS);
    expect(text.endsWith('…')).toBe(true);
    expect(text.startsWith('States.ExceedToleratedFailureThreshold: xxx')).toBe(true);
  });
});

describe('runFailureLines', () => {
  it('says which of the summary and the routes failed, and nothing for a run where neither did', () => {
    expect(runFailureLines({})).toEqual([]);
    expect(runFailureLines({ restore: { status: 'ok', at: 't', errors: [] } })).toEqual([]);
    expect(
      runFailureLines({
        restore: { status: 'failed', at: 't', errors: ['rtb-1 10.0.0.0/16: denied', 'rtb-2 0.0.0.0/0: throttled'] },
        summaryFailure: { at: 't', error: 'QueryFailedError: percentiles: out of memory' },
      }),
    ).toEqual([
      'routes not restored: rtb-1 10.0.0.0/16: denied; rtb-2 0.0.0.0/0: throttled',
      'the summary failed: QueryFailedError: percentiles: out of memory',
    ]);
  });
});
