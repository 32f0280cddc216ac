/**
 * mtu raw JSON (written by the mtu runner: every ping attempt + the result) → exactly ONE
 * `mtu_bytes` record (unit "bytes"). `icmp-blocked` or a failure is ok:false with that error and
 * value null — never a number, because "no ICMP through the path" (PrivateLink) is not an MTU.
 */
import { ParseError } from '../errors.js';
import type { SampleRecord } from '../model.js';
import type { Parser } from './types.js';

interface MtuRaw {
  tool?: string;
  startedAtMs?: number;
  endedAtMs?: number;
  family?: string;
  attempts?: unknown[];
  result?: { status?: string; mtu?: number; reason?: string };
}

/** Parse the mtu runner's raw JSON (see module header). */
export const parseMtu: Parser = (raw, meta) => {
  let doc: MtuRaw;
  try {
    doc = JSON.parse(raw) as MtuRaw;
  } catch (e) {
    throw new ParseError(`mtu raw file is not JSON: ${(e as Error).message}`);
  }
  const r = doc?.result;
  if (doc?.tool !== 'ping' || !r || typeof r.status !== 'string') {
    throw new ParseError('mtu raw file has no {tool: "ping", result: {status}}');
  }
  const t_start = typeof doc.startedAtMs === 'number' ? doc.startedAtMs : 0;
  const base = {
    run_id: meta.runId,
    path_id: meta.pathId,
    probe: meta.probe,
    kind: 'mtu' as const,
    trial: meta.trial,
    seq: 0,
    t_start,
    t_end: typeof doc.endedAtMs === 'number' ? doc.endedAtMs : t_start,
    metric: 'mtu_bytes',
    unit: 'bytes',
    clock: 'tool',
    attempts: Array.isArray(doc.attempts) ? doc.attempts.length : 0,
    ...(doc.family ? { family: doc.family } : {}),
  };
  let rec: SampleRecord;
  if (r.status === 'ok') {
    if (typeof r.mtu !== 'number' || !Number.isInteger(r.mtu) || r.mtu <= 0) {
      throw new ParseError(`mtu result "ok" needs a positive integer mtu, got ${JSON.stringify(r.mtu)}`);
    }
    rec = { ...base, value: r.mtu, ok: true };
  } else if (r.status === 'icmp-blocked') {
    rec = { ...base, value: null, ok: false, error: 'icmp-blocked' };
  } else if (r.status === 'failed') {
    rec = { ...base, value: null, ok: false, error: r.reason ?? 'failed' };
  } else {
    throw new ParseError(`unknown mtu result status ${JSON.stringify(r.status)}`);
  }
  return [rec];
};
