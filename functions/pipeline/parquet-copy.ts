/**
 * the Parquet copy of a path's samples: after collect, every JSONL file of one (path, run)
 * partition is read back and written as ONE Parquet file at a fixed key
 * (`parquet/path=<p>/run=<id>/samples.parquet`, keys.parquetCopy). The file is rebuilt
 * whole from the JSONL each time and put over the old one, so a retried collect or a rerun
 * never duplicates rows: the JSONL stays the raw contract, the Parquet file is derived from it.
 *
 * Columns and types come from queries/samples.ddl.sql (samplesColumns): the records' columns,
 * then the rank columns this writer computes (core/sample-ranks.ts); the partition columns
 * (path, run) are not stored in the file, they come from the key as in the JSONL layout. The
 * same code runs on both drivers (docs/data.md says why it is not an Athena INSERT / UNLOAD).
 */
import { ByteWriter, type ColumnSource, ParquetWriter, schemaFromColumnData } from 'hyparquet-writer';
import { CollectError } from '../../core/errors.js';
import { keys } from '../../core/keys.js';
import { SampleRanks } from '../../core/sample-ranks.js';
import { splitLines } from '../../probes/parsing/lines.js';
import { type SqlColumn, samplesColumns } from '../../queries/sql.js';
import type { Deps } from '../ports.js';
import { loadManifest } from './manifest.js';
import { readChunks } from './stream-io.js';

/** Rows per Parquet row group: large enough for good compression, several per file for parallel scans. */
export const ROW_GROUP_ROWS = 100_000;

type Cell = string | number | bigint | boolean | null;

/**
 * Encoding per Parquet type, chosen by measurement (docs/data.md): integers (seq, trial) delta-
 * packed, doubles PLAIN (timestamps and values are mostly distinct, so trying a dictionary only
 * costs time); strings and booleans keep the writer's default (dictionary / RLE). All of these
 * are read by DuckDB and by Athena's Trino Parquet reader.
 */
const ENCODINGS: Partial<Record<string, ColumnSource['encoding']>> = {
  INT32: 'DELTA_BINARY_PACKED',
  INT64: 'DELTA_BINARY_PACKED',
  DOUBLE: 'PLAIN',
};

/** Parquet type for a DDL (Hive) column type; the DDL's scalar types only. */
const PARQUET_TYPES: Record<string, ColumnSource['type']> = {
  string: 'STRING',
  varchar: 'STRING',
  int: 'INT32',
  integer: 'INT32',
  bigint: 'INT64',
  double: 'DOUBLE',
  boolean: 'BOOLEAN',
};

/** One column being filled: values coerced to its type; strings interned so repeats share one copy. */
class ColumnBuilder {
  values: Cell[] = [];
  private readonly strings = new Map<string, string>();
  readonly parquetType: ColumnSource['type'];

  constructor(readonly column: SqlColumn) {
    const t = PARQUET_TYPES[column.type];
    if (!t) throw new CollectError(`samples.ddl.sql: no Parquet type for column ${column.name} (${column.type})`);
    this.parquetType = t;
  }

  /** Drop the values (after a row group is written); the interned strings stay. */
  clear(): void {
    this.values = [];
  }

  push(raw: unknown, where: () => string): void {
    if (raw === undefined || raw === null) {
      this.values.push(null);
      return;
    }
    const bad = (): never => {
      throw new CollectError(
        `${where()}: field ${this.column.name} must be ${this.column.type}, got ${JSON.stringify(raw)}`,
      );
    };
    switch (this.parquetType) {
      case 'STRING': {
        if (typeof raw !== 'string') bad();
        const s = raw as string;
        let shared = this.strings.get(s);
        if (shared === undefined) {
          shared = s;
          this.strings.set(s, s);
        }
        this.values.push(shared);
        return;
      }
      case 'INT32':
        if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < -(2 ** 31) || raw >= 2 ** 31) bad();
        this.values.push(raw as number);
        return;
      case 'INT64':
        if (typeof raw !== 'number' || !Number.isSafeInteger(raw)) bad();
        this.values.push(BigInt(raw as number));
        return;
      case 'DOUBLE':
        if (typeof raw !== 'number') bad();
        this.values.push(raw as number);
        return;
      case 'BOOLEAN':
        if (typeof raw !== 'boolean') bad();
        this.values.push(raw as boolean);
        return;
    }
  }
}

