/**
 * The SQL of queries/ (the only place SQL lives) and the samples column list read out of
 * queries/samples.ddl.sql, so the Glue table and the DuckDB view share one definition.
 */
import { PathbenchError } from '../core/errors.js';
// The .sql files' text as a generated module (scripts/sql-text-module.ts), not files read at run
// time: tsx, vitest and esbuild import it alike, and a Lambda bundle needs nothing beside it.
import { SQL_TEXT } from './sql-text.js';

/** Thrown when a query name is malformed or unknown, or a template value is unsafe. */
export class QueryFileError extends PathbenchError {}

const QUERY_NAME = /^[a-z0-9_]+(?:[./][a-z0-9_]+)*$/;

/** Every query's loadQuery name, sorted ("percentiles", "samples.ddl", "views/credit_flagged_intervals"). */
export function queryNames(): string[] {
  return Object.keys(SQL_TEXT);
}

/**
 * The statement of `queries/<name>.sql` (e.g. `percentiles`, `samples.ddl`, `views/credit_flagged_intervals`).
 *
 * Returns the statement as it should be sent: leading comment lines and a trailing `;` are
 * dropped, because Athena decides DDL vs DML by the first keyword and rejects a trailing `;`.
 * With `vars`, every `${key}` is replaced; a placeholder without a value is an error.
 */
export function loadQuery(name: string, vars?: Record<string, string>): string {
  if (!QUERY_NAME.test(name)) throw new QueryFileError(`bad query name: ${JSON.stringify(name)}`);
  if (!Object.hasOwn(SQL_TEXT, name)) throw new QueryFileError(`query file not found: queries/${name}.sql`);
  const lines = SQL_TEXT[name].split('\n');
  while (lines.length > 0 && (lines[0].trim() === '' || lines[0].trim().startsWith('--'))) lines.shift();
  let sql = lines.join('\n').trim().replace(/;\s*$/, '');
  if (vars) {
    sql = sql.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, key: string) => {
      const value = vars[key];
      if (value === undefined) throw new QueryFileError(`queries/${name}.sql: no value for \${${key}}`);
      // Values end up inside identifiers or quoted literals; refuse anything that could escape them.
      if (/['"`;\\\n]/.test(value)) throw new QueryFileError(`unsafe value for \${${key}}: ${JSON.stringify(value)}`);
      return value;
    });
  }
  return sql;
}

/** A column as declared in the DDL, with its Hive/Glue type name (string, int, double, boolean …). */
export interface SqlColumn {
  name: string;
  type: string;
}

export interface SamplesColumns {
  /** Data columns, in DDL order: the keys of a sample record (both tables, JSONL and Parquet). */
  columns: SqlColumn[];
  /** Partition columns (path, run): taken from the object key, not from the record. */
  partitions: SqlColumn[];
}

function parseColumnList(list: string, where: string, file = 'samples.ddl.sql'): SqlColumn[] {
  return list
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => {
      // Plain scalar types only (string, int, double, boolean …): enough for samples, and simple.
      const m = /^`?([A-Za-z_][A-Za-z0-9_]*)`?\s+([A-Za-z]+)$/.exec(part);
      if (!m) throw new QueryFileError(`${file}: cannot read column ${JSON.stringify(part)} in ${where}`);
      return { name: m[1], type: m[2].toLowerCase() };
    });
}

/** Remove `-- …` comments so column lists may carry them. */
function stripComments(sql: string): string {
  return sql.replace(/--[^\n]*/g, '');
}

let cachedColumns: SamplesColumns | undefined;

