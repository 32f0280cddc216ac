/**
 * Reading JSON checked: a document that is not JSON, or not of its schema, fails naming where it
 * was and the first wrong field; and no source outside test/ casts what JSON.parse returned.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DocumentInvalidError } from '../../core/errors.js';
import { checkDocument, jsonNumber, parseDocument, readStored } from '../../core/stored-document.js';
import { DirStore } from '../../local/dir-store.js';
import { ROOT } from '../helpers/repo.js';

const schema = z.object({
  name: z.string(),
  items: z.array(z.object({ kind: z.enum(['a', 'b']), n: z.number() })),
  ratio: jsonNumber.optional(),
});

describe('parseDocument / checkDocument', () => {
  it('returns the document, typed', () => {
    expect(parseDocument('k.json', '{"name":"x","items":[{"kind":"a","n":1}]}', schema, 'thing')).toEqual({
      name: 'x',
      items: [{ kind: 'a', n: 1 }],
    });
  });

  it('names where the text was when it is not JSON', () => {
    expect(() => parseDocument('runs/run=r1/x.json', '{"name":', schema, 'thing')).toThrow(
      /^runs\/run=r1\/x\.json is not valid JSON \(.+\): not a readable thing$/,
    );
  });

  it('names where and the first wrong field in document order, and how many more there are', () => {
    const doc = {
      name: 'x',
      items: [
        { kind: 'a', n: 1 },
        { kind: 'c', n: 'two' },
      ],
    };
    let error: unknown;
    try {
      checkDocument('runs/run=r1/x.json', doc, schema, 'thing');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DocumentInvalidError);
    expect((error as Error).message).toBe(
      'runs/run=r1/x.json is not a valid thing: items[1].kind: expected "a" or "b", got "c" (and 1 more problem)',
    );
    expect(() => checkDocument('k', { items: [] }, schema, 'thing')).toThrow('k is not a valid thing: name: required');
    expect(() => checkDocument('k', [1], schema, 'thing')).toThrow(
      'k is not a valid thing: document: expected object, got array',
    );
  });

  it('reads back a NaN or infinity JSON.stringify wrote as null', () => {
    const written = JSON.stringify({ name: 'x', items: [], ratio: 0 / 0 });
    expect(parseDocument('k', written, schema, 'thing').ratio).toBeNaN();
  });
});

describe('readStored', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('is undefined for an absent key, the checked document for a present one', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'pb-stored-'));
    dirs.push(dir);
    const store = new DirStore(dir);
    expect(await readStored(store, 'a/doc.json', schema, 'thing')).toBeUndefined();
    await store.put('a/doc.json', '{"name":"x","items":[]}');
    expect(await readStored(store, 'a/doc.json', schema, 'thing')).toEqual({ name: 'x', items: [] });
    await store.put('a/doc.json', '{"name":3,"items":[]}');
    await expect(readStored(store, 'a/doc.json', schema, 'thing')).rejects.toThrow(
      'a/doc.json is not a valid thing: name: expected string, got number',
    );
  });
});

// ---------------------------------------------------------------------------------------------
// No `JSON.parse(…) as T` outside test/: what JSON.parse returns is parsed with a schema.

/** Where a call's closing parenthesis is, from its opening one; quotes skipped (regex literals are not). */
function closingParen(text: string, open: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return -1;
}

/** The lines of `source` where JSON.parse's result is cast: `JSON.parse(…) as T` or `<T>JSON.parse(…)`. */
function jsonParseCasts(source: string): number[] {
  const lines: number[] = [];
  const call = /JSON\.parse\(/g;
  for (let m = call.exec(source); m; m = call.exec(source)) {
    const close = closingParen(source, m.index + 'JSON.parse'.length);
    const after = close < 0 ? '' : source.slice(close + 1);
    const before = source.slice(Math.max(0, m.index - 80), m.index);
    if (/^\s*as\b/.test(after) || /<[A-Z][\w<>[\]{}|&,.:;?\s]*>\s*$/.test(before))
      lines.push(source.slice(0, m.index).split('\n').length);
  }
  return lines;
}

/** Every TypeScript source of the repository outside test/ (and what is not ours: dependencies, builds). */
function sources(dir = ROOT): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.') || ['node_modules', 'dist', 'cdk.out', 'test'].includes(e.name)) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(p));
    else if (/\.[cm]?ts$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

describe('JSON.parse results are parsed with a schema, never cast', () => {
  it('finds the casts it looks for (and not what merely follows a parse)', () => {
    expect(jsonParseCasts('const a = JSON.parse(text) as Manifest;')).toEqual([1]);
    expect(jsonParseCasts('x\nconst a = (JSON.parse(\n  read(f, "(")\n) as unknown as T).y;')).toEqual([2]);
    expect(jsonParseCasts('const a = <Manifest>JSON.parse(text);')).toEqual([1]);
    expect(jsonParseCasts("const a = schema.parse(JSON.parse(text.replace(')', ''))) as const;")).toEqual([]);
    expect(jsonParseCasts('const a: unknown = JSON.parse(text);\nconst assigned = 1;')).toEqual([]);
    expect(jsonParseCasts('if (n > JSON.parse(text)) x();')).toEqual([]);
  });

  it('no source outside test/ casts what JSON.parse returned', () => {
    const files = sources().map((f) => path.relative(ROOT, f).split(path.sep).join('/'));
    expect(files).toContain('core/stored-document.ts');
    const found = files.flatMap((f) =>
      jsonParseCasts(readFileSync(path.join(ROOT, f), 'utf8')).map((line) => `${f}:${line}`),
    );
    expect(found).toEqual([]);
  });
});
