/** queries/sql-text.ts is generated from the .sql files under queries/: it must hold exactly their text. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SQL_TEXT } from '../../queries/sql-text.js';

const QUERIES_DIR = fileURLToPath(new URL('../../queries/', import.meta.url));

function sqlFiles(dir: string, prefix = ''): [string, string][] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e): [string, string][] =>
    e.isDirectory()
      ? sqlFiles(path.join(dir, e.name), `${prefix}${e.name}/`)
      : e.name.endsWith('.sql')
        ? [[`${prefix}${e.name.slice(0, -4)}`, readFileSync(path.join(dir, e.name), 'utf8')]]
        : [],
  );
}

describe('queries/sql-text.ts', () => {
  it('holds the text of every .sql file and nothing else (else run: npx tsx scripts/sql-text-module.ts)', () => {
    const files = Object.fromEntries(sqlFiles(QUERIES_DIR));
    expect(Object.keys(files).length).toBeGreaterThan(10);
    expect(Object.keys(SQL_TEXT).sort()).toEqual(Object.keys(files).sort());
    for (const [name, text] of Object.entries(files)) expect(SQL_TEXT[name], `queries/${name}.sql`).toBe(text);
  });
});
