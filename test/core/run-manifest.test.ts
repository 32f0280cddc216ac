/**
 * The run manifest's reader: a manifest as this version writes it reads back whole, one an
 * earlier version wrote (fields added since absent) still reads, and a damaged one fails
 * naming the key and the field.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocumentInvalidError } from '../../core/errors.js';
import { keys } from '../../core/keys.js';
import {
  manifestText,
  parseStoredManifest,
  type RunManifest,
  readManifest,
  splitManifest,
} from '../../core/run-manifest.js';
import { DirStore } from '../../local/dir-store.js';

/** A manifest with every field this version writes. */
function fullManifest(runId = 'r-full'): RunManifest {
  return {
    runId,
    planName: 'seed 000',
    driver: 'aws',
    status: 'partial',
    startedAt: '2026-12-01T00:00:00.000Z',
    endedAt: '2026-12-01T00:40:00.000Z',
    paths: [
      {
        id: 'A',
        label: 'same AZ',
        mesh: { from: 'ap-northeast-1', to: 'ap-northeast-3', distanceKm: 397.2, round: 0 },
        status: 'succeeded',
        startedAt: '2026-12-01T00:00:01.000Z',
        endedAt: '2026-12-01T00:10:00.000Z',
        steps: [
          {
            name: 'Reboot',
            status: 'succeeded',
            startedAt: '2026-12-01T00:00:01.000Z',
            endedAt: 'x',
            ms: 20,
            note: 'n',
          },
        ],
        provenance: {
          client: { instanceId: 'i-0abc', azId: 'apne1-az1', instanceType: 'c6in.large' },
          agent: {
            agentVersion: '0.1.0',
            host: 'h',
            kernel: '6.1',
            platform: 'linux-x64',
            node: 'v20',
            partial: true,
            futureFact: 'kept',
          },
        },
        probes: [
          {
            probe: 'tput',
            kind: 'iperf3',
            trials: 2,
            rawKeys: ['raw/path=A/run=r-full/client=i-0abc/tput/1.json'],
            sampleKeys: ['samples/path=A/run=r-full/tput-1.jsonl'],
            samples: 40,
            status: 'ok',
            reason: 'r',
            tools: { iperf3: '3.16' },
            credit: [{ trial: 1, firstLowIndex: 5, before: 9.6e8, after: 2e8 }],
            atBaseline: [{ trial: 2, median: 1.95e8, baselineBps: 2e8, intervals: 8 }],
            clocks: ['tool'],
            httpTrials: [
              {
                trial: 1,
                requests: 10,
                ok: 9,
                errors: { refused: 1 },
                wallMs: 100,
                rps: 90,
                throughputBps: 1e6,
                p50: 1.2,
                p99: null,
                timeWaitBefore: 1,
                timeWaitAfter: 2,
                tcpTwReuse: 1,
                portRange: [32768, 60999],
                ephemeralPorts: 28232,
              },
            ],
            warnings: [{ flag: 'nic-bound', text: 't' }],
            rejected: 1,
            files: [
              {
                key: 'k',
                trial: 1,
                lines: 21,
                samples: 20,
                rejected: 1,
                firstRejection: 'line 3: bad',
                truncated: true,
                truncation: 'cut',
              },
            ],
          },
        ],
        notes: ['a note'],
        probeCommand: {
          commandId: 'cmd-1',
          attempt: 3,
          sentAt: '2026-12-01T00:01:00.000Z',
          expectedSeconds: 60,
          deadline: '2026-12-01T00:05:00.000Z',
          waitSeconds: 5,
          done: true,
          stoppedAt: '2026-12-01T00:04:00.000Z',
        },
        probe_overhead_us: { 'tcp-connect': { p50_us: 30, p99_us: 80, n: 200, method: 'loopback', app_p50_us: 40 } },
        client: { instanceType: 'c6in.large', azId: 'apne1-az1', baselineBps: 3.125e9, peakBps: 2.5e10 },
        clientKind: 'ecs-task',
        task: { taskArn: 'arn', taskId: 't', cluster: 'c', service: 's' },
        az: {
          from: { region: 'ap-northeast-1', azId: 'apne1-az1' },
          to: { region: 'ap-northeast-1', azId: 'apne1-az2' },
        },
      },
      { id: 'B', label: 'B', status: 'failed', failedStep: 'PollProbe', error: 'e', steps: [], probes: [], notes: [] },
    ],
    routeChanges: [
      {
        region: 'ap-northeast-1',
        routeTableId: 'rtb-1',
        destination: '10.1.0.0/16',
        original: 'none',
        current: 'none',
      },
    ],
    restore: { status: 'ok', at: '2026-12-01T00:39:00.000Z', errors: [], notes: ['put back blackholed'] },
    notes: ['execution ABORTED'],
    compare: [{ path: 'B', baseline: 'A' }],
    cost: {
      estimateUsd: 1.5,
      transferUsd: 1,
      instanceUsd: 0.5,
      transferBytes: 1e9,
      budgetUsd: 5,
      budgetSource: 'plan',
      overBudget: false,
      overridden: false,
      pricesAsOf: '2026-11-01',
      assumptions: ['a'],
    },
    regression: { minRelative: 0.1, minAbsoluteMs: 0.05 },
  };
}

