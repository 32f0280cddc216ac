/**
 * The pingpong helper's per-exchange log (probes/native/pingpong.c) → one `rtt_us` record per
 * exchange. The log looks like:
 *
 *   # pathbench pingpong v1 mode=tcp req=16 resp=16 clock=pingpong-monotonic-busypoll realtime_minus_monotonic_ns=N
 *   seq,tx_ns,rtt_ns,status
 *   1,812345678901,23456,ok
 *   2,812345702407,,timeout
 *   # end exchanges=2 ok=1
 *
 * Since the helper takes kernel timestamps (SO_TIMESTAMPING) the header says `ts=kernel-sw` and
 * rows have a fifth column, net_ns: the reply's receive stamp minus the request's send stamp.
 * Each such exchange then gives two records: `rtt_us` (as before, with `ts_source` and `host_us` =
 * rtt − network, the client's own send and receive paths) and `network_rtt_us` (value: the
 * network round trip, clock NETWORK_CLOCK), so percentiles, comparisons and regressions treat the
 * network figure as a metric of its own; a failed exchange fails both. Four-column logs (older
 * helpers) and `ts=user` (a kernel that refused the stamps) give `rtt_us` only, `ts_source: "user"`.
 *
 * Since the server also reports its own clock readings, rows have eight columns: fwd_ns, rev_ns
 * and clock_err_us, the one-way delays (server receive − client send, client receive − server
 * send, each on its own end's clock) and the bound on their clocks' disagreement (0 when both
 * ends are one kernel, as in the lab; else the sum of both ends' adjtimex maximum errors). They
 * are filled only when that bound is known; the `rtt_us` record then carries `one_way_fwd_us`,
 * `one_way_rev_us` and `clock_error_us` (a one-way figure can be negative when the clocks disagree
 * by more than it: the bound says so).
 *
 * `value` is the ROUND TRIP in µs (as the sockperf parser stores it, sockperf's one-way × 2), and
 * every record carries `one_way_us` = rtt / 2 beside it, so neither reading is implicit; `clock`
 * names the helper's clock as its header gives it, which also says how the client awaited the
 * reply (PINGPONG_CLOCKS: busy-poll or blocking read; a header without one is busy-poll, the only
 * mode before the choice), `mode` the mode (tcp, udp, tcp-rr) and `request_bytes` /
 * `response_bytes` the sizes. tx_ns is CLOCK_MONOTONIC; the header's offset gives epoch
 * milliseconds for t_start / t_end. A failed exchange (timeout, reset …) is an ok:false record; a
 * series that could not start is one line with seq 0. A bad row is rejected naming the column; a
 * last row without its newline is truncated.
 */
import { ParseError } from '../../core/errors.js';
import type { SampleRecord } from '../../core/sample-record.js';
import { decimal } from '../parsing/numbers.js';
import type { LineParser, ParseMeta } from '../parsing/parser-types.js';
import { strictParser } from '../parsing/strict.js';

/** The helper's clock name for each way of awaiting the reply (its `wait` argument). */
export const PINGPONG_CLOCKS = { busy: 'pingpong-monotonic-busypoll', block: 'pingpong-monotonic-block' } as const;
/** The default (busy-poll) clock. */
export const PINGPONG_CLOCK = PINGPONG_CLOCKS.busy;
const HEADER = /^# pathbench pingpong v1 (.*)$/;
/** The columns before the helper took kernel timestamps, and since. */
const COLUMNS_V1 = 'seq,tx_ns,rtt_ns,status';
const COLUMNS_V2 = 'seq,tx_ns,rtt_ns,status,net_ns';
const COLUMNS = 'seq,tx_ns,rtt_ns,status,net_ns,fwd_ns,rev_ns,clock_err_us';
const COLUMN_SETS: Record<number, string> = { 4: COLUMNS_V1, 5: COLUMNS_V2, 8: COLUMNS };
/** The network round trip by kernel software timestamps: a metric of its own beside rtt_us. */
export const NETWORK_METRIC = 'network_rtt_us';
/** Its clock: the kernel's software timestamps (SO_TIMESTAMPING), send at the driver, receive in the stack. */
export const NETWORK_CLOCK = 'so_timestamping-sw';
const STATUS = /^[a-z][a-z0-9-]{0,40}$/;

