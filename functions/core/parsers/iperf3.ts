/**
 * iperf3 `-J` output → sample records: one record per interval per metric (throughput_bps;
 * retransmits for TCP; jitter_ms and lost_percent for UDP), trial = repeat, seq = interval index.
 * Owns the rules for reading iperf3's JSON as it really comes out of the tool:
 * - text before or after the top-level object (warnings, a second error line) is ignored: the
 *   object's end is found by scanning braces outside strings, not by trusting the whole text;
 * - an `"error"` key means the repeat FAILED even when the exit code was 0 (iperf3 3.12 exits 0
 *   on "connection refused" and "server is busy"); the end-of-test sums are never read as a
 *   throughput because a failed run reports `bits_per_second: 0` there;
 * - a repeat that failed becomes one ok:false throughput_bps record with value null and a short
 *   reason (intervals measured before the failure are kept);
 * - the runner writes a pathbench-authored stand-in `{"error", "pathbench": {"synthesized": true,
 *   "reason"}}` only when iperf3 printed nothing at all (not installed, killed at its timeout).
 * Burst-credit cliffs are flagged on the throughput records (functions/core/credit.ts).
 */
import { flagCreditCliffs } from '../credit.js';
import { ParseError } from '../errors.js';
import type { SampleRecord } from '../model.js';
import type { ParseMeta, Parser } from './types.js';

/** What the runners' sidecar `<trial>.meta.json` may carry that a parser uses. */
export interface SidecarFacts {
  startedAtMs?: number;
  endedAtMs?: number;
  reason?: string;
  mode?: string;
  streams?: number;
  /** sockperf: epoch ms minus CLOCK_MONOTONIC ms, measured by the runner around the run. */
  monotonicToEpochMs?: number;
}

/** Read the optional sidecar; a malformed sidecar is ignored rather than failing the raw file. */
export function readSidecar(text: string | undefined): SidecarFacts {
  if (!text) return {};
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' ? (v as SidecarFacts) : {};
  } catch {
    return {};
  }
}

/**
 * Map iperf3's error text to a short reason. The agent only ever signals iperf3 at its hard
 * timeout, so iperf3's "interrupt - the client has terminated" means `timeout`.
 */
export function classifyIperf3Error(text: string): string {
  const t = text.toLowerCase();
  if (t.includes('server is busy')) return 'server-busy';
  if (t.includes('connection refused')) return 'connection-refused';
  if (t.includes('interrupt - the client has terminated')) return 'timeout';
  if (t.includes('no route to host')) return 'no-route';
  if (t.includes('timed out')) return 'connect-timeout';
  if (t.includes('name or service not known') || t.includes('failed to resolve')) return 'dns';
  if (t.includes('unable to connect')) return 'connect-failed';
  if (t.includes('control socket has closed') || t.includes('connection reset') || t.includes('unable to receive')) {
    return 'connection-lost';
  }
  return 'iperf3-error';
}

/**
 * Find the first top-level JSON object in `text` and return it with whatever follows it.
 * Throws ParseError when there is no object or it never closes (truncated output).
 */
export function extractJsonObject(text: string): { json: string; trailing: string } {
  const start = text.search(/^\s*\{/m);
  if (start < 0) throw new ParseError('iperf3 output has no JSON object');
  const open = text.indexOf('{', start);
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}') {
      depth--;
      if (depth === 0) return { json: text.slice(open, i + 1), trailing: text.slice(i + 1) };
    }
  }
  throw new ParseError('iperf3 JSON object is truncated (no closing brace)');
}

interface IntervalSum {
  start: number;
  end: number;
  bits_per_second: number;
  retransmits?: number;
  jitter_ms?: number;
  lost_percent?: number;
  omitted?: boolean;
}

interface Iperf3Json {
  start?: {
    timestamp?: { timesecs?: number };
    test_start?: { protocol?: string; num_streams?: number };
  };
  intervals?: { sum?: IntervalSum }[];
  end?: { sum?: IntervalSum };
  error?: string;
  server_output_json?: { intervals?: { sum?: IntervalSum }[] };
  pathbench?: { synthesized?: boolean; reason?: string; startedAtMs?: number; endedAtMs?: number };
}