/** A manifest as the first versions wrote it: none of the fields added since. */
const EARLIER = {
  runId: 'r-old',
  planName: 'p',
  driver: 'local',
  status: 'succeeded',
  startedAt: '2026-11-30T00:00:00.000Z',
  paths: [
    {
      id: 'A',
      label: 'A',
      status: 'succeeded',
      steps: [{ name: 'Probe', status: 'succeeded', startedAt: '2026-11-30T00:00:00.000Z' }],
      probes: [{ probe: 'tcp-connect', trials: 1, rawKeys: [], sampleKeys: [], samples: 3, status: 'ok' }],
      notes: [],
    },
  ],
  routeChanges: [],
};

let dir: string;
let store: DirStore;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'pb-manifest-'));
  store = new DirStore(dir);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('readManifest', () => {
  it('reads a manifest with every field back whole', async () => {
    const m = fullManifest();
    await store.put(keys.manifest(m.runId), JSON.stringify(m));
    expect(await readManifest(store, m.runId)).toEqual(m);
    expect(parseStoredManifest(m.runId, JSON.stringify(m))).toEqual({ kind: 'whole', manifest: m });
  });

  it('reads the per-path layout back whole: the index, then each path from its own object, in order', async () => {
    const m = fullManifest('r-split');
    const { index, paths } = splitManifest(m);
    expect(index.pathIds).toEqual(m.paths.map((p) => p.id));
    expect(index).not.toHaveProperty('paths');
    for (const p of paths) await store.put(keys.pathManifest(m.runId, p.id), manifestText(p));
    await store.put(keys.manifest(m.runId), manifestText(index));
    expect(parseStoredManifest(m.runId, manifestText(index))).toEqual({ kind: 'index', index });
    expect(await readManifest(store, m.runId)).toEqual(m);
  });

  it('names the missing object when the index lists a path that has none, and a path object holding another path', async () => {
    const m = fullManifest('r-gap');
    const { index, paths } = splitManifest(m);
    await store.put(keys.pathManifest(m.runId, paths[0].id), manifestText(paths[0]));
    await store.put(keys.manifest(m.runId), manifestText(index));
    await expect(readManifest(store, m.runId)).rejects.toThrow(
      `${keys.manifest(m.runId)} names path ${paths[1].id}, but ${keys.pathManifest(m.runId, paths[1].id)} is missing`,
    );
    await store.put(keys.pathManifest(m.runId, paths[1].id), manifestText(paths[0]));
    await expect(readManifest(store, m.runId)).rejects.toThrow(`it holds path ${paths[0].id}`);
  });

  it('reads a manifest an earlier version wrote, the later fields absent', async () => {
    await store.put(keys.manifest('r-old'), JSON.stringify(EARLIER));
    expect(await readManifest(store, 'r-old')).toEqual(EARLIER);
  });

  it('is undefined for a run without one', async () => {
    expect(await readManifest(store, 'r-none')).toBeUndefined();
  });

  it('fails naming the key and the first wrong field of a damaged one', async () => {
    const m = fullManifest('r-bad');
    const damaged = { ...m, paths: [m.paths[0], { ...m.paths[1], status: 'done', steps: 3 }] };
    await store.put(keys.manifest('r-bad'), JSON.stringify(damaged));
    const read = readManifest(store, 'r-bad');
    await expect(read).rejects.toBeInstanceOf(DocumentInvalidError);
    await expect(read).rejects.toThrow(
      'runs/run=r-bad/manifest.json is not a valid run manifest: paths[1].status: expected "pending" or "running" or "succeeded" or "failed", got "done" (and 1 more problem)',
    );
    await store.put(keys.manifest('r-cut'), JSON.stringify(m).slice(0, 200));
    await expect(readManifest(store, 'r-cut')).rejects.toThrow(
      /^runs\/run=r-cut\/manifest\.json is not valid JSON \(.+\): not a readable run manifest$/,
    );
  });
});