/**
 * One record of an exchange: a plain literal, optional keys after (object spread costs ~40× here,
 * 1 M lines a minute).
 */
function exchangeRecord(
  x: {
    meta: ParseMeta;
    seq: number;
    tStart: number;
    tEnd: number;
    ok: boolean;
    status: string;
    mode: string | undefined;
    req: number | undefined;
    resp: number | undefined;
  },
  metric: string,
  value: number | null,
  clock: string,
): SampleRecord {
  const r: SampleRecord = {
    run_id: x.meta.runId,
    path_id: x.meta.pathId,
    probe: x.meta.probe,
    kind: 'pingpong',
    trial: x.meta.trial,
    seq: x.seq,
    t_start: x.tStart,
    t_end: x.tEnd,
    metric,
    value,
    unit: 'us',
    ok: x.ok,
    clock,
  };
  if (!x.ok) r.error = x.status;
  if (x.mode !== undefined) r.mode = x.mode;
  if (x.req !== undefined) r.request_bytes = x.req;
  if (x.resp !== undefined) r.response_bytes = x.resp;
  return r;
}

/**
 * fwd_ns, rev_ns, clock_err_us of one row: all three or none (a bound unknown), only on an ok row;
 * the delays are signed (clocks that disagree by more than a delay make it negative).
 */
function oneWayOf(
  f: string[],
  ok: boolean,
  n: number,
): { fwdUs: number; revUs: number; clockErrorUs: number } | undefined {
  const [fwd, rev, err] = [f[5], f[6], f[7]];
  if (fwd === '' && rev === '' && err === '') return undefined;
  const [fwdNs, revNs, errUs] = [decimal(fwd), decimal(rev), decimal(err)];
  if (!ok || !Number.isFinite(fwdNs) || !Number.isFinite(revNs) || !Number.isFinite(errUs) || errUs < 0)
    throw new ParseError(
      `pingpong line ${n}: fwd_ns, rev_ns and clock_err_us (≥ 0) must all be numbers on an ok row, or all empty; got ${`${fwd},${rev},${err}`.slice(0, 60)}`,
    );
  return { fwdUs: fwdNs / 1000, revUs: revNs / 1000, clockErrorUs: errUs };
}

