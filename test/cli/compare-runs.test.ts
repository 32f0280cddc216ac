/**
 * Two runs compared path by path over real DuckDB: a run against another draw of the same
 * distributions shows no clear difference at p50, a run with one path's http latency × 1.5
 * shows that path slower (and only it); groups in one run only are listed; the text table.
 */
import { describe, expect, it } from 'vitest';
import { compareRows, compareText } from '../../cli/compare.js';
import { compareRuns } from '../../cli/compare-runs.js';
import { DirStore } from '../../local/dir-store.js';
import { duckDbOver } from '../helpers/duckdb.js';
import { comparisonRun } from '../helpers/samples.js';

type Rec = Record<string, unknown>;
const slowerB = (r: Rec) =>
  r.path_id === 'B' && r.probe === 'http' && r.value !== null ? { ...r, value: Number(r.value) * 1.5 } : r;

describe('compareRuns', () => {
  const db = duckDbOver('compare-runs', () => [
    ...comparisonRun('before', 1),
    ...comparisonRun('again', 2),
    ...comparisonRun('after', 1)
      .map((r) => ({ ...r, run_id: 'after' }))
      .map(slowerB)
      .filter((r) => r.path_id !== 'single'),
  ]);
  const deps = () => ({ query: db.engine, store: new DirStore(db.dir) });

  it('finds no clear p50 difference between two draws of the same paths', async () => {
    const c = await compareRuns(deps(), 'before', 'again');
    expect(c.diffs.length).toBeGreaterThan(5);
    const verdicts = c.diffs.map((d) => d.p50.verdict);
    expect(verdicts.filter((v) => v === 'faster' || v === 'slower').length).toBeLessThanOrEqual(1);
  });

  it('flags the path that got slower, and only it', async () => {
    const c = await compareRuns(deps(), 'before', 'after');
    const changed = c.diffs.filter((d) => d.p50.verdict === 'faster' || d.p50.verdict === 'slower');
    expect(changed.map((d) => [d.path, d.probe, d.p50.verdict])).toEqual([['B', 'http', 'slower']]);
    const b = changed[0];
    expect(b.p50.pct).toBeCloseTo(50, 0);
    expect(b.p50.ci95[0]).toBeGreaterThan(0);
    expect(b.b.p50).toBeCloseTo(b.a.p50 * 1.5, 9);
    // identical samples elsewhere: a difference of exactly 0
    const a = c.diffs.find((d) => d.path === 'A' && d.probe === 'http');
    expect(a?.p50.diff).toBe(0);
    expect(c.onlyInA).toEqual(['single tcp-connect connect_rtt_ms']);
    expect(c.onlyInB).toEqual([]);
    expect(compareRows(c).find((r) => r[0] === 'B' && r[1] === 'http')?.[5]).toMatch(
      /^\+[\d.]+ \(\+50\.0%\) \[.*\] slower$/,
    );
    expect(compareText(c)).toMatch(/^run after − run before\n/);
    expect(compareText(c)).toContain('only in before: single tcp-connect connect_rtt_ms');
  });

  it('names a run without samples and refuses unsafe run ids', async () => {
    await expect(compareRuns(deps(), 'before', 'nope')).rejects.toThrow(/run nope has no samples/);
    await expect(compareRuns(deps(), 'before', '../x')).rejects.toThrow(/unsafe run id/);
  });
});
