/**
 * cli/bench.ts historyLines: the execution's events in AWS terms (a Task visit is 5 events, a
 * retry 3 more) and the worst case from the ASL, for plans/local-loopback.json.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { historyLines, largestCounted } from '../../cli/bench.js';
import { AWS_POLL_SECONDS } from '../../functions/adapters/aws/aws-deps.js';
import { chunkEventBound, pathEventBound, runEventBound } from '../../functions/pipeline/limits.js';
import { requireValidPlan } from '../../local/local-driver.js';
import type { ExecutionEvent, RunMachineResult } from '../../local/local-execution.js';

const ev = (type: string, stateType: string): ExecutionEvent =>
  ({ type, timestamp: 0, state: { name: 'S', type: stateType } }) as unknown as ExecutionEvent;

describe('historyLines', () => {
  it('counts each execution in AWS events and states the worst case of the run, a chunk and a path', () => {
    const plan = requireValidPlan(JSON.parse(readFileSync('plans/local-loopback.json', 'utf8')));
    const execution = {
      status: 'SUCCEEDED',
      // a Task entered (1 + 3), retried (1 + 3) and exited (1); a Pass entered and exited
      events: [ev('StateEntered', 'Task'), ev('StateRetried', 'Task'), ev('StateExited', 'Task')].concat([
        ev('StateEntered', 'Pass'),
        ev('StateExited', 'Pass'),
      ]),
      children: [
        { name: 'c', state: 'MeasureChunk', index: 0, status: 'SUCCEEDED', events: [ev('StateEntered', 'Task')] },
        {
          name: 'p',
          state: 'MeasurePath',
          index: 0,
          status: 'SUCCEEDED',
          events: [ev('StateEntered', 'Task'), ev('StateExited', 'Task')],
        },
        { name: 'q', state: 'SummaryQueries', index: 0, status: 'SUCCEEDED', events: [ev('StateEntered', 'Task')] },
      ],
    } as unknown as RunMachineResult;
    const [log, worst] = historyLines(plan, execution);
    expect(log).toBe(
      'history (AWS-equivalent events, from the event logs): run 11; 1 chunk executions (largest 4); 1 path executions (largest 5)',
    );
    const pathBound = Math.max(...plan.paths.map((p) => pathEventBound(p, AWS_POLL_SECONDS)));
    expect(worst).toContain(
      `run ${runEventBound(1).toLocaleString('en-US')}, chunk ${chunkEventBound(3)}, path ${pathBound.toLocaleString('en-US')}`,
    );
    expect(worst).toContain(`the largest, ${pathBound.toLocaleString('en-US')} (path), against the limit of 25,000`);
    expect(largestCounted(execution)).toEqual({ events: 11, name: 'run' });
  });
});