/** Calls `fn` with every record of a JSONL file; see readJsonl and readJsonlStream. */
type RecordSink = (record: Record<string, unknown>, where: () => string) => void;

/**
 * Every record of a JSONL file (its bytes, or its text), line by line. A line that is not a JSON
 * object is an error naming the file and the line. Blank lines are skipped. Bytes are decoded a
 * line at a time, so a large file is never held twice (as bytes and as one string).
 */
function readJsonl(key: string, content: string | Uint8Array, fn: RecordSink): void {
  const bytes =
    typeof content === 'string' ? undefined : Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  const length = bytes ? bytes.length : (content as string).length;
  let start = 0;
  let lineNo = 0;
  while (start < length) {
    let end = bytes ? bytes.indexOf(10, start) : (content as string).indexOf('\n', start);
    if (end < 0) end = length;
    const line = bytes ? bytes.toString('utf8', start, end) : (content as string).slice(start, end);
    start = end + 1;
    lineNo++;
    readLine(key, lineNo, line, fn);
  }
}

/** Every record of a JSONL file as it streams from the store: one line in memory at a time. */
async function readJsonlStream(key: string, chunks: AsyncIterable<Uint8Array | string>, fn: RecordSink) {
  for await (const l of splitLines(chunks)) readLine(key, l.n, l.text, fn);
}

function readLine(key: string, lineNo: number, line: string, fn: RecordSink): void {
  if (line.trim() === '') return;
  const where = () => `${key} line ${lineNo}`;
  let rec: unknown;
  try {
    rec = JSON.parse(line);
  } catch (e) {
    throw new CollectError(`${where()}: not JSON: ${(e as Error).message}`);
  }
  if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) {
    throw new CollectError(`${where()}: a sample record must be a JSON object`);
  }
  fn(rec as Record<string, unknown>, where);
}

/**
 * Sample records in, Parquet bytes out, one row group at a time: the columns of at most
 * ROW_GROUP_ROWS records are held, then encoded and dropped, so memory is one row group plus
 * the (compressed) output and the ranks' sorted values, whatever the number of records. The
 * records must be the ones `ranks` was built from (its first pass); finish() checks that.
 */
export class SamplesParquetWriter {
  private readonly builders: ColumnBuilder[];
  private readonly rankBuilders: ColumnBuilder[];
  private readonly writer = new ByteWriter();
  private readonly parquet: ParquetWriter;
  private pending = 0;
  rows = 0;

  constructor(private readonly ranks: SampleRanks) {
    const { columns, ranks: rankColumns } = samplesColumns();
    this.builders = columns.map((c) => new ColumnBuilder(c));
    this.rankBuilders = rankColumns.map((c) => new ColumnBuilder(c));
    this.parquet = new ParquetWriter({
      writer: this.writer,
      schema: schemaFromColumnData({ columnData: this.columnData() }),
      // Row-group statistics cost a third of the write time and no query here filters on them
      // (the partitions select the files).
      statistics: false,
      createdBy: 'pathbench',
    });
  }

  private columnData(): ColumnSource[] {
    return [...this.builders, ...this.rankBuilders].map((b) => ({
      name: b.column.name,
      data: b.values,
      type: b.parquetType,
      nullable: true,
      encoding: ENCODINGS[b.parquetType ?? ''],
    }));
  }

  /** One record; `where` names it in errors (file and line). */
  add(record: Record<string, unknown>, where: () => string): void {
    for (const b of this.builders) b.push(record[b.column.name], where);
    const cells = this.ranks.cells(record, where);
    for (let i = 0; i < cells.length; i++) this.rankBuilders[i].push(cells[i], where);
    this.rows++;
    if (++this.pending >= ROW_GROUP_ROWS) this.flush();
  }

