import { describe, expect, it } from 'vitest';
import type { PathManifest, ProbeProvenance } from '../../../core/path-manifest.js';
import { parseNotes, recordProvenance } from '../../../functions/pipeline/record-provenance.js';

const probe = (over: Partial<ProbeProvenance> = {}): ProbeProvenance => ({
  probe: 'bw',
  kind: 'iperf3',
  trials: 2,
  rawKeys: [],
  sampleKeys: [],
  samples: 0,
  status: 'ok',
  ...over,
});

const entry = (): PathManifest => ({ id: 'A', label: 'a', status: 'running', steps: [], probes: [], notes: [] });

describe('parseNotes', () => {
  it("counts a probe's rejected units in its kind's word and names each truncated file", () => {
    const pr = probe({
      rejected: 2,
      files: [
        { key: 'bw/1.json', trial: 1, lines: 10, samples: 8, rejected: 2, firstRejection: 'negative throughput' },
        { key: 'bw/2.json', trial: 2, lines: 5, samples: 5, rejected: 0, truncated: true },
      ],
    });
    expect(parseNotes(pr)).toEqual([
      'bw: 2 of 15 raw interval(s) rejected, the rest kept (first: negative throughput)',
      'bw: raw file bw/2.json is truncated; kept the 5 sample(s) of its complete part',
    ]);
    expect(parseNotes(probe({ files: [] }))).toEqual([]);
  });
});

describe('recordProvenance', () => {
  it("puts the parse's provenance, warnings, unavailable tools and the agent's facts on the path", () => {
    const p = entry();
    const parsed = {
      provenance: [
        probe({
          tools: { iperf3: '3.16', ss: 'unavailable (not installed)' },
          warnings: [{ flag: 'nic-bound', text: 'bw: NIC-bound' }],
        }),
      ],
      failures: [],
      total: 0,
      report: {
        agentVersion: '1.2.3',
        probes: [],
        calibration: {
          'tcp-connect': { p50_us: 20, p99_us: 40, n: 100, method: 'loopback' },
          sockperf: { error: 'no sockperf' },
        },
      },
      reportProblem: 'agent.json is truncated',
    };
    recordProvenance(p, parsed);
    expect(p.probes).toBe(parsed.provenance);
    expect(p.notes).toEqual([
      'bw: NIC-bound',
      'agent.json is truncated: the probes were read from their raw files',
      'bw: ss unavailable (not installed)',
      'sockperf probe self-calibration failed: no sockperf',
    ]);
    expect(p.provenance?.agent).toMatchObject({ agentVersion: '1.2.3' });
    expect(p.provenance?.agent).not.toHaveProperty('probes');
    expect(p.probe_overhead_us).toEqual({ 'tcp-connect': { p50_us: 20, p99_us: 40, n: 100, method: 'loopback' } });
  });

  it('says a note once when a later parse (a salvage after the collect) finds the same', () => {
    const p = entry();
    const parsed = {
      provenance: [probe({ rejected: 1, files: [{ key: 'k', trial: 1, lines: 3, samples: 2, rejected: 1 }] })],
      failures: [],
      total: 2,
    };
    recordProvenance(p, parsed);
    recordProvenance(p, parsed);
    expect(p.notes).toEqual(['bw: 1 of 3 raw interval(s) rejected, the rest kept (first: undefined)']);
  });
});
