/**
 * The console table's run-level lines (report-text.ts): the run's notes, a shift of the whole run
 * said once, and why a difference has no verdict.
 */
import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../report/report-markdown.js';
import { renderTable } from '../../report/report-text.js';
import { summary } from '../helpers/report-summary.js';

describe('the console table', () => {
  it('says once when the whole run moved, in every rendering', () => {
    const s = summary();
    s.runShifts = [
      {
        probe: 'tcp-connect',
        metric: 'connect_rtt_ms',
        unit: 'ms',
        percentile: 'p50',
        shift_pct: 31,
        usual_pct: [-4, 5],
        paths: 3,
      },
    ];
    const note =
      'the whole run moved: tcp-connect connect_rtt_ms p50 +31.0 % (the median of 3 paths; earlier runs: −4.0 % to +5.0 %), taken out before each path was judged';
    expect(renderTable(s)).toContain(`note: ${note}`);
    expect(renderMarkdown(s)).toContain(note);
    s.runShifts[0].reference = 'A';
    expect(renderTable(s)).toContain('(read from reference path A;');
    // A busy host's shift: the same milliseconds on every path, and its share of the median path.
    Object.assign(s.runShifts[0], { model: 'additive', shift: 0.1234, shift_pct: 9.9 });
    expect(renderTable(s)).toContain(
      'p50 +0.123 ms on every path (+9.9 % of the median path) (read from reference path A;',
    );
  });

  it('prints why a difference has no verdict', () => {
    const s = summary();
    const c = s.comparisons?.[0];
    if (!c) throw new Error('the fixture has a comparison');
    c.p99 = { diff: 0, pct: 0, ci95: [0, 0], verdict: 'no verdict', why: 'zero-width interval' };
    expect(renderTable(s)).toContain('no verdict: zero-width interval');
  });
});
