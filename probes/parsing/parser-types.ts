/**
 * What every raw-output parser implements: tool-native text in, normalized sample records out
 * (the sample record contract: SampleRecord in core/sample-record.ts, docs/data.md). Pure: no I/O.
 *
 * A parser is fed one line at a time (so a 1 M-line log streams through it) and keeps every
 * good line: a bad line is REJECTED — counted, with a one-line reason naming the line and field —
 * never the end of the file. A last line without its newline that does not parse is TRUNCATED
 * (the file was uploaded as produced or cut by a kill), not corrupt. Whole-document formats
 * (iperf3 `-J`, mtu) buffer their lines and parse at the end; their unit is the interval.
 */
import type { SampleRecord } from '../../core/sample-record.js';

export interface ParseMeta {
  runId: string;
  pathId: string;
  probe: string;
  trial: number;
  /**
   * Text of the runner's sidecar `<trial>.meta.json` next to the raw file, when there is one
   * (exit code, stderr, wall-clock start/end, failure reason). Optional: parsers work without it,
   * but use it for what the tool's own output lacks (sockperf's epoch anchor, a failure's time).
   */
  sidecar?: string;
}

/** What parsing one raw file came to; recorded per file in the manifest. */
export interface ParseStats {
  /** Lines read (iperf3: intervals; mtu: 1 document). */
  lines: number;
  /** Sample records kept. */
  samples: number;
  /** Lines (intervals) rejected. */
  rejected: number;
  /** The first rejection's reason: "<kind> line <n>: <field> …". */
  firstRejection?: string;
  /** The file ended part-way (a last line without newline that did not parse, an unclosed JSON document). */
  truncated: boolean;
  /** Why the file reads as truncated ("<kind> line <n>: …"). */
  truncation?: string;
}

/** A line-fed parser: records go to `emit`, a bad line is reported to `reject`. */
export interface LineParser {
  /** Feed one line; throw ParseError to reject it (its records are then not kept). */
  line(text: string, n: number, complete: boolean): SampleRecord[];
  /** End of input: the records only the whole file gives (documents, a failed-probe record). */
  end(ctx: EndContext): SampleRecord[];
}

export interface EndContext {
  /** Records kept so far. */
  kept: number;
  /** Lines rejected so far. */
  rejected: number;
  /** Reject a unit found at the end (an iperf3 interval); counts as a rejected line. */
  reject(reason: string): void;
  /** Say the file ended part-way, and why. */
  truncated(reason: string): void;
  /** Count units read by a document parser (iperf3 intervals). */
  units(n: number): void;
}

export type LineParserFactory = (meta: ParseMeta) => LineParser;

/** The strict, whole-text form: every record, or a ParseError for the first bad line. */
export type Parser = (raw: string, meta: ParseMeta) => SampleRecord[];
