/**
 * Parser for the agent's http raw output (`<probe>/<trial>.jsonl`, one JSON line per request)
 * into `http_latency_ms` sample records (request start → last body byte). Extras: status,
 * bytes, local_port (the client port, to tell reused keep-alive connections apart), and the
 * clock the sample came from. The C client's `net_ms` (the network's part by the kernel's
 * software timestamps, probes/native/http-client.c) gives `ts_source: "kernel-sw"` and
 * `host_us` = (latency − net) in µs, this host's own part; without it `ts_source` is `user`.
 * A paired probe's reference requests (`"pair": "ref"`) become `http_pair_ref_ms` records.
 */
import { ParseError } from '../../core/errors.js';
import type { SampleRecord } from '../../core/sample-record.js';
import {
  finiteOrNull,
  jsonLinesParser,
  type Line,
  optString,
  reqBool,
  reqCount,
  reqInt,
  reqNum,
} from '../parsing/jsonl.js';
import type { ParseMeta } from '../parsing/parser-types.js';
import { strictParser } from '../parsing/strict.js';
import { HTTP_PAIR_METRIC } from './http.schema.js';

/** Clocks an http sample may come from: the Node client's hrtime, the C client's monotonic clock. */
export const HTTP_CLOCKS = ['app-hrtime', 'httping-monotonic'];

/** One http line → one record; throws ParseError naming the line and field (the line is then rejected). */
export const httpLines = jsonLinesParser('http', ({ at, obj }: Line, meta: ParseMeta): SampleRecord => {
  // Identity and time first: output of another tool fails here with the clearest message.
  const seq = reqCount(obj, 'seq', at);
  const tStart = reqNum(obj, 't_start', at);
  const tEnd = reqNum(obj, 't_end', at);
  const ok = reqBool(obj, 'ok', at);
  const latency = finiteOrNull(obj, 'latency_ms', at);
  if (ok && latency === null) throw new ParseError(`${at}: ok request without latency_ms`);
  const status = obj.status === undefined ? undefined : reqInt(obj, 'status', at);
  const error = optString(obj, 'error', at);
  const lport = obj.lport === undefined ? undefined : reqInt(obj, 'lport', at);
  // The C client says so; lines without a clock come from the Node client.
  const clock = optString(obj, 'clock', at) ?? 'app-hrtime';
  if (!HTTP_CLOCKS.includes(clock)) throw new ParseError(`${at}: unknown clock ${JSON.stringify(clock)}`);
  const bytes = reqCount(obj, 'bytes', at);
  const net = finiteOrNull(obj, 'net_ms', at);
  const pair = optString(obj, 'pair', at);
  if (pair !== undefined && pair !== 'ref') throw new ParseError(`${at}: unknown pair ${JSON.stringify(pair)}`);
  if (net !== null && !ok) throw new ParseError(`${at}: net_ms on a failed request`);
  // A plain literal, optional keys added after: object spread here costs ~40× (1 M lines a file).
  const r: SampleRecord = {
    run_id: meta.runId,
    path_id: meta.pathId,
    probe: meta.probe,
    kind: 'http',
    trial: meta.trial,
    seq,
    t_start: tStart,
    t_end: tEnd,
    metric: pair === 'ref' ? HTTP_PAIR_METRIC : 'http_latency_ms',
    value: ok ? latency : null,
    unit: 'ms',
    ok,
    clock,
    bytes,
  };
  if (!ok) r.error = error ?? 'error';
  if (status !== undefined) r.status = status;
  if (lport !== undefined) r.local_port = lport;
  r.ts_source = net === null ? 'user' : 'kernel-sw';
  if (net !== null && latency !== null) r.host_us = (latency - net) * 1000;
  return r;
});

/** Strict whole-text form: every record, or a ParseError naming the first bad line. */
export const parseHttp = strictParser('http', httpLines);
