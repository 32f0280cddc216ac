/**
 * Parser for the agent's tcp-connect raw output (`<probe>/1.jsonl`, one JSON line per connect
 * attempt) into `connect_rtt_ms` sample records. When the precision helper measured the
 * connect, the line's `rtt_ms` is the precise figure (its `clock` says which) and the
 * app-observed figure rides along as `app_rtt_ms` (and the kernel's own `kernel_rtt_us`).
 */
import { ParseError } from '../../core/errors.js';
import type { SampleRecord } from '../../core/sample-record.js';
import { finiteOrNull, jsonLinesParser, type Line, optString, reqBool, reqCount, reqNum } from '../parsing/jsonl.js';
import type { ParseMeta } from '../parsing/parser-types.js';
import { strictParser } from '../parsing/strict.js';

/** One tcp-connect line → one record; throws ParseError naming the line and field (the line is then rejected). */
export const tcpConnectLines = jsonLinesParser('tcp-connect', ({ at, obj }: Line, meta: ParseMeta): SampleRecord => {
  // Identity and time first: output of another tool fails here with the clearest message.
  const seq = reqCount(obj, 'seq', at);
  const tStart = reqNum(obj, 't_start', at);
  const tEnd = reqNum(obj, 't_end', at);
  const ok = reqBool(obj, 'ok', at);
  const rtt = finiteOrNull(obj, 'rtt_ms', at);
  if (ok && rtt === null) throw new ParseError(`${at}: ok attempt without rtt_ms`);
  const error = optString(obj, 'error', at);
  const clock = optString(obj, 'clock', at) ?? 'app-hrtime';
  const appRtt = obj.app_rtt_ms === undefined ? undefined : finiteOrNull(obj, 'app_rtt_ms', at);
  const kernelUs = obj.kernel_rtt_us === undefined ? undefined : finiteOrNull(obj, 'kernel_rtt_us', at);
  // A plain literal, optional keys added after: object spread here costs ~40× (1 M lines a file).
  const r: SampleRecord = {
    run_id: meta.runId,
    path_id: meta.pathId,
    probe: meta.probe,
    kind: 'tcp-connect',
    trial: meta.trial,
    seq,
    t_start: tStart,
    t_end: tEnd,
    metric: 'connect_rtt_ms',
    value: ok ? rtt : null,
    unit: 'ms',
    ok,
    clock,
  };
  if (!ok) r.error = error ?? 'error';
  if (appRtt !== undefined) r.app_rtt_ms = appRtt;
  if (kernelUs !== undefined) r.kernel_rtt_us = kernelUs;
  return r;
});

/** Strict whole-text form: every record, or a ParseError naming the first bad line. */
export const parseTcpConnect = strictParser('tcp-connect', tcpConnectLines);
