/**
 * cli/bench.ts historyLines: the execution's events in AWS terms (a Task visit is 5 events, a
 * retry 3 more) and the worst case from the ASL, for plans/local-loopback.json.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { historyLines } from '../../cli/bench.js';
import { AWS_POLL_SECONDS } from '../../functions/adapters/aws/aws-deps.js';
import { HISTORY_EVENT_LIMIT, pathEventBound, runEventOverhead } from '../../functions/pipeline/limits.js';
import { requireValidPlan } from '../../local/local-driver.js';
import type { ExecutionEvent, RunMachineResult } from '../../local/local-execution.js';

const ev = (type: string, stateType: string): ExecutionEvent =>
  ({ type, timestamp: 0, state: { name: 'S', type: stateType } }) as unknown as ExecutionEvent;

describe('historyLines', () => {
  it('counts the log in AWS events and states the worst case and how many paths fit', () => {
    const plan = requireValidPlan(JSON.parse(readFileSync('plans/local-loopback.json', 'utf8')));
    const execution = {
      status: 'SUCCEEDED',
      // a Task entered (1 + 3), retried (1 + 3) and exited (1); a Pass entered and exited
      events: [ev('StateEntered', 'Task'), ev('StateRetried', 'Task'), ev('StateExited', 'Task')].concat([
        ev('StateEntered', 'Pass'),
        ev('StateExited', 'Pass'),
      ]),
      children: [
        { name: 'c', state: 'SummaryQueries', index: 0, status: 'SUCCEEDED', events: [ev('StateEntered', 'Task')] },
      ],
    } as unknown as RunMachineResult;
    const [log, worst] = historyLines(plan, execution);
    expect(log).toMatch(/^history: 11 events in the execution, 1 child executions \(largest 4 events\)/);
    const perPath = plan.paths.map((p) => pathEventBound(p, AWS_POLL_SECONDS));
    const bound = runEventOverhead() + perPath.reduce((a, b) => a + b, 0);
    expect(worst).toContain(`${bound.toLocaleString('en-US')} events = ${runEventOverhead()} for the run`);
    const fit = Math.floor((HISTORY_EVENT_LIMIT - runEventOverhead()) / Math.max(...perPath));
    expect(worst).toContain(`${fit} paths like the costliest fit`);
    expect(fit).toBeGreaterThanOrEqual(12);
  });
});