function isNum(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

/** Parse one repeat's raw iperf3 `-J` stdout (see module header). */
export const parseIperf3: Parser = (raw: string, meta: ParseMeta): SampleRecord[] => {
  const { json, trailing } = extractJsonObject(raw);
  let doc: Iperf3Json;
  try {
    doc = JSON.parse(json) as Iperf3Json;
  } catch (e) {
    throw new ParseError(`iperf3 JSON does not parse: ${(e as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new ParseError('iperf3 output is not a JSON object');
  const side = readSidecar(meta.sidecar);
  const protocol = doc.start?.test_start?.protocol?.toLowerCase() ?? side.mode;
  const streams = doc.start?.test_start?.num_streams ?? side.streams;
  const extras: Record<string, unknown> = {};
  if (protocol !== undefined) extras.mode = protocol;
  if (streams !== undefined) extras.streams = streams;
  if (trailing.trim() !== '') extras.trailing_text = true;
  const base = {
    run_id: meta.runId,
    path_id: meta.pathId,
    probe: meta.probe,
    kind: 'iperf3' as const,
    trial: meta.trial,
    clock: 'tool',
    ...extras,
  };
  const t0 = isNum(doc.start?.timestamp?.timesecs) ? doc.start.timestamp.timesecs * 1000 : undefined;
  const out: SampleRecord[] = [];
  const intervals = Array.isArray(doc.intervals) ? doc.intervals : [];
  const serverIntervals = doc.server_output_json?.intervals;
  intervals.forEach((iv, seq) => {
    const s = iv?.sum;
    if (!s || !isNum(s.bits_per_second) || !isNum(s.start) || !isNum(s.end)) {
      throw new ParseError(`iperf3 interval ${seq} has no sum.bits_per_second/start/end`);
    }
    if (t0 === undefined) throw new ParseError('iperf3 output has intervals but no start.timestamp.timesecs');
    const at = { seq, t_start: t0 + s.start * 1000, t_end: t0 + s.end * 1000, ok: true, scope: 'interval' };
    out.push({ ...base, ...at, metric: 'throughput_bps', value: s.bits_per_second, unit: 'bit/s' });
    if (protocol === 'tcp' && isNum(s.retransmits)) {
      out.push({ ...base, ...at, metric: 'retransmits', value: s.retransmits, unit: 'count' });
    }
    // Per-interval jitter/loss exist only on the receiving side: in server_output_json when the
    // server runs with -J (the runner always asks for --get-server-output on UDP).
    const r = serverIntervals?.[seq]?.sum;
    if (protocol === 'udp' && r && isNum(r.jitter_ms) && isNum(r.lost_percent)) {
      out.push({ ...base, ...at, metric: 'jitter_ms', value: r.jitter_ms, unit: 'ms' });
      out.push({ ...base, ...at, metric: 'lost_percent', value: r.lost_percent, unit: 'percent' });
    }
  });
  const error = typeof doc.error === 'string' ? doc.error : undefined;
  if (error !== undefined || intervals.length === 0) {
    const reason =
      side.reason ?? doc.pathbench?.reason ?? (error !== undefined ? classifyIperf3Error(error) : 'no-intervals');
    const ts = side.startedAtMs ?? doc.pathbench?.startedAtMs ?? t0 ?? 0;
    const te = side.endedAtMs ?? doc.pathbench?.endedAtMs ?? ts;
    out.push({
      ...base,
      seq: intervals.length,
      t_start: ts,
      t_end: te,
      metric: 'throughput_bps',
      value: null,
      unit: 'bit/s',
      ok: false,
      error: reason,
      ...(error !== undefined ? { error_detail: error.slice(0, 300) } : {}),
    });
    flagCreditCliffs(out);
    return out;
  }
  // UDP without per-interval receiver data: the whole-test receiver figures, once per repeat.
  const e = doc.end?.sum;
  if (protocol === 'udp' && !serverIntervals && e && isNum(e.jitter_ms) && isNum(e.lost_percent) && t0 !== undefined) {
    const at = {
      seq: 0,
      t_start: t0 + (e.start ?? 0) * 1000,
      t_end: t0 + (e.end ?? 0) * 1000,
      ok: true,
      scope: 'test',
    };
    out.push({ ...base, ...at, metric: 'jitter_ms', value: e.jitter_ms, unit: 'ms' });
    out.push({ ...base, ...at, metric: 'lost_percent', value: e.lost_percent, unit: 'percent' });
  }
  flagCreditCliffs(out);
  return out;
};
