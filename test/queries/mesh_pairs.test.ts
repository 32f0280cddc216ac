/** queries/mesh_pairs.sql on DuckDB: p50 per pair, the window bound, and the fit over pairs, against JavaScript. */
import { describe, expect, it } from 'vitest';
import { nearestRank } from '../../core/stats.js';
import { fitLine } from '../../functions/pipeline/mesh-summary.js';
import { loadQuery } from '../../queries/sql.js';
import { duckDbOver } from '../helpers/duckdb.js';
import { prng } from '../helpers/samples.js';

const rand = prng(16);
const PAIRS = ['a_b', 'a_c', 'b_a', 'b_c', 'c_a', 'c_b'];
const BASE_MS: Record<string, number> = { a_b: 12, b_a: 12, a_c: 32, c_a: 32, b_c: 22, c_b: 22 };

function records(runId: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const path of PAIRS) {
    const base = { run_id: runId, path_id: path, ok: true, t_start: 1, t_end: 2 };
    for (let seq = 0; seq < 21; seq++) {
      const lat = BASE_MS[path] * (1 + 0.05 * rand());
      out.push({
        ...base,
        probe: 'tcp-connect',
        kind: 'tcp-connect',
        trial: 0,
        seq,
        metric: 'connect_rtt_ms',
        value: lat,
        unit: 'ms',
      });
    }
    for (let seq = 0; seq < 10; seq++) {
      const bps = (4e6 * 1000) / BASE_MS[path] + 1e8 * rand();
      out.push({
        ...base,
        probe: 'iperf3',
        kind: 'iperf3',
        trial: 0,
        seq,
        metric: 'throughput_bps',
        value: bps,
        unit: 'bit/s',
      });
    }
    // a failed sample never counts
    out.push({
      ...base,
      probe: 'tcp-connect',
      kind: 'tcp-connect',
      trial: 0,
      seq: 99,
      metric: 'connect_rtt_ms',
      value: null,
      unit: 'ms',
      ok: false,
    });
  }
  return out;
}

describe('queries/mesh_pairs.sql on DuckDB', () => {
  const mine = records('mesh-q');
  const db = duckDbOver('mesh-pairs', () => [...mine, ...records('other')], { parquet: true });

  it('equals the nearest-rank p50s, W/RTT and the least-squares fit computed in JavaScript', async () => {
    const rows = await db.engine.query(loadQuery('mesh_pairs'), ['mesh-q'], 'mesh-pairs');
    expect(rows.map((r) => r.path)).toEqual(PAIRS);
    const sorted = (path: string, metric: string) =>
      mine
        .filter((r) => r.path_id === path && r.metric === metric && r.ok && r.value !== null)
        .map((r) => r.value as number)
        .sort((x, y) => x - y);
    const points: [number, number][] = [];
    for (const r of rows) {
      const lat = nearestRank(sorted(String(r.path), 'connect_rtt_ms'), 500)!;
      const thr = nearestRank(sorted(String(r.path), 'throughput_bps'), 500)!;
      expect(r.latency_p50_ms).toBe(lat);
      expect(r.throughput_p50_bps).toBe(thr);
      expect(Number(r.window_bound_bps)).toBeCloseTo((6 * 1048576 * 8) / (lat / 1000), 3);
      points.push([1000 / lat, thr]);
    }
    const fit = fitLine(points)!;
    expect(Number(rows[0].r_throughput_inverse_rtt)).toBeCloseTo(fit.r, 9);
    expect(Number(rows[0].fit_slope)).toBeCloseTo(fit.slope, 3);
    expect(Number(rows[0].fit_intercept_bps) / 1e8).toBeCloseTo(fit.intercept / 1e8, 6);
    expect(fit.r).toBeGreaterThan(0.9);
  });
});
