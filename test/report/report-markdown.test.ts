/**
 * summary.md and summary.csv of a summary whose every free text is hostile: each string field
 * the summary schema accepts any text in (walked, not listed by hand) is set to Markdown and HTML
 * that would link, embed, inject a heading or split a table, and the rendering must carry it
 * only as text.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Summary, summarySchema } from '../../core/run-summary.js';
import { renderCsv } from '../../report/report-csv.js';
import { mdText, renderMarkdown } from '../../report/report-markdown.js';
import { FIXTURES } from '../helpers/repo.js';

const HOSTILE =
  '<script>alert(1)</script> [click](javascript:alert(1)) ![x](https://evil.example/p.png) ' +
  '<img src=https://evil.example/i.png> <https://evil.example> **b** `c` _e_ ~~s~~ | cell \\| &#106;avascript:x ' +
  '\n# heading\n[ref]: javascript:alert(2)\r\n| a | b |\u001b[31m\u202e\u2028end';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Every string leaf's path in `v`. */
function stringPaths(v: Json, at: (string | number)[] = []): (string | number)[][] {
  if (typeof v === 'string') return [at];
  if (Array.isArray(v)) return v.flatMap((x, i) => stringPaths(x, [...at, i]));
  if (v && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => stringPaths(x, [...at, k]));
  return [];
}

function setAt(root: Json, path: (string | number)[], value: string): void {
  let o = root as Record<string | number, Json>;
  for (const k of path.slice(0, -1)) o = o[k] as Record<string | number, Json>;
  o[path[path.length - 1]] = value;
}

/** The full fixture plus every kind of free text a summary carries: notes, errors, skips, regressions. */
function base(): Json {
  const s = JSON.parse(readFileSync(join(FIXTURES, 'summary-full.json'), 'utf8'));
  s.notes = ['run note'];
  s.runShifts = [
    {
      probe: 'tcp-connect',
      metric: 'connect_rtt_ms',
      unit: 'ms',
      percentile: 'p50',
      shift_pct: 31,
      usual_pct: [-4, 5],
      paths: 3,
      reference: 'A',
    },
  ];
  s.regressions = [
    {
      path: 'C',
      probe: 'tcp-connect',
      metric: 'connect_rtt_ms',
      unit: 'ms',
      percentile: 'p50',
      value: 9.858,
      ci95: [9.83, 9.88],
      baseline: 8.857,
      band: [8.414, 9.3],
      runsInBaseline: 5,
      change_pct: 11.3,
      direction: 'regression',
    },
  ];
  Object.assign(s.paths[1], {
    status: 'failed',
    failedStep: 'Probe',
    error: 'probe failed',
    notes: ['path note'],
    skipped: [{ probe: 'http', reason: 'skip reason' }],
  });
  return s;
}

/** The paths of the fixture's free-text fields: those the schema accepts any text in (not an enum: a status, a verdict). */
const FIELDS: (string | number)[][] = (() => {
  const s = base();
  return stringPaths(s).filter((path) => {
    const trial: Json = structuredClone(s);
    setAt(trial, path, HOSTILE);
    return summarySchema.safeParse(trial).success;
  });
})();

/** The fixture with every free-text field set to `text(i)` (i: the field's index); the fields' names. */
function withText(text: (i: number) => string): { s: Summary; fields: string[] } {
  const s = base();
  for (const [i, path] of FIELDS.entries()) setAt(s, path, text(i));
  return { s: summarySchema.parse(s), fields: FIELDS.map((p) => p.join('.')) };
}

/**
 * What in a Markdown text acts as syntax, line by line: the characters mdText always escapes,
 * when not escaped, and `](` (a link or image). Escapes, the three entities mdText writes and the
 * inside of code spans (where nothing acts) are taken out first.
 */
function syntax(md: string): string[] {
  return md.split('\n').map((line) =>
    line
      .replace(/\\[\s\S]/g, '')
      .replace(/`[^`]*`/g, '``')
      .replace(/&(amp|lt|gt);/g, '')
      .replace(/\]\(/g, '§')
      .replace(/[^|*`~<>&§_]/g, ''),
  );
}

