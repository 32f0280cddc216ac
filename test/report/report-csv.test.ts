/** CSV: the intervals, tails, spreads and differences; text a spreadsheet would run as a formula is quoted. */
import { describe, expect, it } from 'vitest';
import { CSV_DIFF_HEAD, CSV_HEAD, csvCell, renderCsv } from '../../report/report-csv.js';
import { summary } from '../helpers/report-summary.js';

describe('CSV', () => {
  it('quotes text starting with = + - @, leaves numbers alone, and escapes commas and quotes', () => {
    expect(csvCell('=1+1')).toBe("'=1+1");
    expect(csvCell('+cmd')).toBe("'+cmd");
    expect(csvCell('-2+3')).toBe("'-2+3");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('=a,b')).toBe(`"'=a,b"`);
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell(-0.25)).toBe('-0.25');
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell('plain')).toBe('plain');
  });

  it('carries the intervals, tails and spreads, then the differences under their own header', () => {
    const lines = renderCsv(summary()).trimEnd().split('\n');
    expect(lines[0]).toBe(CSV_HEAD.join(','));
    const first = lines[1].split(',');
    const at = (name: string) => first[CSV_HEAD.indexOf(name)];
    // an existing cell escaped too: the path label
    expect(at('label')).toBe("'=cmd|calc");
    expect(lines[2].split(',')[CSV_HEAD.indexOf('label')]).toBe("'@peering");
    expect([at('p50_ci_lo'), at('p50_ci_hi'), at('tail_p99'), at('tail_p999'), at('trials')]).toEqual([
      '2.49',
      '2.52',
      '3',
      '0',
      '3',
    ]);
    expect(at('p99_spread_pct')).toBe('17');
    expect(lines[3]).toBe('');
    expect(lines[4]).toBe(CSV_DIFF_HEAD.join(','));
    const diff = lines[5].split(',');
    const d = (name: string) => diff[CSV_DIFF_HEAD.indexOf(name)];
    expect([d('comparison'), d('p50_diff'), d('p50_pct'), d('p50_verdict'), d('p99_diff'), d('p99_ci_lo')]).toEqual([
      'D - C',
      '2.1',
      '84',
      'slower',
      '-0.05',
      '-0.4',
    ]);
  });
});
