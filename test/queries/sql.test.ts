/** queries/ and the loader: column source of truth, placeholders, and portability rules. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { HiveSQL, TrinoSQL } from 'dt-sql-parser';
import { describe, expect, it } from 'vitest';
import { PERCENTILES } from '../../core/stats.js';
import { loadQuery, QueryFileError, queryNames, samplesColumns } from '../../queries/sql.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const QUERIES_DIR = path.join(ROOT, 'queries');

function sqlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sqlFiles(path.join(dir, e.name)) : e.name.endsWith('.sql') ? [path.join(dir, e.name)] : [],
  );
}

/** SQL text without comments, so rules apply to what the engines execute. */
const code = (sql: string) => sql.replace(/--[^\n]*/g, '');

describe('samplesColumns', () => {
  it('reads the data and partition columns out of samples.ddl.sql', () => {
    const { columns, partitions } = samplesColumns();
    expect(columns).toEqual([
      { name: 'run_id', type: 'string' },
      { name: 'path_id', type: 'string' },
      { name: 'probe', type: 'string' },
      { name: 'kind', type: 'string' },
      { name: 'trial', type: 'int' },
      { name: 'seq', type: 'bigint' },
      { name: 't_start', type: 'double' },
      { name: 't_end', type: 'double' },
      { name: 'metric', type: 'string' },
      { name: 'value', type: 'double' },
      { name: 'unit', type: 'string' },
      { name: 'ok', type: 'boolean' },
      { name: 'error', type: 'string' },
      { name: 'clock', type: 'string' },
      { name: 'flag', type: 'string' },
      { name: 'ts_source', type: 'string' },
      { name: 'host_us', type: 'double' },
      { name: 'one_way_fwd_us', type: 'double' },
      { name: 'one_way_rev_us', type: 'double' },
      { name: 'clock_error_us', type: 'double' },
    ]);
    expect(partitions).toEqual([
      { name: 'path', type: 'string' },
      { name: 'run', type: 'string' },
    ]);
  });

  it('agrees with the raw DDL text column by column', () => {
    // Independent check: every "name type," line between the parentheses of the raw file.
    const raw = readFileSync(path.join(ROOT, 'queries', 'samples.ddl.sql'), 'utf8');
    const body = raw.slice(raw.indexOf('samples (') + 'samples ('.length, raw.indexOf('\n)'));
    const names = body
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '')
      .map((l) => l.split(/\s+/)[0]);
    const { columns } = samplesColumns();
    expect(columns.map((c) => c.name)).toEqual(names);
  });

  it('the raw JSONL table has the same columns and types', () => {
    const raw = readFileSync(path.join(ROOT, 'queries', 'samples_jsonl.ddl.sql'), 'utf8');
    const body = raw.slice(raw.indexOf('samples_jsonl (') + 'samples_jsonl ('.length, raw.indexOf('\n)'));
    const cols = body
      .split('\n')
      .map((l) => l.trim().replace(/,$/, ''))
      .filter((l) => l !== '')
      .map((l) => {
        const [name, type] = l.split(/\s+/);
        return { name, type };
      });
    expect(cols).toEqual(samplesColumns().columns);
  });
});