describe('summary.md carries every free text of the summary as text', () => {
  const hostile = withText((i) => `${HOSTILE} ⟦${i}⟧`);
  const plain = withText(() => 'x');
  const md = renderMarkdown(hostile.s);

  it('walks the fields that reach the reports: ids, labels, notes, errors, skip reasons, plan name', () => {
    for (const f of [
      'runId',
      'planName',
      'notes.0',
      'paths.1.id',
      'paths.1.label',
      'paths.1.error',
      'paths.1.failedStep',
      'paths.1.notes.0',
      'paths.1.skipped.0.probe',
      'paths.1.skipped.0.reason',
      'paths.0.results.0.probe',
      'paths.0.results.0.flags.0',
      'runShifts.0.reference',
      'regressions.0.path',
    ])
      expect(hostile.fields).toContain(f);
  });

  it('each reaches summary.md, escaped', () => {
    for (const f of ['runId', 'planName', 'notes.0', 'paths.1.error', 'paths.1.notes.0', 'paths.1.skipped.0.reason']) {
      const i = hostile.fields.indexOf(f);
      expect(md, f).toContain(`⟦${i}⟧`);
    }
    expect(md).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(md).toContain('[click\\](javascript:alert(1))');
  });

  it('adds no line, link, image, HTML, code span, emphasis or table cell of its own', () => {
    expect(syntax(md)).toEqual(syntax(renderMarkdown(plain.s)));
    const raw = /<(script|img|https?:)/i.exec(md);
    expect(raw && md.slice(raw.index - 200, raw.index + 50)).toBeNull();
    expect(md).not.toMatch(/^(# heading|\[ref\]:|\| a \|)/m);
    expect(md.replace(/\n/g, '')).not.toMatch(/[\p{Cc}\u202e\u2028]/u);
  });

  it('mdText leaves ordinary text readable', () => {
    expect(mdText('connect_rtt_ms [ms] 0.210 [0.209–0.211] thin-tail:p99')).toBe(
      'connect_rtt_ms [ms] 0.210 [0.209–0.211] thin-tail:p99',
    );
    expect(mdText('_a_ *b* a|b `c` <d> & [e](f)')).toBe('\\_a\\_ \\*b\\* a\\|b \\`c\\` &lt;d&gt; &amp; [e\\](f)');
  });
});

/** RFC 4180 cells of one CSV text (quoted cells may hold commas, quotes and newlines). */
function csvCells(csv: string): string[] {
  const cells: string[] = [];
  let i = 0;
  while (i < csv.length) {
    if (csv[i] === '"') {
      let cell = '';
      i++;
      for (;;) {
        const q = csv.indexOf('"', i);
        cell += csv.slice(i, q);
        i = q + 1;
        if (csv[i] === '"') {
          cell += '"';
          i++;
        } else break;
      }
      cells.push(cell);
      i++;
    } else {
      const m = /[,\n]/.exec(csv.slice(i));
      const end = m ? i + m.index : csv.length;
      cells.push(csv.slice(i, end));
      i = end + 1;
    }
  }
  return cells;
}

describe('summary.csv runs no free text as a formula', () => {
  for (const lead of ['=', '+', '-', '@', '\t', ' =', '\uff1d']) {
    it(`every text starting with ${JSON.stringify(lead)} is shown, not run`, () => {
      const { s, fields } = withText((i) => `${lead}HYPERLINK("https://evil.example/?${i}","x")`);
      const cells = csvCells(renderCsv(s));
      const hits = cells.filter((c) => c.includes('HYPERLINK'));
      // Ids, labels, probes, flags and units all reach the CSV.
      expect(hits.length).toBeGreaterThan(10);
      for (const c of hits) expect(c.startsWith(`'${lead}`), c).toBe(true);
      expect(fields).toContain('paths.0.label');
    });
  }
});
