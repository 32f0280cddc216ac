/** runTrials (probes/run-kit/trials.ts): trials one after another folded into one outcome. */
import { describe, expect, it } from 'vitest';
import { runTrials, type TrialResult } from '../../../probes/run-kit/trials.js';

const files = (t: number) => [`p/${t}.csv.gz`, `p/${t}.meta.json`];

describe('runTrials', () => {
  it('runs every trial in order; ok with the tool version when all succeed', async () => {
    const seen: number[] = [];
    const out = await runTrials(3, 'sockperf', async (t) => {
      seen.push(t);
      return { files: files(t), version: '3.7' };
    });
    expect(seen).toEqual([1, 2, 3]);
    expect(out).toEqual({ status: 'ok', files: [1, 2, 3].flatMap(files), trials: 3, tools: { sockperf: '3.7' } });
  });

  it('stays ok while any trial succeeded, naming the failed ones; failed with the first reason when all did', async () => {
    const some = await runTrials(
      3,
      't',
      async (t): Promise<TrialResult> => (t === 2 ? { files: files(t), reason: 'no-replies' } : { files: files(t) }),
    );
    expect(some).toMatchObject({ status: 'ok', reason: '1 of 3 trials failed: trial 2: no-replies' });
    const all = await runTrials(2, 't', async (t) => ({ files: files(t), reason: `r${t}` }));
    expect(all).toMatchObject({ status: 'failed', reason: 'r1' });
    expect(all.tools).toBeUndefined();
  });

  it('stops at a fatal trial: the rest are not run and count as failed', async () => {
    const seen: number[] = [];
    const out = await runTrials(3, 't', async (t) => {
      seen.push(t);
      return { files: [`p/${t}.meta.json`], reason: 'sockperf-not-installed', fatal: true };
    });
    expect(seen).toEqual([1]);
    expect(out).toEqual({
      status: 'failed',
      files: ['p/1.meta.json'],
      trials: 3,
      reason: 'sockperf-not-installed',
    });
  });
});
