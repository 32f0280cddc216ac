/**
 * iputils ping's output (`ping -n -D -O …`, as probes/ping/ping.runner.ts runs it) → one
 * `icmp_rtt_ms` record per echo request sent. The output looks like (real iputils 20221126):
 *
 *   PING 10.99.0.2 (10.99.0.2) 56(84) bytes of data.
 *   [1796200618.749503] no answer yet for icmp_seq=1
 *   [1796200618.749710] 64 bytes from 10.99.0.2: icmp_seq=2 ttl=64 time=0.101 ms
 *   [1796200619.156642] From 10.99.0.1 icmp_seq=3 Destination Host Unreachable
 *
 *   --- 10.99.0.2 ping statistics ---
 *   6 packets transmitted, 3 received, 50% packet loss, time 1017ms
 *   rtt min/avg/max/mdev = 0.043/0.063/0.101/0.026 ms
 *
 * A reply is ok with its `time` (ping's own clock: the kernel's receive timestamp against the
 * send time); `[…]` (-D) is the epoch second it was printed, so t_end. A request without a reply
 * by the end, with an ICMP error, or with a reply later than the probe's timeout (the sidecar's
 * `timeoutMs`) is a loss record (ok false, value null: `timeout`, `unreachable`, `late-reply`). The
 * requests are 1 … the "packets transmitted" count (or the highest seq seen when ping was killed
 * before its statistics). `no answer yet` is only ping's interim remark (a reply may still come).
 * icmp_seq is 16 bits and wraps after 65535; a seq far below the last one counts as wrapped.
 * Duplicate replies (DUP!) are ping's own remark on the network, not requests: skipped. Replies
 * become records as they are read (a million-request log streams through); only which requests
 * were answered is kept, a bit each, to find the lost ones at the end. A reply line cut off at
 * the end of the file is never trusted (a number cut short still parses).
 */
import { z } from 'zod';
import { ParseError } from '../../core/errors.js';
import type { SampleRecord } from '../../core/sample-record.js';
import type { LineParser, ParseMeta } from '../parsing/parser-types.js';
import { strictParser } from '../parsing/strict.js';

export const PING_CLOCK = 'iputils-ping';

/** What the runner's sidecar (`<probe>/<trial>.meta.json`) tells the parser. */
const sidecarSchema = z.looseObject({
  startedAtMs: z.number().finite().optional(),
  endedAtMs: z.number().finite().optional(),
  intervalMs: z.number().finite().nonnegative().optional(),
  timeoutMs: z.number().finite().positive().optional(),
  count: z.number().int().positive().optional(),
  reason: z.string().max(100).optional(),
});
type PingSidecar = z.infer<typeof sidecarSchema>;

function readPingSidecar(text: string | undefined): PingSidecar {
  if (!text) return {};
  try {
    const r = sidecarSchema.safeParse(JSON.parse(text));
    return r.success ? r.data : {};
  } catch {
    return {};
  }
}

const STAMP = String.raw`(?:\[(\d+\.\d+)\]\s+)?`;
const REPLY = new RegExp(
  `^${STAMP}(\\d+) bytes from ([^:]+): icmp_seq=(\\d+)(?: ttl=(\\d+))?(?: time=(\\d+(?:\\.\\d+)?) ms)?( \\(DUP!\\))?\\s*$`,
);
const NO_ANSWER = new RegExp(`^${STAMP}no answer yet for icmp_seq=(\\d+)\\s*$`);
const ICMP_ERROR = new RegExp(`^${STAMP}From (\\S+?):? icmp_seq=(\\d+) (.+?)\\s*$`);
const TRANSMITTED = /^(\d+) packets transmitted, (\d+) (?:packets )?received/;

/** One bit per request: answered (or already recorded) or not. */
class RequestSet {
  private bits = new Uint8Array(1024);
  has(n: number): boolean {
    return n >> 3 < this.bits.length && (this.bits[n >> 3] & (1 << (n & 7))) !== 0;
  }
  add(n: number): void {
    if (n >> 3 >= this.bits.length) {
      const grown = new Uint8Array(Math.max(this.bits.length * 2, (n >> 3) + 1));
      grown.set(this.bits);
      this.bits = grown;
    }
    this.bits[n >> 3] |= 1 << (n & 7);
  }
}

