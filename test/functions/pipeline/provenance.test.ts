/** SummaryPath.provenance from the manifest, by itself and through buildSummary over real DuckDB. */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { ClientNetwork } from '../../../core/client-network.js';
import { keys } from '../../../core/keys.js';
import type { PathManifest } from '../../../core/path-manifest.js';
import type { RunManifest } from '../../../core/run-manifest.js';
import { pathProvenance } from '../../../functions/pipeline/provenance.js';
import { buildSummary } from '../../../functions/pipeline/summary.js';
import { DirStore } from '../../../local/dir-store.js';
import { DuckDbQueryEngine } from '../../../local/duckdb-query.js';
import { tempDataDir, writeSamples } from '../../helpers/samples.js';

const entry = (extra: Partial<PathManifest> & Record<string, unknown> = {}): PathManifest => ({
  id: 'A',
  label: 'A',
  status: 'succeeded',
  steps: [],
  notes: [],
  probes: [
    {
      probe: 'lat',
      kind: 'tcp-connect',
      trials: 1,
      rawKeys: [],
      sampleKeys: [],
      samples: 3,
      status: 'ok',
      tools: { tcping: 'c-helper' },
      clocks: ['kernel-tcpi_rtt'],
    },
    {
      probe: 'bw',
      kind: 'iperf3',
      trials: 2,
      rawKeys: [],
      sampleKeys: [],
      samples: 20,
      status: 'ok',
      tools: { iperf3: '3.12' },
      clocks: ['tool'],
    },
    {
      probe: 'web',
      kind: 'http',
      trials: 1,
      rawKeys: [],
      sampleKeys: [],
      samples: 9,
      status: 'ok',
      clocks: ['app-hrtime', 'httping-monotonic'],
    },
  ],
  provenance: { agent: { agentVersion: '0.13.0', kernel: '6.1.0-28-cloud-amd64', host: 'ip-10-0-1-5', node: 'v22' } },
  ...extra,
});

describe('pathProvenance', () => {
  it('takes the client facts, the agent version and kernel, tools and the clock of each probe', () => {
    const client = { instanceType: 'c6i.large', azId: 'use1-az2', baselineBps: 781e6, peakBps: 12.5e9 };
    expect(pathProvenance(entry({ client }))).toEqual({
      ...client,
      agentVersion: '0.13.0',
      kernel: '6.1.0-28-cloud-amd64',
      tools: { tcping: 'c-helper', iperf3: '3.12' },
      clocks: { lat: 'kernel-tcpi_rtt', bw: 'tool', web: 'app-hrtime+httping-monotonic' },
    });
  });

  it('leaves out what the manifest does not know, and is undefined when it knows nothing', () => {
    expect(
      pathProvenance(
        entry({ provenance: undefined, client: { azId: 'use1-az1', baselineBps: 'fast' } as unknown as ClientNetwork }),
      ),
    ).toEqual({
      azId: 'use1-az1',
      tools: { tcping: 'c-helper', iperf3: '3.12' },
      clocks: { lat: 'kernel-tcpi_rtt', bw: 'tool', web: 'app-hrtime+httping-monotonic' },
    });
    expect(pathProvenance(entry({ provenance: undefined, probes: [] }))).toBeUndefined();
  });
});

describe('buildSummary', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  });

  it('carries each path’s provenance from the manifest into the summary', async () => {
    const dir = await tempDataDir('provenance');
    dirs.push(dir);
    await writeSamples(
      dir,
      [0, 1, 2].map((seq) => ({
        run_id: 'r1',
        path_id: 'A',
        probe: 'lat',
        kind: 'tcp-connect',
        trial: 1,
        seq,
        t_start: seq,
        t_end: seq + 1,
        metric: 'connect_rtt_ms',
        value: 0.2,
        unit: 'ms',
        ok: true,
        clock: 'kernel-tcpi_rtt',
      })),
    );
    const manifest: RunManifest = {
      runId: 'r1',
      planName: 'p',
      driver: 'local',
      status: 'succeeded',
      startedAt: '2026-01-01T00:00:00Z',
      routeChanges: [],
      paths: [
        entry({ client: { instanceType: 'c6i.large' } }),
        { ...entry({ id: 'B', label: 'B', probes: [], provenance: undefined }) },
      ],
    };
    const store = new DirStore(dir);
    await store.put(keys.manifest('r1'), JSON.stringify(manifest));
    const query = await DuckDbQueryEngine.open(dir);
    try {
      const s = await buildSummary({ store, query }, 'r1');
      expect(s.paths[0].provenance).toMatchObject({
        instanceType: 'c6i.large',
        agentVersion: '0.13.0',
        clocks: { lat: 'kernel-tcpi_rtt' },
      });
      expect(s.paths[1]).not.toHaveProperty('provenance');
    } finally {
      query.close();
    }
  });
});
