/** The trend's between-run line: the spread of a series' clean runs and the runs a trustworthy figure needs. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { betweenRunsLine, pairedLine, positionLine, type TrendRow, trendRows, trendText } from '../../cli/trend.js';
import { keys } from '../../core/keys.js';
import type { TrendPoint, TrendResult } from '../../core/trend-point.js';
import { betweenRuns, runsNeeded, trendPoint } from '../../functions/pipeline/regressions.js';
import { DirStore } from '../../local/dir-store.js';
import { HTTP_PAIR_METRIC } from '../../probes/http/http.schema.js';
import { prng } from '../helpers/samples.js';

const row = (i: number, value: number | null, excluded?: string): TrendRow => ({
  plan: 'p',
  runId: `run-${i}`,
  path: 'A',
  probe: 'tcp-connect',
  metric: 'connect_rtt_ms',
  unit: 'ms',
  percentile: 'p50',
  value,
  ...(excluded ? { excluded } : {}),
});

describe('between runs', () => {
  it('reads the robust spread of the clean runs and the runs needed for ±5 % and ±1 %', () => {
    const values = [10, 10.2, 9.8, 10.1, 9.9, 10, 10.3, 9.7];
    const b = betweenRuns(values);
    expect(b?.runs).toBe(8);
    expect(b?.median).toBe(10);
    // MAD 0.15 → sd 0.222 → 2.22 %
    expect(b?.sd_pct).toBeCloseTo(2.2239, 3);
    expect(runsNeeded(b!, 5)).toBe(1);
    expect(runsNeeded(b!, 1)).toBe(19);
    const line = betweenRunsLine([...values.map((v, i) => row(i, v)), row(9, 50, 'path failed'), row(10, null)]);
    expect(line).toMatch(
      /^between runs: median 10\.0+, robust sd 2\.2 % over 8 clean runs; .* for ±5 %: 1, for ±1 %: 19$/,
    );
  });

  it('says so when there are too few clean runs', () => {
    expect(betweenRuns([1, 2, 3])).toBeUndefined();
    expect(betweenRunsLine([row(1, 1), row(2, 2)])).toBe('between runs: 2 clean run(s), fewer than 5: no spread yet');
  });
});

describe('position effects', () => {
  it('keeps where each path ran when the plan set an order', () => {
    const point = trendPoint({
      runId: 'run-1',
      status: 'succeeded',
      planName: 'p',
      order: { mode: 'rotated', index: 1, paths: ['B', 'A'] },
      paths: ['A', 'B'].map((id) => ({ id, label: id, status: 'succeeded' as const, steps: [], results: [] })),
    });
    expect(point?.order).toBe('rotated');
    expect(point?.paths.map((p) => [p.id, p.position])).toEqual([
      ['A', 1],
      ['B', 0],
    ]);
    const plain = trendPoint({ runId: 'run-2', status: 'succeeded', planName: 'p', paths: [] });
    expect(plain?.order).toBeUndefined();
  });

  it('reads the same figure by position across runs (median of the clean ones)', () => {
    const at = (i: number, value: number, position: number, excluded?: string) => ({
      ...row(i, value, excluded),
      position,
    });
    const rows = [at(1, 1, 0), at(2, 3, 1), at(3, 1.2, 0), at(4, 2.8, 1), at(5, 2, 1), at(6, 99, 0, 'path failed')];
    expect(positionLine(rows)).toBe('by position run (median of clean runs): 1: 1.100 (2 runs) · 2: 2.800 (3 runs)');
    expect(positionLine([row(1, 1)])).toBeUndefined();
    expect(trendText(rows)).toMatch(/ #2$/m);
    expect(trendText(rows)).toContain('by position run');
  });
});

describe('a paired series (regression.paired)', () => {
  const dirs: string[] = [];
  afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

  it('shows the spread of what is judged, the path less the reference in the same probe, beside its own', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'pb-trend-paired-'));
    dirs.push(dir);
    const store = new DirStore(dir);
    const http = (metric: string, v: number): TrendResult => ({
      probe: 'http',
      metric,
      unit: 'ms',
      n: 300,
      p50: v,
      p99: v * 2,
      flags: [],
    });
    // the host adds 0–0.3 ms to both sides of B's probe; B's own part moves ±0.5 %
    const rand = prng(5);
    for (let i = 0; i < 12; i++) {
      const host = rand() * 0.3;
      const point: TrendPoint = {
        runId: `run-${String(i).padStart(2, '0')}`,
        planName: 'paired',
        startedAt: new Date(Date.UTC(2026, 0, 1, i)).toISOString(),
        settings: { reference: 'A', paired: true },
        paths: [
          { id: 'A', status: 'succeeded', results: [http('http_latency_ms', 0.4 + host)] },
          {
            id: 'B',
            status: 'succeeded',
            results: [
              http('http_latency_ms', 0.4 + host + 0.8 * (1 + (rand() - 0.5) * 0.01)),
              http(HTTP_PAIR_METRIC, 0.4 + host),
            ],
          },
        ],
      };
      await store.put(keys.trendPoint('paired', point.runId), JSON.stringify(point));
    }
    const rows = await trendRows(store, { plan: 'paired', path: 'B', metric: 'http_latency_ms' });
    const p50 = rows.filter((r) => r.percentile === 'p50');
    expect(p50).toHaveLength(12);
    expect(p50.every((r) => typeof r.pairRef === 'number')).toBe(true);
    const line = pairedLine(p50) as string;
    const sd = Number(/robust sd ([\d.]+) %/.exec(line)?.[1]);
    const ownSd = Number(/robust sd ([\d.]+) %/.exec(betweenRunsLine(p50))?.[1]);
    // the host's moments are in both sides and cancel: the difference moves far less than the path
    expect(sd).toBeLessThan(0.5);
    expect(ownSd).toBeGreaterThan(3);
    expect(line).toMatch(
      /^paired \(less the reference in the same probe\): median 0\.[78]\d+, .* over 12 clean runs; runs needed for ±5 %: 1, for ±1 %: \d+$/,
    );
    expect(trendText(rows)).toContain('paired (less the reference');
    // an unpaired series has no such line; a paired one with too few runs says so
    expect(pairedLine([row(1, 1)])).toBeUndefined();
    expect(pairedLine(p50.slice(0, 3))).toBe(
      'paired (less the reference in the same probe): 3 clean run(s), fewer than 5: no spread yet',
    );
  });
});