/** The line parser for one pingpong log (see module header). */
export function pingpongLines(meta: ParseMeta): LineParser {
  let seen: 'nothing' | 'header' | 'columns' = 'nothing';
  let mode: string | undefined;
  let clock: string = PINGPONG_CLOCK;
  let offsetMs = 0;
  let req: number | undefined;
  let resp: number | undefined;
  let firstText: string | undefined;
  let columns = 4;
  let tsSource: 'kernel-sw' | 'user' = 'user';
  return {
    line(text, n, complete) {
      if (firstText === undefined && text.trim() !== '') firstText = text;
      if (text === '') return [];
      if (text.startsWith('#')) {
        const h = HEADER.exec(text);
        if (h) {
          const kv = new Map(h[1].split(' ').map((p) => p.split('=') as [string, string]));
          const off = Number(kv.get('realtime_minus_monotonic_ns'));
          if (!Number.isFinite(off))
            throw new ParseError(`pingpong line ${n}: header without realtime_minus_monotonic_ns`);
          offsetMs = off / 1e6;
          mode = kv.get('mode');
          clock = kv.get('clock') ?? PINGPONG_CLOCK;
          req = Number(kv.get('req')) || undefined;
          resp = Number(kv.get('resp')) || undefined;
          tsSource = kv.get('ts') === 'kernel-sw' ? 'kernel-sw' : 'user';
          seen = 'header';
        }
        return [];
      }
      if (text.startsWith('seq,')) {
        if (text !== COLUMNS_V1 && text !== COLUMNS_V2 && text !== COLUMNS) {
          throw new ParseError(`pingpong line ${n}: unexpected column header: ${text.slice(0, 60)}`);
        }
        columns = text.split(',').length;
        seen = 'columns';
        return [];
      }
      if (seen !== 'columns') {
        throw new ParseError(`pingpong line ${n}: a row before the "${COLUMNS}" header`);
      }
      if (!complete) throw new ParseError(`pingpong line ${n}: row cut off`);
      const f = text.split(',');
      if (f.length !== columns)
        throw new ParseError(`pingpong line ${n}: ${f.length} fields, expected ${columns} (${COLUMN_SETS[columns]})`);
      const seq = decimal(f[0]);
      if (f[0] === '' || !Number.isSafeInteger(seq) || seq < 0) {
        throw new ParseError(`pingpong line ${n}: seq must be an integer ≥ 0, got ${f[0].slice(0, 30)}`);
      }
      const tx = decimal(f[1]);
      if (f[1] === '' || !Number.isFinite(tx)) {
        throw new ParseError(`pingpong line ${n}: tx_ns is not a number: ${f[1].slice(0, 30)}`);
      }
      const status = f[3];
      if (!STATUS.test(status))
        throw new ParseError(`pingpong line ${n}: status is not a word: ${status.slice(0, 30)}`);
      const ok = status === 'ok';
      let rttUs: number | null = null;
      if (ok) {
        const rtt = decimal(f[2]);
        if (f[2] === '' || !Number.isFinite(rtt) || rtt < 0) {
          throw new ParseError(
            `pingpong line ${n}: rtt_ns must be a number ≥ 0 on an ok row, got ${f[2].slice(0, 30)}`,
          );
        }
        rttUs = rtt / 1000;
      } else if (f[2] !== '') {
        throw new ParseError(`pingpong line ${n}: rtt_ns must be empty on a failed row, got ${f[2].slice(0, 30)}`);
      }
      let netUs: number | null = null;
      if (columns >= 5 && f[4] !== '') {
        const net = decimal(f[4]);
        if (!ok || !Number.isFinite(net) || net < 0)
          throw new ParseError(
            `pingpong line ${n}: net_ns must be a number ≥ 0 on an ok row and empty on a failed one, got ${f[4].slice(0, 30)}`,
          );
        netUs = net / 1000;
      }
      const oneWay = columns === 8 ? oneWayOf(f, ok, n) : undefined;
      const tStart = tx / 1e6 + offsetMs;
      const tEnd = rttUs === null ? tStart : tStart + rttUs / 1000;
      const of = { meta, seq, tStart, tEnd, ok, status, mode, req, resp };
      const r = exchangeRecord(of, 'rtt_us', rttUs, clock);
      r.one_way_us = rttUs === null ? null : rttUs / 2;
      r.ts_source = netUs === null ? 'user' : tsSource;
      if (oneWay) {
        r.one_way_fwd_us = oneWay.fwdUs;
        r.one_way_rev_us = oneWay.revUs;
        r.clock_error_us = oneWay.clockErrorUs;
      }
      // Kernel stamps on: the network figure beside it, also for a failed exchange (its loss matches).
      if (netUs === null && (tsSource === 'user' || ok)) return [r];
      const net = exchangeRecord(of, NETWORK_METRIC, netUs, NETWORK_CLOCK);
      net.ts_source = tsSource;
      if (netUs !== null && rttUs !== null) r.host_us = rttUs - netUs;
      return [r, net];
    },
    end(ctx) {
      if (ctx.kept === 0 && ctx.rejected === 0 && firstText !== undefined && seen === 'nothing') {
        ctx.reject('pingpong: not a pingpong log (no "# pathbench pingpong v1" header)');
      }
      return [];
    },
  };
}

/** Strict whole-text form (see strict.ts). */
export const parsePingpong = strictParser('pingpong', pingpongLines);
