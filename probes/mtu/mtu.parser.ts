/**
 * mtu raw JSON (written by the mtu runner: every ping attempt + the result) → exactly ONE
 * `mtu_bytes` record (unit "bytes"). `icmp-blocked` or a failure is ok:false with that error and
 * value null — never a number, because "no ICMP through the path" (PrivateLink) is not an MTU.
 * The document is small; it is buffered and read at the end (its one unit: the result).
 */
import { z } from 'zod';
import { ParseError } from '../../core/errors.js';
import type { SampleRecord } from '../../core/sample-record.js';
import type { LineParser, ParseMeta } from '../parsing/parser-types.js';
import { strictParser } from '../parsing/strict.js';

/**
 * The runner's document as far as the record needs it. A field of the wrong type reads as absent
 * (the record then goes without it); only `tool` and `result.status` are required, checked below
 * with messages of their own, and `result.mtu` is judged there too.
 */
const mtuRawSchema = z.object({
  tool: z.unknown().optional(),
  startedAtMs: z.number().optional().catch(undefined),
  endedAtMs: z.number().optional().catch(undefined),
  family: z.string().optional().catch(undefined),
  attempts: z.array(z.unknown()).optional().catch(undefined),
  result: z
    .object({ status: z.string(), mtu: z.unknown().optional(), reason: z.string().optional().catch(undefined) })
    .optional()
    .catch(undefined),
});

function mtuRecord(raw: string, meta: ParseMeta): SampleRecord {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (e) {
    throw new ParseError(`mtu raw file is not JSON: ${(e as Error).message}`);
  }
  const parsed = mtuRawSchema.safeParse(json);
  const doc = parsed.success ? parsed.data : undefined;
  const r = doc?.result;
  if (doc?.tool !== 'ping' || !r) {
    throw new ParseError('mtu raw file has no {tool: "ping", result: {status}}');
  }
  const t_start = doc.startedAtMs ?? 0;
  const base = {
    run_id: meta.runId,
    path_id: meta.pathId,
    probe: meta.probe,
    kind: 'mtu' as const,
    trial: meta.trial,
    seq: 0,
    t_start,
    t_end: doc.endedAtMs ?? t_start,
    metric: 'mtu_bytes',
    unit: 'bytes',
    clock: 'tool',
    attempts: Array.isArray(doc.attempts) ? doc.attempts.length : 0,
    ...(doc.family ? { family: doc.family.slice(0, 20) } : {}),
  };
  if (r.status === 'ok') {
    if (typeof r.mtu !== 'number' || !Number.isInteger(r.mtu) || r.mtu <= 0) {
      throw new ParseError(`mtu result.mtu: "ok" needs a positive integer mtu, got ${JSON.stringify(r.mtu)}`);
    }
    return { ...base, value: r.mtu, ok: true };
  }
  if (r.status === 'icmp-blocked') return { ...base, value: null, ok: false, error: 'icmp-blocked' };
  if (r.status === 'failed') {
    const reason = r.reason ? r.reason.slice(0, 200) : 'failed';
    return { ...base, value: null, ok: false, error: reason };
  }
  throw new ParseError(`unknown mtu result status ${JSON.stringify(r.status).slice(0, 60)}`);
}

/** The line parser for the mtu runner's raw JSON (see module header). */
export function mtuLines(meta: ParseMeta): LineParser {
  const parts: string[] = [];
  return {
    line(text) {
      parts.push(text);
      return [];
    },
    end(ctx) {
      ctx.units(1);
      try {
        return [mtuRecord(parts.join('\n'), meta)];
      } catch (e) {
        if (!(e instanceof ParseError)) throw e;
        ctx.reject(e.message);
        return [];
      }
    },
  };
}

/** Strict whole-text form (see strict.ts). */
export const parseMtu = strictParser('mtu', mtuLines);
