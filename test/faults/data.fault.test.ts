/**
 * Fault classes of the data: malformed and truncated raw files and agent manifests
 * (agent.json), as the agent handed them to the store; and history-limit pressure (a plan too
 * long for one execution's 25,000-event history).
 */
import { describe, expect } from 'vitest';
import { type RunManifest, readManifest } from '../../core/run-manifest.js';
import { DirStore } from '../../local/dir-store.js';
import { type FaultCase, faultCase } from './harness.js';

async function manifest(c: FaultCase, runId: string): Promise<RunManifest> {
  return ((await readManifest(new DirStore(c.dir), runId)) ?? null) as RunManifest;
}

/** Rewrite the raw file (or agent.json) of path `a` as the agent wrote it. */
function damage(c: FaultCase, file: RegExp, f: (text: string) => string): void {
  c.faults.add({
    site: 'raw.put',
    match: (a) => file.test(String(a[0])),
    action: {
      map: (_a, body) => f(typeof body === 'string' ? body : Buffer.from(body as Uint8Array).toString('utf8')),
    },
  });
}

const LINES = /raw\/path=a\/.*tcp-connect\/1\.jsonl$/;

async function measuredPath(c: FaultCase, n = 20): Promise<RunManifest> {
  const r = await c.run(c.plan([{ id: 'a', count: n }, { id: 'b' }]));
  expect(r.execution.status, JSON.stringify(r.execution.error)).toBe('SUCCEEDED');
  const m = await manifest(c, r.runId);
  expect(m.paths[1].status, m.paths[1].error).toBe('succeeded');
  return m;
}

describe.concurrent('malformed and truncated raw files and manifests', () => {
  faultCase(
    'malformed / truncated raw and manifests',
    'one damaged line of twenty: the other nineteen are kept',
    async (c) => {
      damage(c, LINES, (t) =>
        t
          .split('\n')
          .map((l, i) => (i === 4 ? '{"seq": 4, "t_start": ' : l))
          .join('\n'),
      );
      await measuredPath(c);
    },
  );

  faultCase(
    'malformed / truncated raw and manifests',
    'a raw file cut mid-line: its complete lines are kept',
    async (c) => {
      // cut ten bytes into the thirteenth line
      damage(c, LINES, (t) => t.slice(0, t.split('\n').slice(0, 12).join('\n').length + 11));
      await measuredPath(c);
    },
  );

  faultCase(
    'malformed / truncated raw and manifests',
    'a sequence number above 2^31: stored, and the run reports',
    async (c) => {
      damage(c, LINES, (t) =>
        t
          .split('\n')
          .map((l) => (l.trim() ? JSON.stringify({ ...JSON.parse(l), seq: 2 ** 31 + JSON.parse(l).seq }) : l))
          .join('\n'),
      );
      const m = await measuredPath(c);
      expect(m.status).toBe('succeeded');
      expect(await new DirStore(c.dir).getText(`reports/run=${m.runId}/summary.json`)).toBeDefined();
    },
  );

  faultCase(
    'malformed / truncated raw and manifests',
    'agent.json cut in half: the probes of the path keep their samples',
    async (c) => {
      damage(c, /raw\/path=a\/.*agent\.json$/, (t) => t.slice(0, Math.floor(t.length / 2)));
      await measuredPath(c);
    },
  );

  faultCase(
    'malformed / truncated raw and manifests',
    'agent.json not JSON at all: the probes keep their samples',
    async (c) => {
      damage(c, /raw\/path=a\/.*agent\.json$/, () => 'Segmentation fault (core dumped)\n');
      await measuredPath(c);
    },
  );

  faultCase(
    'malformed / truncated raw and manifests',
    'an empty raw file: nothing measured, nothing invented, the run goes on',
    async (c) => {
      damage(c, LINES, () => '');
      await measuredPath(c);
    },
  );
});

describe.concurrent('history-limit pressure', () => {
  faultCase(
    'history-limit pressure',
    "a plan with more paths than the run's execution can carry is refused by ValidatePlan, naming how many fit",
    async (c) => {
      // Each path is its own execution, so no history holds more than a path's or a chunk's
      // events: what bounds a plan is the run's payload (its path items), here far over it.
      const n = 10_000;
      const stop = new AbortController();
      // Accepted, it would run for hours: stop at the first path and let the case fail.
      c.faults.add({
        site: 'lambda.BeginPath',
        match: (a) => JSON.stringify(a[0]).includes('too-long'),
        action: { hook: () => stop.abort() },
      });
      const r = await c.run(c.plan(Array.from({ length: n }, (_, i) => ({ id: `p${i}` }))), {
        signal: stop.signal,
        runId: 'too-long',
      });
      await c.settled();
      expect(r.execution.status, `${n} paths`).toBe('FAILED');
      expect(r.execution.error?.name).toBe('PlanInvalidError');
      expect(r.execution.error?.message).toMatch(/payload limit .* the first [\d,]+ paths fit/);
      expect(await new DirStore(c.dir).list('runs/run=too-long/')).toEqual([]);
    },
  );
});
