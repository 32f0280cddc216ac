/**
 * Parser for the agent's tcp-connect raw output (`<probe>/1.jsonl`, one JSON line per connect
 * attempt) into `connect_rtt_ms` sample records. When the precision helper measured the
 * connect, the line's `rtt_ms` is the precise figure (its `clock` says which) and the
 * app-observed figure rides along as `app_rtt_ms` (and the kernel's own `kernel_rtt_us`).
 * `ts_source` says whose clock the value is (`kernel-sw`: the kernel's handshake RTT; `user`: an
 * app clock), and with the kernel's figure `host_us` = app − kernel: this host's own part.
 */
import { ParseError } from '../../core/errors.js';
import type { SampleRecord } from '../../core/sample-record.js';
import { finiteOrNull, jsonLinesParser, type Line, optString, reqBool, reqCount, reqNum } from '../parsing/jsonl.js';
import type { ParseMeta } from '../parsing/parser-types.js';
import { strictParser } from '../parsing/strict.js';

/** The helper's clock when the value is the kernel's tcpi_rtt (probes/native/tcp-connect.c). */
const KERNEL_CLOCK = 'kernel-tcpi_rtt';

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
  // The kernel's own handshake time is the network figure; what the app clock adds is this host's.
  const kernel = clock === KERNEL_CLOCK && kernelUs !== undefined && kernelUs !== null;
  r.ts_source = kernel ? 'kernel-sw' : 'user';
  if (kernel && ok && typeof appRtt === 'number') r.host_us = appRtt * 1000 - (kernelUs as number);
  return r;
});

/** Strict whole-text form: every record, or a ParseError naming the first bad line. */
export const parseTcpConnect = strictParser('tcp-connect', tcpConnectLines);