describe('loadQuery', () => {
  it('reads nothing from disk: the working directory does not matter', () => {
    const cwd = process.cwd();
    process.chdir(path.join(ROOT, 'functions'));
    try {
      expect(loadQuery('flags')).toMatch(/^SELECT/);
    } finally {
      process.chdir(cwd);
    }
  });

  it('drops the header comment and trailing semicolon, keeps the statement', () => {
    const ddl = loadQuery('samples.ddl');
    expect(ddl).toMatch(/^CREATE EXTERNAL TABLE IF NOT EXISTS \$\{database\}\.samples \(/);
    expect(ddl).not.toMatch(/;\s*$/);
    expect(loadQuery('views/credit_flagged_intervals')).toMatch(/^CREATE OR REPLACE VIEW credit_flagged_intervals AS/);
  });

  it('fills dollar-brace placeholders and refuses missing or unsafe values', () => {
    const ddl = loadQuery('samples.ddl', { database: 'pathbench', location: 's3://bucket/samples/' });
    expect(ddl).toContain('CREATE EXTERNAL TABLE IF NOT EXISTS pathbench.samples (');
    expect(ddl).toContain("LOCATION 's3://bucket/samples/'");
    expect(ddl).not.toContain('${');
    expect(() => loadQuery('samples.ddl', { database: 'x' })).toThrow(/no value for \$\{location\}/);
    expect(() => loadQuery('samples.ddl', { database: 'x', location: "s3://b/'; DROP" })).toThrow(QueryFileError);
  });

  it('rejects bad names and missing files with one-line errors', () => {
    expect(() => loadQuery('../package')).toThrow(/bad query name/);
    expect(() => loadQuery('/etc/passwd')).toThrow(/bad query name/);
    expect(() => loadQuery('nope')).toThrow('query file not found: queries/nope.sql');
    // A name that is a property of every object is still no query.
    expect(() => loadQuery('constructor')).toThrow('query file not found: queries/constructor.sql');
    expect(queryNames()).toContain('views/credit_flagged_intervals');
  });
});

describe('portability rules for queries/', () => {
  const files = sqlFiles(QUERIES_DIR);

  it('finds the SQL files', () => {
    const rel = files.map((f) => path.relative(QUERIES_DIR, f)).sort();
    expect(rel).toEqual(
      expect.arrayContaining([
        'flags.sql',
        'percentiles.sql',
        'samples.ddl.sql',
        path.join('views', 'credit_flagged_intervals.sql'),
      ]),
    );
  });

  it('percentiles.sql uses exact integer ranks: no approx_percentile, no double p', () => {
    const sql = readFileSync(path.join(QUERIES_DIR, 'percentiles.sql'), 'utf8');
    expect(sql.toLowerCase()).not.toContain('approx_percentile');
    expect(code(sql).toLowerCase()).not.toMatch(/percentile_(cont|disc)|quantile|median/);
    // no fractional literal such as 0.95 or .99 anywhere, comments included
    expect(sql).not.toMatch(/(^|[^0-9a-z_])\d*\.\d+/i);
    // no sort of the samples and no array: one GROUP BY tallies each distinct value, and the
    // only ordering is the running count over those tallies
    expect(code(sql)).not.toMatch(/ORDER BY value|array_agg|array_sort|rank\(\)|row_number/i);
    expect(code(sql).match(/FROM samples/g)).toHaveLength(1);
    expect(code(sql).match(/ORDER BY good_value ASC NULLS LAST/g)).toHaveLength(2);
    // one integer rank per percentile the JS reference computes and subset: ceil(k n / 1000)
    // with the remainder taken off before dividing, and the least value whose running count reaches it
    for (const subset of ['all', 'unflagged']) {
      for (const { column, perMille: k } of PERCENTILES) {
        const r = `r${column.slice(1)}_${subset}`;
        expect(code(sql)).toContain(
          `CAST((${k} * n_${subset} + 999 - ((${k} * n_${subset} + 999) % 1000)) / 1000 AS BIGINT) AS ${r}`,
        );
        const cum = subset === 'all' ? 'cum' : 'cum_unflagged';
        expect(code(sql)).toMatch(
          new RegExp(
            `MIN\\(CASE WHEN [^)]*good_value IS NOT NULL AND ${cum} >= ${r} THEN good_value END\\) AS ${column}_${subset}`,
          ),
        );
      }
    }
    expect(code(sql)).not.toMatch(/value_rank|permille|SELECT \*/);
    expect(code(sql)).not.toMatch(/ \/ (?!CAST|1000)/);
    for (const { column } of PERCENTILES)
      expect(code(sql)).toContain(
        `CASE WHEN subset = 'all' THEN ${column}_all ELSE ${column}_unflagged END AS ${column}`,
      );
  });

  it('every file holds one statement with one positional parameter at most, and no engine-only syntax', () => {
    for (const f of files) {
      const sql = code(readFileSync(f, 'utf8'));
      const name = path.relative(QUERIES_DIR, f);
      expect(sql.replace(/;\s*$/, ''), name).not.toContain(';');
      // counted in the raw text: a "?" inside a comment could be taken for a parameter
      expect((readFileSync(f, 'utf8').match(/\?/g) ?? []).length, name).toBeLessThanOrEqual(1);
      // DuckDB-only: "//" integer division, "::" casts, QUALIFY, IF NOT EXISTS on a view
      expect(sql, name).not.toMatch(/\/\/|::|\bqualify\b|create\s+view\s+if\s+not\s+exists/i);
    }
  });
  it("parses with Trino's grammar (the DDL with Hive's, Athena's DDL dialect), and the check catches DuckDB-only syntax", () => {
    // dt-sql-parser's ANTLR grammars; "${name}" placeholders are filled with a plain identifier first.
    const trino = new TrinoSQL();
    const hive = new HiveSQL();
    const fill = (sql: string) => sql.replace(/\$\{(\w+)\}/g, 'x_$1');
    for (const f of files) {
      const name = path.relative(QUERIES_DIR, f);
      const parser = name.endsWith('.ddl.sql') ? hive : trino;
      expect(parser.validate(fill(readFileSync(f, 'utf8'))), name).toEqual([]);
    }
    for (const bad of ['SELECT a // 2 FROM t', 'SELECT x::int FROM t', 'SELECT list_filter(l, lambda x: x > 1) FROM t'])
      expect(trino.validate(bad).length, bad).toBeGreaterThan(0);
  });
});
