/**
 * The probe registry: every probe kind, each from its own folder (probes/<kind>/: its schema and
 * plan defaults, parser, primary metric; the agent's runner is registered in probes/runners.ts).
 * Adding a kind is a folder and a row here (and in runners.ts): the tables are exhaustive over
 * PROBE_KINDS, so a kind without a schema, parser or runner fails to compile.
 */
import { z } from 'zod';
import { ParseError } from '../core/errors.js';
import type { SampleRecord } from '../core/sample-record.js';
import { httpLines, parseHttp } from './http/http.parser.js';
import { HTTP_METRIC, httpInputSchema, httpProbeSchema } from './http/http.schema.js';
import { iperf3Lines, parseIperf3 } from './iperf3/iperf3.parser.js';
import { IPERF3_METRIC, iperf3InputSchema, iperf3ProbeSchema } from './iperf3/iperf3.schema.js';
import { mtuLines, parseMtu } from './mtu/mtu.parser.js';
import { MTU_METRIC, mtuInputSchema, mtuProbeSchema } from './mtu/mtu.schema.js';
import { FileParse, parseText } from './parsing/file-parse.js';
import type { LineParserFactory, ParseMeta, Parser, ParseStats } from './parsing/parser-types.js';
import { parsePing, pingLines } from './ping/ping.parser.js';
import { PING_METRIC, pingInputSchema, pingProbeSchema } from './ping/ping.schema.js';
import { parsePingpong, pingpongLines } from './pingpong/pingpong.parser.js';
import { PINGPONG_METRIC, pingpongInputSchema, pingpongProbeSchema } from './pingpong/pingpong.schema.js';
import type { PrimaryMetric } from './probe-fields.js';
import { parseSockperf, sockperfLines } from './sockperf/sockperf.parser.js';
import { SOCKPERF_METRIC, sockperfInputSchema, sockperfProbeSchema } from './sockperf/sockperf.schema.js';
import { parseTcpConnect, tcpConnectLines } from './tcp-connect/tcp-connect.parser.js';
import { TCP_CONNECT_METRIC, tcpConnectInputSchema, tcpConnectProbeSchema } from './tcp-connect/tcp-connect.schema.js';

export const PROBE_KINDS = ['tcp-connect', 'iperf3', 'http', 'sockperf', 'mtu', 'pingpong', 'ping'] as const;
export type ProbeKind = (typeof PROBE_KINDS)[number];

/** One probe as the agent runs it (a plan's probe after resolution): every option set, the probe named. */
export const probeSpecSchema = z.discriminatedUnion('kind', [
  tcpConnectProbeSchema,
  iperf3ProbeSchema,
  httpProbeSchema,
  sockperfProbeSchema,
  mtuProbeSchema,
  pingpongProbeSchema,
  pingProbeSchema,
]) satisfies z.ZodType<{ kind: ProbeKind }>;
export type ProbeSpec = z.output<typeof probeSpecSchema>;

/** One probe as written in a plan (kind-specific options, defaults applied, name optional). */
export const probeInputSchema = z.discriminatedUnion('kind', [
  tcpConnectInputSchema,
  iperf3InputSchema,
  httpInputSchema,
  sockperfInputSchema,
  mtuInputSchema,
  pingpongInputSchema,
  pingInputSchema,
]) satisfies z.ZodType<{ kind: ProbeKind }>;
export type ProbeInput = z.output<typeof probeInputSchema>;

/** What the pipeline knows of a kind besides its schemas. */
export interface ProbeDefinition {
  /** The strict whole-text parser: every record, or a ParseError for the first bad line. */
  parse: Parser;
  /** The line parser (lenient: bad lines rejected and counted, the rest kept). */
  lines: LineParserFactory;
  /** How the kind counts what it reads, for notes ("3 of 1,200 intervals rejected"). */
  parseUnit: string;
  /** The metric it reports first (a failed record's metric when a probe left no raw file). */
  primary: PrimaryMetric;
}

export const PROBES: Record<ProbeKind, ProbeDefinition> = {
  'tcp-connect': { parse: parseTcpConnect, lines: tcpConnectLines, parseUnit: 'line', primary: TCP_CONNECT_METRIC },
  iperf3: { parse: parseIperf3, lines: iperf3Lines, parseUnit: 'interval', primary: IPERF3_METRIC },
  http: { parse: parseHttp, lines: httpLines, parseUnit: 'line', primary: HTTP_METRIC },
  sockperf: { parse: parseSockperf, lines: sockperfLines, parseUnit: 'line', primary: SOCKPERF_METRIC },
  mtu: { parse: parseMtu, lines: mtuLines, parseUnit: 'document', primary: MTU_METRIC },
  pingpong: { parse: parsePingpong, lines: pingpongLines, parseUnit: 'line', primary: PINGPONG_METRIC },
  ping: { parse: parsePing, lines: pingLines, parseUnit: 'line', primary: PING_METRIC },
};

/** True when `kind` names a probe kind. */
export function isProbeKind(kind: unknown): kind is ProbeKind {
  return typeof kind === 'string' && (PROBE_KINDS as readonly string[]).includes(kind);
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
  return PROBES[kind].parse(raw, meta);
}

/** Parse one raw file of `kind` leniently: every good line's records, and the counts (each rejection to `onReject`). */
export function parseRawLenient(
  kind: string,
  raw: string,
  meta: ParseMeta,
  onReject?: (reason: string) => void,
): { records: SampleRecord[]; stats: ParseStats } {
  assertProbeKind(kind);
  return parseText(kind, PROBES[kind].lines, raw, meta, onReject);
}

/** A streaming parse of one raw file of `kind`: feed it lines, then end it. */
export function fileParser(kind: ProbeKind, meta: ParseMeta): FileParse {
  return new FileParse(kind, PROBES[kind].lines, meta);
}

export type { FileParse };
