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
 * Burst-credit cliffs are flagged on the throughput records (core/credit.ts).
 */
import { flagCreditCliffs } from '../../core/credit.js';
import { ParseError } from '../../core/errors.js';
import type { SampleRecord } from '../../core/sample-record.js';
import { closeTruncatedJson } from '../parsing/json-repair.js';
import type { EndContext, LineParser, ParseMeta } from '../parsing/parser-types.js';
import { strictParser } from '../parsing/strict.js';

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

/** Read the optional sidecar; a malformed sidecar, or a field of the wrong type, is ignored rather than failing the raw file. */
export function readSidecar(text: string | undefined): SidecarFacts {
  if (!text) return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return {};
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return {};
  const o = v as Record<string, unknown>;
  const out: SidecarFacts = {};
  for (const k of ['startedAtMs', 'endedAtMs', 'monotonicToEpochMs'] as const) {
    if (typeof o[k] === 'number' && Number.isFinite(o[k])) out[k] = o[k];
  }
  if (Number.isSafeInteger(o.streams) && (o.streams as number) > 0) out.streams = o.streams as number;
  for (const k of ['reason', 'mode'] as const) {
    if (typeof o[k] === 'string' && o[k] !== '') out[k] = (o[k] as string).slice(0, 100);
  }
  return out;
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

/** A finite number ≥ 0. */
function isNonNeg(v: unknown): v is number {
  return isNum(v) && v >= 0;
}

/**
 * Why one interval cannot be kept ("iperf3 interval <i>: <field> …"), or undefined. Checked
 * before any of its records is made, so an interval is kept or rejected whole.
 */
function intervalProblem(s: IntervalSum | undefined, seq: number, r: IntervalSum | undefined): string | undefined {
  const at = `iperf3 interval ${seq}`;
  if (!s || typeof s !== 'object') return `${at}: sum is missing`;
  if (!isNonNeg(s.bits_per_second)) return `${at}: sum.bits_per_second must be a finite number ≥ 0`;
  if (!isNum(s.start)) return `${at}: sum.start must be a finite number`;
  if (!isNum(s.end)) return `${at}: sum.end must be a finite number`;
  if (s.retransmits !== undefined && !(Number.isSafeInteger(s.retransmits) && s.retransmits >= 0)) {
    return `${at}: sum.retransmits must be an integer ≥ 0`;
  }
  if (r && r.jitter_ms !== undefined && !isNonNeg(r.jitter_ms)) return `${at}: server sum.jitter_ms must be ≥ 0`;
  if (r && r.lost_percent !== undefined && !isNonNeg(r.lost_percent))
    return `${at}: server sum.lost_percent must be ≥ 0`;
  return undefined;
}

/** Read the document out of the raw text: whole, repaired after a truncation, or not at all. */
function readDocument(
  raw: string,
  ctx: EndContext,
): { doc: Iperf3Json; trailing: string; truncated: boolean } | undefined {
  let json: string;
  let trailing = '';
  let truncated = false;
  try {
    ({ json, trailing } = extractJsonObject(raw));
  } catch (e) {
    const repaired = /truncated/.test((e as Error).message) ? closeTruncatedJson(raw, 2) : undefined;
    if (repaired === undefined) {
      ctx.reject((e as Error).message);
      return undefined;
    }
    ctx.truncated('iperf3 JSON is truncated: kept every complete interval');
    truncated = true;
    json = repaired;
  }
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch (e) {
    ctx.reject(`iperf3 JSON does not parse: ${(e as Error).message}`);
    return undefined;
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) {
    ctx.reject('iperf3 output is not a JSON object');
    return undefined;
  }
  return { doc: doc as Iperf3Json, trailing, truncated };
}

/** The line parser for one repeat's raw iperf3 `-J` stdout (see module header): buffers, parses at the end. */
export function iperf3Lines(meta: ParseMeta): LineParser {
  const parts: string[] = [];
  return {
    line(text) {
      parts.push(text);
      return [];
    },
    end(ctx) {
      return iperf3Records(parts.join('\n'), meta, ctx);
    },
  };
}

function iperf3Records(raw: string, meta: ParseMeta, ctx: EndContext): SampleRecord[] {
  const read = readDocument(raw, ctx);
  if (!read) return [];
  const { doc, trailing, truncated } = read;
  const side = readSidecar(meta.sidecar);
  const proto = doc.start?.test_start?.protocol;
  const protocol = typeof proto === 'string' ? proto.toLowerCase() : side.mode;
  const n = doc.start?.test_start?.num_streams;
  const streams = Number.isSafeInteger(n) ? n : side.streams;
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
  const ts = doc.start?.timestamp?.timesecs;
  const t0 = isNum(ts) ? ts * 1000 : undefined;
  const out: SampleRecord[] = [];
  const intervals = Array.isArray(doc.intervals) ? doc.intervals : [];
  const serverIntervals = Array.isArray(doc.server_output_json?.intervals)
    ? doc.server_output_json.intervals
    : undefined;
  ctx.units(intervals.length);
  let kept = 0;
  intervals.forEach((iv, seq) => {
    const s = iv && typeof iv === 'object' ? iv.sum : undefined;
    const rv = serverIntervals?.[seq];
    const r = rv && typeof rv === 'object' && rv.sum && typeof rv.sum === 'object' ? rv.sum : undefined;
    const problem =
      t0 === undefined ? `iperf3 interval ${seq}: start.timestamp.timesecs is missing` : intervalProblem(s, seq, r);
    if (problem || !s || t0 === undefined) {
      ctx.reject(problem ?? `iperf3 interval ${seq}: sum is missing`);
      return;
    }
    kept++;
    const at = { seq, t_start: t0 + s.start * 1000, t_end: t0 + s.end * 1000, ok: true, scope: 'interval' };
    out.push({ ...base, ...at, metric: 'throughput_bps', value: s.bits_per_second, unit: 'bit/s' });
    if (protocol === 'tcp' && isNum(s.retransmits)) {
      out.push({ ...base, ...at, metric: 'retransmits', value: s.retransmits, unit: 'count' });
    }
    // Per-interval jitter/loss exist only on the receiving side: in server_output_json when the
    // server runs with -J (the runner always asks for --get-server-output on UDP).
    if (protocol === 'udp' && r && isNum(r.jitter_ms) && isNum(r.lost_percent)) {
      out.push({ ...base, ...at, metric: 'jitter_ms', value: r.jitter_ms, unit: 'ms' });
      out.push({ ...base, ...at, metric: 'lost_percent', value: r.lost_percent, unit: 'percent' });
    }
  });
  const error = typeof doc.error === 'string' ? doc.error : undefined;
  const pb = doc.pathbench && typeof doc.pathbench === 'object' ? doc.pathbench : undefined;
  if (error !== undefined || (intervals.length === 0 && ctx.rejected === 0)) {
    const reason =
      side.reason ??
      (typeof pb?.reason === 'string' ? pb.reason : undefined) ??
      (error !== undefined ? classifyIperf3Error(error) : truncated ? 'truncated' : 'no-intervals');
    const tStart = side.startedAtMs ?? (isNum(pb?.startedAtMs) ? pb.startedAtMs : undefined) ?? t0 ?? 0;
    const tEnd = side.endedAtMs ?? (isNum(pb?.endedAtMs) ? pb.endedAtMs : undefined) ?? tStart;
    out.push({
      ...base,
      seq: intervals.length,
      t_start: tStart,
      t_end: tEnd,
      metric: 'throughput_bps',
      value: null,
      unit: 'bit/s',
      ok: false,
      error: reason.slice(0, 100),
      ...(error !== undefined ? { error_detail: error.slice(0, 300) } : {}),
    });
    flagCreditCliffs(out);
    return out;
  }
  // UDP without per-interval receiver data: the whole-test receiver figures, once per repeat.
  const e = doc.end?.sum;
  if (
    protocol === 'udp' &&
    !serverIntervals &&
    e &&
    isNonNeg(e.jitter_ms) &&
    isNonNeg(e.lost_percent) &&
    t0 !== undefined &&
    kept > 0
  ) {
    const at = {
      seq: 0,
      t_start: t0 + (isNum(e.start) ? e.start : 0) * 1000,
      t_end: t0 + (isNum(e.end) ? e.end : 0) * 1000,
      ok: true,
      scope: 'test',
    };
    out.push({ ...base, ...at, metric: 'jitter_ms', value: e.jitter_ms, unit: 'ms' });
    out.push({ ...base, ...at, metric: 'lost_percent', value: e.lost_percent, unit: 'percent' });
  }
  flagCreditCliffs(out);
  return out;
}

/** Strict whole-text form (see strict.ts). */
export const parseIperf3 = strictParser('iperf3', iperf3Lines);
