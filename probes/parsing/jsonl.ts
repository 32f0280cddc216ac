/**
 * Shared reading of the agent's own JSON-lines raw formats (tcp-connect, http): one JSON object
 * per line, blank lines skipped, field checks that fail with a one-line ParseError naming the
 * line and field (the line is then rejected; the others are kept).
 */
import { ParseError } from '../../core/errors.js';
import type { SampleRecord } from '../../core/sample-record.js';
import type { LineParser, ParseMeta } from './parser-types.js';

export interface Line {
  /** Where the line is, for error messages: "<kind> line <n>" (1-based). */
  at: string;
  obj: Record<string, unknown>;
}

/** Parse one line's JSON object; throws ParseError naming the line. */
export function jsonLine(text: string, n: number, kind: string): Line {
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch {
    throw new ParseError(`${kind} line ${n}: not JSON: ${text.slice(0, 60)}`);
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
    throw new ParseError(`${kind} line ${n}: not a JSON object`);
  }
  return { at: `${kind} line ${n}`, obj: obj as Record<string, unknown> };
}

/** A LineParser for a JSON-lines format whose every line is one sample record. */
export function jsonLinesParser(
  kind: string,
  toRecord: (line: Line, meta: ParseMeta) => SampleRecord,
): (meta: ParseMeta) => LineParser {
  return (meta) => ({
    line(text, n) {
      if (text.trim() === '') return [];
      return [toRecord(jsonLine(text, n, kind), meta)];
    },
    end: () => [],
  });
}

export function reqNum(o: Record<string, unknown>, k: string, at: string): number {
  const v = o[k];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new ParseError(`${at}: ${k} must be a finite number`);
  return v;
}

/** An integer that JSON carried exactly (|v| ≤ 2^53 − 1). */
export function reqInt(o: Record<string, unknown>, k: string, at: string): number {
  const v = o[k];
  if (!Number.isSafeInteger(v)) throw new ParseError(`${at}: ${k} must be an integer`);
  return v as number;
}

/** A counter or index: an integer 0 … 2^53 − 1. */
export function reqCount(o: Record<string, unknown>, k: string, at: string): number {
  const v = reqInt(o, k, at);
  if (v < 0) throw new ParseError(`${at}: ${k} must be an integer ≥ 0`);
  return v;
}

export function reqBool(o: Record<string, unknown>, k: string, at: string): boolean {
  const v = o[k];
  if (typeof v !== 'boolean') throw new ParseError(`${at}: ${k} must be true or false`);
  return v;
}

export function finiteOrNull(o: Record<string, unknown>, k: string, at: string): number | null {
  const v = o[k];
  if (v === null || v === undefined) return null;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
    throw new ParseError(`${at}: ${k} must be a number ≥ 0 or null`);
  }
  return v;
}

export function optString(o: Record<string, unknown>, k: string, at: string): string | undefined {
  const v = o[k];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new ParseError(`${at}: ${k} must be a string`);
  return v;
}
