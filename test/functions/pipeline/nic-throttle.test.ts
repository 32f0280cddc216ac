/**
 * A trial the NIC throttled (its sidecar's allowance counters grew, core/nic-allowance.ts):
 * collect flags its samples `throttled:<allowance>` and records the trial, the path's notes say
 * which allowance, the summary's result carries the flag, and a trial whose counters did not
 * grow is left alone. Real local store, DuckDB and pipeline steps; the agent is the fake runner.
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { keys } from '../../../core/keys.js';
import { readManifest } from '../../../core/run-manifest.js';
import { collectOutput } from '../../../functions/pipeline/collect.js';
import { sendProbe } from '../../../functions/pipeline/probe-command.js';
import { buildSummary } from '../../../functions/pipeline/summary.js';
import { validatePlanStep } from '../../../functions/pipeline/validate.js';
import { scenarioDeps, scenarioPlan } from '../../helpers/fakes.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const CLIENT = 'i-0123456789abcdef0';

async function collectWith(nic: unknown) {
  const s = await scenarioDeps();
  cleanups.push(async () => {
    s.query.close();
    await rm(s.dir, { recursive: true, force: true });
  });
  await validatePlanStep(s.deps, { input: { plan: scenarioPlan(['A']) }, runId: 'r1' });
  await sendProbe(s.deps, { runId: 'r1', pathId: 'A', client: { instanceId: CLIENT, region: 'ap-northeast-1' } });
  // The agent's sidecar beside trial 1 of tcp-connect, as probes/tcp-connect writes it.
  const prefix = keys.clientRawPrefix('A', 'r1', CLIENT);
  await s.store.put(`${prefix}tcp-connect/1.meta.json`, JSON.stringify({ tool: 'tcp-connect', trial: 1, nic }));
  await collectOutput(s.deps, { runId: 'r1', pathId: 'A' });
  const text = (await s.store.getText(keys.samples('A', 'r1', 'tcp-connect', 1))) ?? '';
  const samples = text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { flag?: string });
  const manifest = await readManifest(s.store, 'r1');
  const summary = await buildSummary(s.deps, 'r1');
  return { samples, path: manifest!.paths[0], result: summary.paths[0].results[0], summary };
}

describe('a trial the NIC throttled', () => {
  it('flags its samples, records the trial and says which allowance', async () => {
    const { samples, path, result } = await collectWith({
      source: 'ena',
      dev: 'ens5',
      before: { bw_in: 0, bw_out: 100, pps: 4, conntrack: 0, linklocal: 0 },
      after: { bw_in: 0, bw_out: 142, pps: 4, conntrack: 0, linklocal: 0 },
    });
    expect(samples.length).toBe(10);
    expect(new Set(samples.map((r) => r.flag))).toEqual(new Set(['throttled:bw_out']));
    const prov = path.probes.find((p) => p.probe === 'tcp-connect');
    expect(prov?.throttled).toEqual([{ trial: 1, source: 'ena', dev: 'ens5', grew: { bw_out: 42 } }]);
    expect(path.notes).toContain(
      "tcp-connect trial 1: the NIC throttled it for exceeding the outbound bandwidth allowance (bw_out_allowance_exceeded +42 on ens5); its figures measure the instance's allowance, not only the path",
    );
    expect(result.flags).toContain('throttled:bw_out');
  });

  it('leaves a trial whose counters did not grow, or whose counters were reset, alone', async () => {
    for (const after of [{ bw_out: 100 }, { bw_out: 3 }]) {
      const { samples, path, result } = await collectWith({
        source: 'tbf',
        dev: 'eth0',
        before: { bw_out: 100 },
        after,
      });
      expect(samples.every((r) => r.flag === undefined)).toBe(true);
      expect(path.probes.find((p) => p.probe === 'tcp-connect')?.throttled).toBeUndefined();
      expect(result.flags.filter((f) => f.startsWith('throttled:'))).toEqual([]);
    }
  });
});