/** The samples table's columns and partition columns, read from queries/samples.ddl.sql. */
export function samplesColumns(): SamplesColumns {
  if (cachedColumns) return cachedColumns;
  const ddl = stripComments(loadQuery('samples.ddl'));
  const table = /\.samples\s*\(([^)]*)\)\s*PARTITIONED\s+BY\s*\(([^)]*)\)/i.exec(ddl);
  if (!table) throw new QueryFileError('samples.ddl.sql: expected "<db>.samples (…) PARTITIONED BY (…)"');
  const columns = parseColumnList(table[1], 'the column list');
  const partitions = parseColumnList(table[2], 'PARTITIONED BY');
  const names = [...columns, ...partitions].map((c) => c.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw new QueryFileError(`samples.ddl.sql: column ${dup} is declared twice`);
  cachedColumns = { columns, partitions };
  return cachedColumns;
}

/** The tables that say what each run and path was (queries/runs.ddl.sql, queries/paths.ddl.sql). */
export const RUN_TABLES = ['runs', 'paths'] as const;
export type RunTable = (typeof RUN_TABLES)[number];

const cachedRunTables = new Map<RunTable, SqlColumn[]>();

/** The columns of `runs` or `paths`, read from its DDL (unpartitioned: one object per run). */
export function runTableColumns(table: RunTable): SqlColumn[] {
  const cached = cachedRunTables.get(table);
  if (cached) return cached;
  const ddl = stripComments(loadQuery(`${table}.ddl`));
  const m = new RegExp(`\\.${table}\\s*\\(([^)]*)\\)\\s*ROW\\s+FORMAT`, 'i').exec(ddl);
  if (!m) throw new QueryFileError(`${table}.ddl.sql: expected "<db>.${table} (…) ROW FORMAT …"`);
  const columns = parseColumnList(m[1], 'the column list', `${table}.ddl.sql`);
  const dup = columns.find((c, i) => columns.findIndex((d) => d.name === c.name) !== i);
  if (dup) throw new QueryFileError(`${table}.ddl.sql: column ${dup.name} is declared twice`);
  cachedRunTables.set(table, columns);
  return columns;
}

/** An analysts' view of queries/views/: its name, its SELECT and its columns. */
export interface ViewDefinition {
  name: string;
  /** The view's query, as after `AS` (what Athena stores as the view's original SQL). */
  select: string;
  /** Its columns in order, with Hive types: from the file's `-- columns:` line. */
  columns: SqlColumn[];
}

/**
 * Every view of queries/views/: each file is `CREATE OR REPLACE VIEW <name> AS <select>` (the
 * named query, and what DuckDB runs locally) with a `-- columns: name type, …` line. The stack
 * makes each one a Glue view, which needs the columns; test/queries/views.test.ts holds the line
 * to DuckDB's own DESCRIBE of the view.
 */
export function viewDefinitions(): ViewDefinition[] {
  return queryNames()
    .filter((n) => n.startsWith('views/'))
    .map((n) => {
      const file = `queries/${n}.sql`;
      const m = /^CREATE\s+OR\s+REPLACE\s+VIEW\s+([a-z_][a-z0-9_]*)\s+AS\s+([\s\S]+)$/i.exec(loadQuery(n));
      if (!m) throw new QueryFileError(`${file}: expected "CREATE OR REPLACE VIEW <name> AS <select>"`);
      if (`views/${m[1]}` !== n) throw new QueryFileError(`${file}: the view is named ${m[1]}, not as its file`);
      const line = /^--\s*columns:\s*(.+)$/m.exec(SQL_TEXT[n]);
      if (!line) throw new QueryFileError(`${file}: no "-- columns: name type, …" line`);
      return { name: m[1], select: m[2].trim(), columns: parseColumnList(line[1], 'the columns line', file) };
    });
}

/** A Hive (Glue) column type as Trino names it, for a view's stored definition. */
export function trinoType(hive: string): string {
  const t = (
    {
      string: 'varchar',
      int: 'integer',
      bigint: 'bigint',
      double: 'double',
      boolean: 'boolean',
      float: 'real',
    } as const
  )[hive as 'string'];
  if (!t) throw new QueryFileError(`no Trino type for the Hive type ${hive}`);
  return t;
}