/** The line parser for one ping output (see module header). */
export function pingLines(meta: ParseMeta): LineParser {
  const side = readPingSidecar(meta.sidecar);
  const base = { run_id: meta.runId, path_id: meta.pathId, probe: meta.probe, kind: 'ping', trial: meta.trial };
  const answered = new RequestSet();
  const errors = new Map<number, { t: number | undefined; error: string }>();
  let transmitted: number | undefined;
  let highest = 0;
  let wraps = 0;
  let last = 0;
  let header = false;
  let lines = 0;
  /** The request number behind an icmp_seq, counting wraps of the 16-bit field. */
  const request = (seq: number, line: number): number => {
    if (seq > 65535) throw new ParseError(`ping line ${line}: icmp_seq ${seq} is above 65535`);
    if (last >= 61440 && seq < 4096) wraps += 1;
    last = seq;
    const number = seq + wraps * 65536;
    highest = Math.max(highest, number);
    return number;
  };
  const stampMs = (s: string | undefined): number | undefined => (s === undefined ? undefined : Number(s) * 1000);
  return {
    line(text, n, complete) {
      lines += 1;
      const t = text.trim();
      if (t === '' || t.startsWith('---') || t.startsWith('rtt ') || t.startsWith('round-trip')) return [];
      if (t.startsWith('PING ')) {
        header = true;
        return [];
      }
      const reply = REPLY.exec(t);
      if (reply) {
        if (!complete) {
          if (Number(reply[4]) <= 65535) request(Number(reply[4]), n);
          throw new ParseError(`ping line ${n}: reply cut off`);
        }
        const [, stamp, bytes, , seqText, ttl, time, dup] = reply;
        if (time === undefined) throw new ParseError(`ping line ${n}: reply without time=`);
        const seq = request(Number(seqText), n);
        if (dup || answered.has(seq)) return [];
        answered.add(seq);
        const rtt = Number(time);
        const tEnd = stampMs(stamp) ?? (side.startedAtMs ?? 0) + (seq - 1) * (side.intervalMs ?? 1000) + rtt;
        const rec: SampleRecord = {
          run_id: base.run_id,
          path_id: base.path_id,
          probe: base.probe,
          kind: 'ping',
          trial: base.trial,
          seq,
          t_start: tEnd - rtt,
          t_end: tEnd,
          metric: 'icmp_rtt_ms',
          value: rtt,
          unit: 'ms',
          ok: true,
          clock: PING_CLOCK,
          bytes: Number(bytes),
        };
        if (ttl) rec.ttl = Number(ttl);
        if (side.timeoutMs !== undefined && rtt > side.timeoutMs) {
          rec.ok = false;
          rec.value = null;
          rec.error = 'late-reply';
          rec.late_rtt_ms = rtt;
        }
        return [rec];
      }
      const quiet = NO_ANSWER.exec(t);
      if (quiet) {
        request(Number(quiet[2]), n);
        return [];
      }
      const icmp = ICMP_ERROR.exec(t);
      if (icmp) {
        const seq = request(Number(icmp[3]), n);
        const what = icmp[4].toLowerCase();
        const error = /unreachable/.test(what)
          ? 'unreachable'
          : /time to live exceeded/.test(what)
            ? 'ttl-exceeded'
            : 'icmp-error';
        if (!errors.has(seq)) errors.set(seq, { t: stampMs(icmp[1]), error });
        return [];
      }
      const stats = TRANSMITTED.exec(t);
      if (stats) {
        transmitted = Number(stats[1]);
        return [];
      }
      if (!complete) {
        // The request was sent (a reply or remark about it was being written): count it, trust nothing else.
        const seq = /icmp_seq=(\d+)/.exec(t)?.[1];
        if (seq !== undefined && Number(seq) <= 65535) request(Number(seq), n);
        throw new ParseError(`ping line ${n}: cut off`);
      }
      throw new ParseError(`ping line ${n}: not a line of ping's output: ${t.slice(0, 60)}`);
    },
    end(ctx) {
      // ping -O writes a line for every request but the last ones, so a log cannot stand for more
      // requests than it has lines (a damaged one must not conjure millions of losses); the
      // runner's count bounds it too.
      const sent = Math.min(Math.max(transmitted ?? 0, highest), side.count ?? lines + 1, lines + 1);
      if (sent === 0) {
        if (ctx.rejected > 0) return [];
        const t = side.startedAtMs ?? 0;
        const error = side.reason ?? (header ? 'no-requests' : 'no-output');
        return [
          {
            ...base,
            seq: 0,
            t_start: t,
            t_end: side.endedAtMs ?? t,
            metric: 'icmp_rtt_ms',
            value: null,
            unit: 'ms',
            ok: false,
            error,
            clock: PING_CLOCK,
          },
        ];
      }
      const start = side.startedAtMs ?? 0;
      const gap = side.intervalMs ?? 1000;
      const out: SampleRecord[] = [];
      for (let seq = 1; seq <= sent; seq++) {
        if (answered.has(seq)) continue;
        const sentAt = start + (seq - 1) * gap;
        const e = errors.get(seq);
        const tEnd = e?.t ?? sentAt + (side.timeoutMs ?? 0);
        out.push({
          ...base,
          seq,
          t_start: sentAt,
          t_end: tEnd,
          metric: 'icmp_rtt_ms',
          value: null,
          unit: 'ms',
          ok: false,
          error: e?.error ?? 'timeout',
          clock: PING_CLOCK,
        });
      }
      return out;
    },
  };
}

/** Strict whole-text form (see strict.ts). */
export const parsePing = strictParser('ping', pingLines);
