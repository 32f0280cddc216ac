/**
 * Shared reading of the agent's own JSON-lines raw formats (tcp-connect, http): line splitting
 * and field checks that fail with a one-line ParseError naming the line and field.
 */
import { ParseError } from '../errors.js';

export interface Line {
  /** Where the line is, for error messages: "<kind> line <n>" (1-based). */
  at: string;
  obj: Record<string, unknown>;
}

/** Split raw text into JSON objects, skipping blank lines; empty input is an error. */
export function jsonLines(raw: string, kind: string): Line[] {
  const out: Line[] = [];
  const lines = raw.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i].trim();
    if (text === '') continue;
    let obj: unknown;
    try {
      obj = JSON.parse(text);
    } catch {
      throw new ParseError(`${kind} line ${i + 1}: not JSON: ${text.slice(0, 60)}`);
    }
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
      throw new ParseError(`${kind} line ${i + 1}: not a JSON object`);
    }
    out.push({ at: `${kind} line ${i + 1}`, obj: obj as Record<string, unknown> });
  }
  if (out.length === 0) throw new ParseError(`${kind}: no JSON lines in input`);
  return out;
}

export function reqNum(o: Record<string, unknown>, k: string, at: string): number {
  const v = o[k];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new ParseError(`${at}: ${k} must be a finite number`);
  return v;
}

export function reqInt(o: Record<string, unknown>, k: string, at: string): number {
  const v = o[k];
  if (!Number.isInteger(v)) throw new ParseError(`${at}: ${k} must be an integer`);
  return v as number;
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
