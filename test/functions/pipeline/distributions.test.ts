/**
 * functions/pipeline/distributions.ts through buildSummary over real DuckDB: modes and notes
 * for a bimodal path, none for a unimodal one, histogram and CDF per latency group, throughput
 * series per iperf3 trial — and each query run once per run, however many groups there are.
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { nearestRank } from '../../../core/stats.js';
import { withQuery } from '../../../functions/pipeline/query-rows.js';
import { buildSummary } from '../../../functions/pipeline/summary.js';
import { DirStore } from '../../../local/dir-store.js';
import { DuckDbQueryEngine } from '../../../local/duckdb-query.js';
import { renderMarkdown } from '../../../report/report-markdown.js';
import { prng, tempDataDir, writeSamples } from '../../helpers/samples.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

type Rec = Record<string, unknown>;

function latency(path: string, probe: string, values: number[]): Rec[] {
  return values.map((value, seq) => ({
    run_id: 'r1',
    path_id: path,
    probe,
    kind: 'tcp-connect',
    trial: 1,
    seq,
    t_start: seq,
    t_end: seq + 1,
    metric: 'connect_rtt_ms',
    value,
    unit: 'ms',
    ok: true,
  }));
}

function throughput(path: string, trial: number, values: number[]): Rec[] {
  return values.map((value, seq) => ({
    run_id: 'r1',
    path_id: path,
    probe: 'iperf3',
    kind: 'iperf3',
    trial,
    seq,
    t_start: 1_000_000 + trial * 100_000 + seq * 1000,
    t_end: 1_000_000 + trial * 100_000 + seq * 1000 + 1000,
    metric: 'throughput_bps',
    value,
    unit: 'bit/s',
    ok: true,
    ...(seq >= 3 ? { flag: 'credit-exhausted' } : {}),
  }));
}

/** Jittered draws around a value: a narrow peak (±2 %). */
function around(rand: () => number, at: number, n: number): number[] {
  return Array.from({ length: n }, () => at * (0.98 + 0.04 * rand()));
}

describe('distributions in the summary', () => {
  it('reports two modes and a mean in a valley for a bimodal path, one mode for a unimodal one', async () => {
    const rand = prng(3);
    const bimodal = [...around(rand, 2, 120), ...around(rand, 8, 280)];
    const unimodal = around(rand, 0.5, 400);
    const records = [
      ...latency('M', 'tcp-connect', bimodal),
      ...latency('U', 'tcp-connect', unimodal),
      ...latency('U', 'tcp-few', around(rand, 1, 10)),
      ...throughput('U', 1, [9e8, 9.1e8, 9e8, 2e8, 2e8]),
      ...throughput('U', 2, [8e8, 8e8]),
    ];
    const dir = await tempDataDir('dist');
    dirs.push(dir);
    await writeSamples(dir, records);
    const engine = await DuckDbQueryEngine.open(dir);
    const calls: string[] = [];
    const counting = withQuery(engine, (sql, params, label) => {
      calls.push(String(label));
      return engine.query(sql, params, label);
    });
    try {
      const s = await buildSummary({ store: new DirStore(dir), query: counting }, 'r1');
      const m = s.paths.find((p) => p.id === 'M')!;
      const u = s.paths.find((p) => p.id === 'U')!;

      const modes = m.results[0].modes!;
      expect(modes.length).toBe(2);
      expect(modes[0].at).toBeGreaterThan(1.9);
      expect(modes[0].at).toBeLessThan(2.1);
      expect(modes[1].at).toBeGreaterThan(7.6);
      expect(modes[1].at).toBeLessThan(8.4);
      expect(modes[0].share).toBeCloseTo(120 / 400, 6);
      expect(modes[1].share).toBeCloseTo(280 / 400, 6);
      expect(m.notes).toEqual([
        expect.stringMatching(
          /^tcp-connect connect_rtt_ms is multimodal: 2 modes at 2(\.\d+)? ms \(30 %\), [78]\.\d+ ms \(70 %\)$/,
        ),
        expect.stringMatching(/^tcp-connect connect_rtt_ms: the mean 6\.\d+ ms lies in a valley between the modes/),
      ]);
      expect(renderMarkdown(s)).toContain('is multimodal: 2 modes');

      const uc = u.results.find((r) => r.probe === 'tcp-connect')!;
      expect(uc.modes).toEqual([{ at: expect.closeTo(0.5, 1), share: 1 }]);
      expect(u.notes).toBeUndefined();
      // below 30 samples: no modes computed, but histogram and CDF are there
      expect(u.results.find((r) => r.probe === 'tcp-few')!.modes).toBeUndefined();
      // throughput is no latency metric: no modes
      expect(u.results.find((r) => r.metric === 'throughput_bps')!.modes).toBeUndefined();

      const d = s.distributions!;
      expect(d.map((x) => `${x.path}/${x.probe}`)).toEqual(['M/tcp-connect', 'U/tcp-connect', 'U/tcp-few']);
      const md = d[0];
      expect(md.bins.reduce((a, b) => a + b.count, 0)).toBe(400);
      for (let i = 1; i < md.bins.length; i++) expect(md.bins[i].lo).toBeCloseTo(md.bins[i - 1].hi, 9);
      expect(md.cdf.length).toBe(100);
      const sorted = [...bimodal].sort((a, b) => a - b);
      expect(md.cdf[49]).toEqual({ p: 0.5, value: nearestRank(sorted, 500) });
      expect(md.cdf[99]).toEqual({ p: 1, value: sorted[399] });

      expect(s.series).toEqual([
        {
          path: 'U',
          probe: 'iperf3',
          trial: 1,
          metric: 'throughput_bps',
          unit: 'bit/s',
          points: [
            { seq: 0, t: 1, value: 9e8 },
            { seq: 1, t: 2, value: 9.1e8 },
            { seq: 2, t: 3, value: 9e8 },
            { seq: 3, t: 4, value: 2e8, flag: 'credit-exhausted' },
            { seq: 4, t: 5, value: 2e8, flag: 'credit-exhausted' },
          ],
        },
        expect.objectContaining({ trial: 2, points: [expect.anything(), expect.anything()] }),
      ]);

      // once per run: three paths' worth of groups, one call per query
      for (const q of ['histogram', 'cdf', 'series']) expect(calls.filter((c) => c === `${q}-r1`)).toHaveLength(1);
    } finally {
      engine.close();
    }
  });
});
