/**
 * The parser registry: raw tool output of each probe kind → normalized SampleRecords.
 * Exhaustive over ProbeKind, so a new kind fails to compile until it has a parser.
 */
import { ParseError } from '../../core/errors.js';
import { PROBE_KINDS, type ProbeKind, type SampleRecord } from '../../core/model.js';
import { httpLines, parseHttp } from '../http/http.parser.js';
import { iperf3Lines, parseIperf3 } from '../iperf3/iperf3.parser.js';
import { mtuLines, parseMtu } from '../mtu/mtu.parser.js';
import { parsePingpong, pingpongLines } from '../pingpong/pingpong.parser.js';
import { parseSockperf, sockperfLines } from '../sockperf/sockperf.parser.js';
import { parseTcpConnect, tcpConnectLines } from '../tcp-connect/tcp-connect.parser.js';
import { FileParse, parseText } from './file-parse.js';
import type { LineParserFactory, ParseMeta, Parser, ParseStats } from './parser-types.js';

/** Each kind's strict whole-text parser (all records, or a ParseError for the first bad line). */
export const PARSERS: Record<ProbeKind, Parser> = {
  'tcp-connect': parseTcpConnect,
  iperf3: parseIperf3,
  http: parseHttp,
  sockperf: parseSockperf,
  mtu: parseMtu,
  pingpong: parsePingpong,
};

/** Each kind's line parser (lenient: bad lines rejected and counted, the rest kept). */
export const LINE_PARSERS: Record<ProbeKind, LineParserFactory> = {
  'tcp-connect': tcpConnectLines,
  iperf3: iperf3Lines,
  http: httpLines,
  sockperf: sockperfLines,
  mtu: mtuLines,
  pingpong: pingpongLines,
};

/** How a kind counts what it reads, for notes ("3 of 1,200 intervals rejected"). */
export const PARSE_UNIT: Record<ProbeKind, string> = {
  'tcp-connect': 'line',
  iperf3: 'interval',
  http: 'line',
  sockperf: 'line',
  mtu: 'document',
  pingpong: 'line',
};

/** True when `kind` names a probe kind that has a parser. */
export function isProbeKind(kind: string): kind is ProbeKind {
  return (PROBE_KINDS as readonly string[]).includes(kind);
}

/** Throw ParseError unless `kind` is a known probe kind. */
export function assertProbeKind(kind: string): asserts kind is ProbeKind {
  if (!isProbeKind(kind)) {
    throw new ParseError(`unknown probe kind "${kind}" (expected one of ${PROBE_KINDS.join(', ')})`);
  }
}

/**
 * Parse one raw file of `kind` into sample records, strictly. Throws ParseError (one line) for
 * an unknown kind or input with a bad line.
 */
export function parseRaw(kind: string, raw: string, meta: ParseMeta): SampleRecord[] {
  assertProbeKind(kind);
  return PARSERS[kind](raw, meta);
}

/** Parse one raw file of `kind` leniently: every good line's records, and the counts. */
export function parseRawLenient(
  kind: string,
  raw: string,
  meta: ParseMeta,
): { records: SampleRecord[]; stats: ParseStats } {
  assertProbeKind(kind);
  return parseText(kind, LINE_PARSERS[kind], raw, meta);
}

/** A streaming parse of one raw file of `kind`: feed it lines, then end it. */
export function fileParser(kind: ProbeKind, meta: ParseMeta): FileParse {
  return new FileParse(kind, LINE_PARSERS[kind], meta);
}

export type { FileParse };
