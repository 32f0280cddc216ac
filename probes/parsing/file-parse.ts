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

/** Longest error text a failed record keeps (a tool or target may say megabytes). */
export const MAX_ERROR = 500;

/** Control and format characters (ESC, bidi overrides, zero-width), line and paragraph separators. */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}]+/gu;

/**
 * A failed record's error as stored: one line, no control or format characters, at most
 * MAX_ERROR characters (cut ones end in "…"); text with nothing printable says so.
 */
export function cleanError(error: string): string {
  const text = error
    .slice(0, MAX_ERROR * 4)
    .replace(UNPRINTABLE, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (text === '') return 'error text had no printable characters';
  return text.length > MAX_ERROR || error.length > MAX_ERROR * 4 ? `${text.slice(0, MAX_ERROR - 1)}…` : text;
}

/**
 * The seqs seen of one metric, as sorted disjoint runs [lo, hi]: a log's seqs mostly come in
 * order, so this stays a few numbers however long the file (a Set of every seq would hold a
 * million for a minute of pingpong).
 */
class SeqRuns {
  private readonly lo: number[] = [];
  private readonly hi: number[] = [];

  /** Index of the last run starting at or before x, or -1. */
  private runAt(x: number): number {
    let a = 0;
    let b = this.lo.length;
    while (a < b) {
      const m = (a + b) >> 1;
      if (this.lo[m] <= x) a = m + 1;
      else b = m;
    }
    return a - 1;
  }

  has(x: number): boolean {
    const last = this.hi.length - 1;
    if (last < 0 || x > this.hi[last]) return false;
    const i = this.runAt(x);
    return i >= 0 && x <= this.hi[i];
  }

  /** Add x (not already in). */
  add(x: number): void {
    const last = this.hi.length - 1;
    if (last >= 0 && x === this.hi[last] + 1) {
      this.hi[last] = x;
      return;
    }
    const i = this.runAt(x);
    const joinsLeft = i >= 0 && this.hi[i] === x - 1;
    const joinsRight = i + 1 < this.lo.length && this.lo[i + 1] === x + 1;
    if (joinsLeft && joinsRight) {
      this.hi[i] = this.hi[i + 1];
      this.lo.splice(i + 1, 1);
      this.hi.splice(i + 1, 1);
    } else if (joinsLeft) this.hi[i] = x;
    else if (joinsRight) this.lo[i + 1] = x;
    else {
      this.lo.splice(i + 1, 0, x);
      this.hi.splice(i + 1, 0, x);
    }
  }
}

/** A reason as one short line (engine messages may carry a multi-line excerpt). */
function oneLine(reason: string): string {
  return reason.replace(/\s*[\r\n]+\s*/g, ' ').slice(0, MAX_REASON);
}

export class FileParse {
  readonly stats: ParseStats = { lines: 0, samples: 0, rejected: 0, truncated: false };
  private readonly parser: LineParser;
  private units?: number;
  /** Per metric, the seqs kept so far: a second record of the same seq and metric is rejected. */
  private readonly seqs = new Map<string, SeqRuns>();

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

  /**
   * Keep `records` only when each passes the record check and none repeats a seq already kept
   * for its metric (a log that says the same exchange twice must not count it twice); otherwise
   * reject them all as `at`. A failed record's error is cleaned first (cleanError).
   */
  private keep(records: SampleRecord[], at: () => string): SampleRecord[] {
    for (const r of records) {
      if (typeof r.error === 'string') r.error = cleanError(r.error);
      const problem = recordProblem(r) ?? this.repeated(r, records);
      if (problem) {
        this.reject(`${at()}: ${problem}`);
        return [];
      }
    }
    for (const r of records) this.seqRuns(r.metric).add(r.seq);
    this.stats.samples += records.length;
    return records;
  }

  private seqRuns(metric: string): SeqRuns {
    let runs = this.seqs.get(metric);
    if (!runs) {
      runs = new SeqRuns();
      this.seqs.set(metric, runs);
    }
    return runs;
  }

  /** Why `r` repeats a kept seq (or one of its own line's), or undefined. */
  private repeated(r: SampleRecord, line: SampleRecord[]): string | undefined {
    const twice =
      this.seqs.get(r.metric)?.has(r.seq) || line.some((o) => o !== r && o.metric === r.metric && o.seq === r.seq);
    return twice ? `seq ${r.seq} of ${r.metric} appears twice (the first kept)` : undefined;
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
