/**
 * Two runs compared path by path over real DuckDB: a run against another draw of the same
 * distributions shows no clear difference at p50, a run with one path's http latency × 1.5
 * shows that path slower (and only it); groups in one run only are listed; the text table. A
 * paired probe's figure less its reference: a busy host's added delay (in both series) cancels,
 * a change of the path alone shows.
 */
import { describe, expect, it } from 'vitest';
import { compareRows, compareText } from '../../cli/compare.js';
import { compareRuns } from '../../cli/compare-runs.js';
import { DirStore } from '../../local/dir-store.js';
import { duckDbOver } from '../helpers/duckdb.js';
import { comparisonRun, normalFrom, prng } from '../helpers/samples.js';

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

/**
 * One run of a paired probe on path B: every request of B's own series and of the reference's
 * (`http_pair_ref_ms`, the same probe) takes `host` ms more (a busy host), B's own `own` ms more.
 */
function pairedRun(runId: string, seed: number, host: number, own: number): Record<string, unknown>[] {
  const z = normalFrom(prng(seed));
  const recs: Record<string, unknown>[] = [];
  for (let trial = 1; trial <= 3; trial++)
    for (let i = 0; i < 400; i++)
      for (const [metric, base] of [
        ['http_latency_ms', 2 + own],
        ['http_pair_ref_ms', 1],
      ] as const)
        recs.push({
          run_id: runId,
          path_id: 'B',
          probe: 'http',
          kind: 'http',
          trial,
          seq: metric === 'http_latency_ms' ? i : 400 + i,
          t_start: 1_700_000_000_000 + i,
          t_end: 1_700_000_000_001 + i,
          metric,
          value: base + host + 0.02 * z(),
          unit: 'ms',
          ok: true,
        });
  return recs;
}

describe('compareRuns on a paired probe', () => {
  const db = duckDbOver('compare-runs-paired', () => [
    ...pairedRun('calm', 1, 0, 0),
    ...pairedRun('busy', 2, 0.6, 0),
    ...pairedRun('moved', 3, 0, 0.2),
  ]);
  const deps = () => ({ query: db.engine, store: new DirStore(db.dir) });
  const own = (c: Awaited<ReturnType<typeof compareRuns>>) =>
    c.diffs.find((d) => d.path === 'B' && d.metric === 'http_latency_ms');

  it('takes out what a busy host adds to both series', async () => {
    const c = await compareRuns(deps(), 'calm', 'busy');
    const b = own(c);
    // alone, B looks 30 % slower; less the reference in the same probe it has not moved
    expect(b?.p50.verdict).toBe('slower');
    expect(b?.p50.pct).toBeGreaterThan(25);
    expect(b?.paired?.p50.verdict).toBe('no clear difference');
    expect(Math.abs(b!.paired!.p50.diff)).toBeLessThan(0.01);
    expect(b!.paired!.p50.ci95[0]).toBeLessThan(0);
    expect(b!.paired!.p50.ci95[1]).toBeGreaterThan(0);
    // the reference's own series is not paired with itself
    expect(c.diffs.find((d) => d.metric === 'http_pair_ref_ms')?.paired).toBeUndefined();
    const text = compareText(c);
    expect(text).toContain('less the reference measured in the same probe');
    expect(text).toMatch(/^ {2}B http http_latency_ms p50: [-+][\d.]+ \([-+][\d.]+%\) \[.*\] no clear difference$/m);
  });

  it('shows a change of the path alone, as a share of its own figure', async () => {
    const c = await compareRuns(deps(), 'calm', 'moved');
    const p = own(c)?.paired?.p50;
    expect(p?.verdict).toBe('slower');
    expect(p?.diff).toBeCloseTo(0.2, 1);
    expect(p?.pct).toBeCloseTo(10, 0);
    expect(p!.ci95[0]).toBeGreaterThan(0);
    expect(compareText(c)).toMatch(/^ {2}B http http_latency_ms p50: \+[\d.]+ \(\+\d+\.\d%\) \[.*\] slower$/m);
  });
});