  private flush(): void {
    if (this.pending === 0) return;
    this.parquet.write({ columnData: this.columnData(), rowGroupSize: ROW_GROUP_ROWS });
    for (const b of [...this.builders, ...this.rankBuilders]) b.clear();
    this.pending = 0;
  }

  /** The finished file; undefined when no record was added. */
  finish(): Uint8Array | undefined {
    this.ranks.verify();
    if (this.rows === 0) return undefined;
    this.flush();
    this.parquet.finish();
    return new Uint8Array(this.writer.getBuffer());
  }
}

/** Parquet bytes for sample records given as JSONL texts (one per file); undefined when there are none. */
export function samplesToParquet(
  files: { key: string; text: string }[],
): { bytes: Uint8Array; rows: number } | undefined {
  const ranks = new SampleRanks();
  for (const f of files) readJsonl(f.key, f.text, (r) => ranks.add(r));
  ranks.seal();
  const w = new SamplesParquetWriter(ranks);
  for (const f of files) readJsonl(f.key, f.text, (r, where) => w.add(r, where));
  const bytes = w.finish();
  return bytes ? { bytes, rows: w.rows } : undefined;
}

/**
 * Write (or rewrite) the partition's Parquet file from all its JSONL files. Idempotent: the key
 * is fixed and the object is replaced whole. A partition without samples has no Parquet file
 * (a stale one is removed), so the table never shows rows the JSONL does not have.
 *
 * Two passes over the JSONL: the first sorts each group's successful values for the rank
 * columns (core/sample-ranks.ts), the second writes the rows with them. Both stream line by
 * line; what stays in memory is the sorted values (8 bytes each) and one row group of columns.
 */
export async function writeParquetCopy(
  deps: Pick<Deps, 'store' | 'log'>,
  ref: { runId: string; pathId: string },
): Promise<{ key: string; rows: number; bytes: number }> {
  const key = keys.parquetCopy(ref.pathId, ref.runId);
  const jsonlKeys = (await deps.store.list(keys.samplesPrefix(ref.pathId, ref.runId))).filter((k) =>
    k.endsWith('.jsonl'),
  );
  const eachRecord = async (fn: RecordSink) => {
    for (const k of jsonlKeys) {
      const chunks = await readChunks(deps.store, k);
      if (chunks !== undefined) await readJsonlStream(k, chunks, fn);
    }
  };
  const ranks = new SampleRanks();
  await eachRecord((r) => ranks.add(r));
  ranks.seal();
  const writer = new SamplesParquetWriter(ranks);
  await eachRecord((r, where) => writer.add(r, where));
  const bytes = writer.finish();
  if (!bytes) {
    await deps.store.delete(key);
    return { key, rows: 0, bytes: 0 };
  }
  const out = { bytes, rows: writer.rows };
  await deps.store.put(key, out.bytes, 'application/vnd.apache.parquet');
  deps.log.info('Parquet copy written', { ...ref, key, rows: out.rows, bytes: out.bytes.length });
  return { key, rows: out.rows, bytes: out.bytes.length };
}

/**
 * Rewrite the Parquet copy of every path of a run from its JSONL (`pathbench parquet`): for a
 * run collected before the copies carried the rank columns, or a copy that was lost. The paths
 * are the run manifest's; each copy is replaced whole, as after a collect, so it is safe to
 * repeat. `onPath` hears each path's result as it is written.
 */
export async function rewriteRunParquetCopies(
  deps: Pick<Deps, 'store' | 'log'>,
  runId: string,
  onPath: (pathId: string, out: { key: string; rows: number; bytes: number }) => void = () => {},
): Promise<{ paths: number; rows: number }> {
  const manifest = await loadManifest(deps.store, runId);
  let rows = 0;
  for (const p of manifest.paths) {
    const out = await writeParquetCopy(deps, { runId, pathId: p.id });
    rows += out.rows;
    onPath(p.id, out);
  }
  return { paths: manifest.paths.length, rows };
}
