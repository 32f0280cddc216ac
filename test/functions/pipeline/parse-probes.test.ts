/**
 * One client must not forge another path's data: each client writes raw output under its
 * own `client=<instanceId>/` prefix of the path and run (IAM allows nothing else, see
 * test/infra), and collect reads only the prefix of the path's own client. Real local store and
 * pipeline steps; the agent is the fake runner writing where SendProbe tells it to.
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { keys, parseRawKey } from '../../../core/keys.js';
import { collectOutput } from '../../../functions/pipeline/collect.js';
import { sendProbe } from '../../../functions/pipeline/probe-command.js';
import { validatePlanStep } from '../../../functions/pipeline/validate.js';
import { type FakeRunner, scenarioDeps, scenarioPlan } from '../../helpers/fakes.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const CLIENT = { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' };

describe('raw output scoped per client', () => {
  it("SendProbe hands the agent its own client= prefix, and collect ignores another client's forged files", async () => {
    const s = await scenarioDeps();
    cleanups.push(async () => {
      s.query.close();
      await rm(s.dir, { recursive: true, force: true });
    });
    const runner = s.deps.runner as FakeRunner;
    await validatePlanStep(s.deps, { input: { plan: scenarioPlan(['A']) }, runId: 'r1' });
    const ref = { runId: 'r1', pathId: 'A', client: CLIENT };
    await sendProbe(s.deps, ref);
    expect(runner.sent[0].rawPrefix).toBe(`raw/path=A/run=r1/client=${CLIENT.instanceId}/`);
    // Another client forges path A's data where the old policy let every client write.
    const forged = JSON.stringify({ seq: 0, t_start: 1, t_end: 2, ok: true, rtt_ms: 999, clock: 'app-hrtime' });
    await s.store.put(keys.raw('A', 'r1', 'tcp-connect', 2, 'jsonl'), `${forged}\n`);
    await s.store.put(`raw/path=A/run=r1/client=i-0fffffffffffffff0/tcp-connect/3.jsonl`, `${forged}\n`);
    const r = await collectOutput(s.deps, { runId: 'r1', pathId: 'A' });
    // The fake agent's 10 lines (9 ok + 1 timeout) of trial 1, nothing of the forged trials.
    expect(r.samples).toBe(10);
    const samples = await s.store.list(keys.samplesPrefix('A', 'r1'));
    expect(samples).toEqual([keys.samples('A', 'r1', 'tcp-connect', 1)]);
    const text = (await s.store.getText(samples[0])) ?? '';
    expect(text).not.toContain('999');
  });

  it('parses raw keys with and without the client segment', () => {
    expect(parseRawKey('raw/path=A/run=r1/client=i-0abc/http/3.jsonl')).toEqual({
      pathId: 'A',
      runId: 'r1',
      client: 'i-0abc',
      probe: 'http',
      trial: 3,
      ext: 'jsonl',
    });
    expect(parseRawKey('raw/path=A/run=r1/http/3.jsonl')).toMatchObject({ probe: 'http', trial: 3 });
    expect(keys.clientRawPrefix('A', 'r1', 'i-0abc')).toBe('raw/path=A/run=r1/client=i-0abc/');
    expect(() => keys.clientRawPrefix('A', 'r1', '../x')).toThrow(/unsafe client/);
  });
});
