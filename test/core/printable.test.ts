/**
 * Bad input in plans and output: formulas in CSV cells, terminal escape sequences
 * echoed in messages, bidi overrides and other invisible characters in free text.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { quoted } from '../../core/fields.js';
import { parsePlan, parsePlanText } from '../../core/plan.js';
import { printable } from '../../core/printable.js';
import type { Summary } from '../../core/run-summary.js';
import { csvCell, renderCsv } from '../../report/report-csv.js';
import { FIXTURES, ROOT } from '../helpers/repo.js';

/** Anything that could act on a terminal: C0 but newline, DEL, C1, bidi and other format characters. */
const RAW_CONTROL = /(?!\n)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

function plan(overPath: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return {
    name: 'p',
    defaults: {
      client: { instanceId: 'i-1', region: 'ap-northeast-1' },
      probes: [{ kind: 'tcp-connect', count: 10 }],
    },
    paths: [{ id: 'A', target: { host: '10.0.0.1', port: 7000 }, ...overPath }],
    ...extra,
  };
}

describe('CSV cells a spreadsheet would run (OWASP CSV injection)', () => {
  it.each([
    [' =HYPERLINK("http://evil","x")', `"' =HYPERLINK(""http://evil"",""x"")"`],
    ['\t=1+1', "'\t=1+1"],
    ['\r=1+1', `"'\r=1+1"`],
    ['\u00a0@SUM(A1)', "'\u00a0@SUM(A1)"],
    ['\uff1d1+1', "'\uff1d1+1"],
    ['\u3000+1', "'\u3000+1"],
  ])('neutralizes %j', (text, cell) => {
    expect(csvCell(text)).toBe(cell);
  });

  it('a label that is a formula reaches summary.csv neutralized', () => {
    const summary = JSON.parse(readFileSync(join(FIXTURES, 'summary-full.json'), 'utf8')) as Summary;
    summary.paths[0].label = ' =cmd|" /C calc"!A0';
    const row = renderCsv(summary).split('\n')[1];
    expect(row).toContain(`"' =cmd|"" /C calc""!A0"`);
    expect(row).not.toMatch(/,\s*=/);
  });
});

describe('terminal escape sequences in messages that echo the plan', () => {
  it('printable output of JSON is still the same JSON', () => {
    const value = { label: 'a\u202eb\u200b', note: 'x\u009by', astral: '\u{E0001}' };
    expect(JSON.parse(printable(JSON.stringify(value, null, 2)))).toEqual(value);
  });

  it('printable escapes ESC, CSI (C1), bidi and zero-width characters and keeps newlines', () => {
    expect(printable('a\u001b[2Jb\u009b31m\u202eX\u200b\nnext')).toBe('a\\u001b[2Jb\\u009b31m\\u202eX\\u200b\nnext');
  });

  it('quoted values carry no raw control character', () => {
    expect(quoted('\u009b2J\u202e')).not.toMatch(RAW_CONTROL);
  });

  it('every problem of a hostile plan is free of raw control characters', () => {
    const hostile = plan(
      {
        target: { host: '\u009b]0;owned\u202e', port: 7000 },
        '\u001b[2Jtypo': 1,
        '\u202eevil': 2,
        label: 'x\u009b2J',
      },
      { name: '\u001b[31mred' },
    );
    const r = parsePlan(hostile);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.length).toBeGreaterThanOrEqual(4);
    for (const p of r.problems) expect(p).not.toMatch(RAW_CONTROL);
    expect(r.problems.join('\n')).toContain('unknown field "\\u001b[2Jtypo"');
    expect(r.problems.join('\n')).toContain('unknown field "\\u202eevil"');
  });

  it('invalid JSON with escapes is reported without them', () => {
    const r = parsePlanText('{"name": \u001b[2J\u009b1m}');
    expect(r.ok).toBe(false);
    if (!r.ok) for (const p of r.problems) expect(p).not.toMatch(RAW_CONTROL);
  });

  it('the CLI prints a hostile plan file error without raw control characters', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pathbench-hostile-'));
    try {
      const file = join(dir, 'plan.json');
      writeFileSync(file, JSON.stringify(plan({ label: 'evil\u202eexe', '\u001b[2J': true })));
      const cli = join(ROOT, 'cli/pathbench.mjs');
      const r = spawnSync(process.execPath, [cli, 'run', '--plan', file, '--data', join(dir, 'data')], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/paths\[0\]\.label: expected label of plain text, got U\+202E at position 5/);
      expect(r.stderr).not.toMatch(RAW_CONTROL);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('invisible and bidi characters in free text are refused, naming the field', () => {
  it.each([
    ['RIGHT-TO-LEFT OVERRIDE', 'Tokyo\u202egnp.exe', 'U+202E at position 6'],
    ['FIRST STRONG ISOLATE', '\u2068Osaka', 'U+2068 at position 1'],
    ['ZERO WIDTH SPACE', 'A\u200bB', 'U+200B at position 2'],
    ['LINE SEPARATOR', 'A\u2028B', 'U+2028 at position 2'],
    ['C1 CSI', 'A\u009b2J', 'U+009B at position 2'],
  ])('label with %s', (_what, label, where) => {
    const r = parsePlan(plan({ label }));
    expect(r).toEqual({
      ok: false,
      problems: [
        `paths[0].label: expected label of plain text, got ${where}: a control, bidirectional or invisible formatting character`,
      ],
    });
  });

  it('skip reasons too', () => {
    const r = parsePlan(plan({ skipProbes: [{ probe: 'tcp-connect', reason: 'no \u001b[31m' }] }));
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.problems).toEqual([
        expect.stringMatching(/^paths\[0\]\.skipProbes\[0\]\.reason: expected reason of plain text, got U\+001B/),
      ]);
  });

  it('plain non-Latin labels stay accepted', () => {
    expect(parsePlan(plan({ label: '東京 → 大阪 (TGW)' })).ok).toBe(true);
    expect(parsePlan(plan({ label: 'עברית label' })).ok).toBe(true);
  });
});
