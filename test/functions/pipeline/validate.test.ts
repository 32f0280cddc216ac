/**
 * ValidatePlan (functions/pipeline/validate.ts) with the real local store and lock: what it
 * writes for an accepted plan beyond the checks preflight makes (test/functions/pipeline/
 * preflight.test.ts) — here, the note of a UDP probe asked to run unbounded.
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { keys } from '../../../core/keys.js';
import { readManifest } from '../../../core/run-manifest.js';
import { validatePlanStep } from '../../../functions/pipeline/validate.js';
import { scenarioDeps } from '../../helpers/fakes.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const client = { instanceId: 'i-0123456789abcdef0', region: 'ap-northeast-1' };
const target = { host: '10.3.0.10', port: 5201 };

describe('ValidatePlan', () => {
  it('notes a UDP probe run unbounded on its path, and only there', async () => {
    const s = await scenarioDeps();
    cleanups.push(async () => {
      s.query.close();
      await rm(s.dir, { recursive: true, force: true });
    });
    const plan = {
      name: 'udp-unbounded',
      paths: [
        {
          id: 'A',
          client,
          target,
          probes: [{ kind: 'iperf3', mode: 'udp', bitrate: 'unbounded', durationSeconds: 5 }],
        },
        { id: 'B', client, target, probes: [{ kind: 'iperf3', mode: 'udp', durationSeconds: 5 }] },
      ],
    };
    await validatePlanStep(s.deps, { input: { plan }, runId: 'udp', startedAt: '2026-12-01T00:00:00.000Z' });
    const m = await readManifest(s.store, 'udp');
    expect(m?.paths[0].notes).toEqual([expect.stringMatching(/^iperf3 iperf3: UDP at an unbounded rate .*-b 0/)]);
    expect(m?.paths[1].notes).toEqual([]);
    const spec = JSON.parse((await s.store.getText(keys.spec('udp', 'A', client.instanceId))) ?? '{}');
    expect(spec.probes[0].bitrate).toBe('unbounded');
  });
  it("records what started the run: the input's trigger, else console on AWS and cli locally; refuses another", async () => {
    const s = await scenarioDeps();
    cleanups.push(async () => {
      s.query.close();
      await rm(s.dir, { recursive: true, force: true });
    });
    const plan = { name: 'trigger', paths: [{ id: 'A', client, target, probes: [{ kind: 'tcp-connect', count: 5 }] }] };
    const started = async (runId: string, input: unknown, driver: 'aws' | 'local') => {
      await validatePlanStep({ ...s.deps, driver }, { input, runId, startedAt: '2026-12-01T00:00:00.000Z' });
      await s.deps.lock.release(runId);
      return (await readManifest(s.store, runId))?.trigger;
    };
    expect(await started('t1', { plan, trigger: 'schedule' }, 'aws')).toBe('schedule');
    expect(await started('t2', { plan, trigger: 'cli' }, 'aws')).toBe('cli');
    expect(await started('t3', { plan }, 'aws')).toBe('console');
    expect(await started('t4', { plan }, 'local')).toBe('cli');
    await expect(started('t5', { plan, trigger: 'cron' }, 'aws')).rejects.toThrow(
      'trigger: expected one of schedule, cli, console, got "cron"',
    );
    expect(await readManifest(s.store, 't5')).toBeUndefined();
  });
});
