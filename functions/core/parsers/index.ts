/**
 * The parser registry: raw tool output of each probe kind → normalized SampleRecords.
 * Exhaustive over ProbeKind, so a new kind fails to compile until it has a parser.
 */
import { ParseError } from '../errors.js';
import { PROBE_KINDS, type ProbeKind, type SampleRecord } from '../model.js';
import { parseHttp } from './http.js';
import { parseIperf3 } from './iperf3.js';
import { parseMtu } from './mtu.js';
import { parseSockperf } from './sockperf.js';
import { parseTcpConnect } from './tcp-connect.js';
import type { ParseMeta, Parser } from './types.js';

/** Each kind's parser. */
export const PARSERS: Record<ProbeKind, Parser> = {
  'tcp-connect': parseTcpConnect,
  iperf3: parseIperf3,
  http: parseHttp,
  sockperf: parseSockperf,
  mtu: parseMtu,
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
 * Parse one raw file of `kind` into sample records. Throws ParseError (one line) for an
 * unknown kind or input that is not that kind's raw output.
 */
export function parseRaw(kind: string, raw: string, meta: ParseMeta): SampleRecord[] {
  assertProbeKind(kind);
  return PARSERS[kind](raw, meta);
}
