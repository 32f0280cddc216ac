/**
 * Drives a LineParser over one raw file: counts lines, keeps every record of a good line (after
 * the record check of check.ts), rejects a bad line with its reason, and reads a last line
 * without newline that does not parse as truncated. Works line by line, so a caller can stream.
 */
import { ParseError } from '../../core/errors.js';
import type { SampleRecord } from '../../core/sample-record.js';
import type { RawLine } from './lines.js';
import { splitText } from './lines.js';
import type { LineParser, LineParserFactory, ParseMeta, ParseStats } from './parser-types.js';
import { recordProblem } from './record-check.js';

/** Longest reason kept in the manifest. */
const MAX_REASON = 200;

/** A reason as one short line (engine messages may carry a multi-line excerpt). */
function oneLine(reason: string): string {
  return reason.replace(/\s*[\r\n]+\s*/g, ' ').slice(0, MAX_REASON);
}

export class FileParse {
  readonly stats: ParseStats = { lines: 0, samples: 0, rejected: 0, truncated: false };
  private readonly parser: LineParser;
  private units?: number;

  constructor(
    readonly kind: string,
    factory: LineParserFactory,
    meta: ParseMeta,
    /** Told every rejection's reason (the stats keep only the first). */
    private readonly onReject?: (reason: string) => void,
  ) {
    this.parser = factory(meta);
  }

  private reject(reason: string): void {
    this.stats.rejected++;
    this.stats.firstRejection ??= oneLine(reason);
    this.onReject?.(oneLine(reason));
  }

  /** Keep `records` only when each passes the record check; otherwise reject them all as `at`. */
  private keep(records: SampleRecord[], at: () => string): SampleRecord[] {
    for (const r of records) {
      const problem = recordProblem(r);
      if (problem) {
        this.reject(`${at()}: ${problem}`);
        return [];
      }
    }
    this.stats.samples += records.length;
    return records;
  }

  /** One line of the file → its records (none for a rejected, blank or header line). */
  line({ text, n, complete }: RawLine): SampleRecord[] {
    this.stats.lines = n;
    let records: SampleRecord[];
    try {
      records = this.parser.line(text, n, complete);
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
      if (complete) this.reject(e.message);
      else {
        this.stats.truncated = true;
        this.stats.truncation = oneLine(`${e.message} (last line has no newline: truncated)`);
      }
      return [];
    }
    return records.length ? this.keep(records, () => `${this.kind} line ${n}`) : records;
  }

  /** End of the file → the records only the whole file gives. */
  end(): SampleRecord[] {
    const records = this.parser.end({
      kept: this.stats.samples,
      rejected: this.stats.rejected,
      reject: (reason) => this.reject(reason),
      truncated: (reason) => {
        this.stats.truncated = true;
        this.stats.truncation ??= oneLine(reason);
      },
      units: (n) => {
        this.units = n;
      },
    });
    if (this.units !== undefined) this.stats.lines = this.units;
    // A document's records are checked one by one: one bad interval does not drop the rest.
    const out: SampleRecord[] = [];
    for (const r of records) out.push(...this.keep([r], () => `${this.kind} seq ${r.seq}`));
    return out;
  }
}

/** Parse a whole text leniently: every good line's records and the counts. */
export function parseText(
  kind: string,
  factory: LineParserFactory,
  raw: string,
  meta: ParseMeta,
  onReject?: (reason: string) => void,
): { records: SampleRecord[]; stats: ParseStats } {
  const f = new FileParse(kind, factory, meta, onReject);
  const records: SampleRecord[] = [];
  for (const l of splitText(raw)) for (const r of f.line(l)) records.push(r);
  for (const r of f.end()) records.push(r);
  return { records, stats: f.stats };
}
