/**
 * `pathbench sql "<query>"`: one SQL statement over the measurements, with the tables the
 * analysts' examples use (docs/data.md): `samples`, `samples_jsonl`, `runs`, `paths` and the
 * views of queries/views/. Locally DuckDB over the data directory; with `--aws` Athena
 * (workgroup and database `pathbench`) over the deployed pipeline's bucket. Prints a table, or
 * CSV (`--csv`) or a JSON array (`--json`); bad SQL is one line on stderr and exit 2.
 * `pathbench tables backfill` writes the `runs` and `paths` rows of runs summarized before those
 * tables existed.
 */
import type { Command } from 'commander';
import { printable } from '../../core/printable.js';
import { type BackfillOutcome, backfillRunTables } from '../../functions/pipeline/run-tables.js';
import type { ObjectStore, QueryEngine } from '../../functions/ports.js';
import { DEFAULT_DATA_DIR } from '../../local/local-driver.js';
import { csvCell } from '../../report/report-csv.js';
import { textTable } from '../../report/report-text.js';
import { guarded } from '../aws/aws-errors.js';
import { commonOptions } from '../aws/stack-config.js';
import { ParquetCliError, type ParquetFlags, parquetTarget } from './parquet.command.js';

export interface SqlFlags extends ParquetFlags {
  csv?: boolean;
  json?: boolean;
}

type Row = Record<string, unknown>;

/** A cell as text: null as empty, numbers as JavaScript prints them, objects as JSON. */
function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** The rows in the chosen format; the columns are the first row's (every row has the same). */
export function formatRows(rows: Row[], format: 'table' | 'csv' | 'json'): string {
  if (format === 'json') return `${JSON.stringify(rows, null, 2)}\n`;
  const head = rows.length > 0 ? Object.keys(rows[0]) : [];
  if (format === 'csv') {
    if (head.length === 0) return '';
    return `${[head, ...rows.map((r) => head.map((h) => r[h]))].map((r) => r.map(csvCell).join(',')).join('\n')}\n`;
  }
  if (head.length === 0) return '(no rows)\n';
  const numeric = head.map((h) => rows.every((r) => r[h] === null || typeof r[h] === 'number'));
  const lines = textTable(
    head,
    rows.map((r) => head.map((h) => cellText(r[h]))),
    (i) => numeric[i],
  );
  return `${lines.join('\n')}\n(${rows.length} row${rows.length === 1 ? '' : 's'})\n`;
}

/** Run the statement on the engine and print its rows; returns the exit code. */
export async function runSqlOn(
  sql: string,
  query: Pick<QueryEngine, 'query'>,
  format: 'table' | 'csv' | 'json',
  out: (text: string) => void,
): Promise<number> {
  const rows = await query.query(sql, [], 'sql');
  out(printable(formatRows(rows, format)));
  return 0;
}

/** The command: flags checked, the engine opened (DuckDB or Athena), the statement run. */
export async function runSql(
  sql: string,
  o: SqlFlags,
  env: Record<string, string | undefined>,
  out: (text: string) => void,
): Promise<number> {
  if (o.csv && o.json) throw new ParquetCliError('--csv and --json: choose one');
  if (sql.trim() === '') throw new ParquetCliError('no SQL given: pathbench sql "SELECT …"');
  const target = await parquetTarget(o, env);
  try {
    return await runSqlOn(sql, target.query, o.csv ? 'csv' : o.json ? 'json' : 'table', out);
  } finally {
    await target.close();
  }
}

export function registerSql(program: Command): void {
  commonOptions(
    program
      .command('sql')
      .description('run one SQL statement over the measurements (samples, runs, paths and the views)')
      .argument('<query>', 'the SQL, quoted as one argument')
      .option('--data <dir>', 'data directory', DEFAULT_DATA_DIR)
      .option('--aws', "in Athena over the deployed pipeline's data (workgroup pathbench)")
      .option('--csv', 'print CSV')
      .option('--json', 'print a JSON array of rows'),
  ).action((query: string, o: SqlFlags) =>
    guarded(() => runSql(query, o, process.env, (t) => process.stdout.write(t))),
  );
}

/** One run's line of `tables backfill`. */
function backfillLine(runId: string, o: BackfillOutcome): string {
  const rows = (n: number) => `runs 1 row, paths ${n} row${n === 1 ? '' : 's'}`;
  if (o.kind === 'written') return `  ${runId}: written (${rows(o.paths)})\n`;
  if (o.kind === 'would write') return `  ${runId}: would write (${rows(o.paths)})\n`;
  if (o.kind === 'present') return `  ${runId}: has its rows\n`;
  return `  ${runId}: skipped: ${o.why}\n`;
}

/** `tables backfill` on a store: a line per run as it is done, then the totals; the exit code. */
export async function backfillTablesOn(
  store: ObjectStore,
  dryRun: boolean,
  out: (text: string) => void,
): Promise<number> {
  out(`${dryRun ? 'would backfill' : 'backfilling'} the runs and paths tables in ${store.location}\n`);
  const t = await backfillRunTables(store, (runId, o) => out(printable(backfillLine(runId, o))), { dryRun });
  out(
    `${t.runs} summarized run${t.runs === 1 ? '' : 's'}: ${t.written} ${dryRun ? 'to write' : 'written'}, ${t.present} had their rows, ${t.skipped} skipped\n`,
  );
  return t.skipped > 0 ? 1 : 0;
}

export function registerTables(program: Command): void {
  const tables = program.command('tables').description('the runs and paths tables (docs/data.md)');
  commonOptions(
    tables
      .command('backfill')
      .description('write the runs and paths rows of runs summarized before those tables existed')
      .option('--data <dir>', 'data directory', DEFAULT_DATA_DIR)
      .option('--aws', "in the deployed pipeline's bucket")
      .option('--dry-run', 'say what would be written, write nothing'),
  ).action((o: ParquetFlags & { dryRun?: boolean }) =>
    guarded(async () => {
      const target = await parquetTarget(o, process.env);
      try {
        return await backfillTablesOn(target.store, !!o.dryRun, (t) => process.stdout.write(t));
      } finally {
        await target.close();
      }
    }),
  );
}
