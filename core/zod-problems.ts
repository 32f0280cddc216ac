/**
 * zod issues → problems a person can act on: "dotted.path[i]: what is wrong", in the order the
 * fields are written. Shared by the plan (core/plan.ts), the agent's spec (core/agent-spec.ts)
 * and the checked readers of stored documents (core/stored-document.ts).
 */
import type { z } from 'zod';
import { PROBE_KINDS } from '../probes/index.js';
import { type Issue, quoted, shown, typeName } from './fields.js';
import { printable } from './printable.js';

export type Key = PropertyKey;

/** One problem: where in the document, and what is wrong there. */
export interface Problem {
  path: readonly Key[];
  message: string;
}

export type Rec = Record<string, unknown>;
export const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Render a zod-style path as `paths[2].target.port`; the empty path is the document itself (`root`). */
export function formatPath(path: readonly Key[], root = 'plan'): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else {
      const s = String(key);
      if (/^[A-Za-z_$][\w$]*$/.test(s)) out += out ? `.${s}` : s;
      else out += `[${printable(JSON.stringify(s))}]`;
    }
  }
  return out || root;
}

const KINDS_LIST = PROBE_KINDS.join(', ');

/** Messages for issues whose field carries no message of its own (pass as `error` to safeParse). */
export function fallbackMessage(iss: Issue): string | undefined {
  switch (iss.code) {
    case 'invalid_type':
      return iss.input === undefined ? 'required' : `expected ${iss.expected}, got ${typeName(iss.input)}`;
    case 'invalid_value': {
      const allowed = iss.values.map((v) => JSON.stringify(v)).join(' or ');
      return `expected ${allowed}, got ${typeof iss.input === 'string' ? quoted(iss.input) : shown(iss.input)}`;
    }
    case 'invalid_union': {
      // discriminatedUnion puts the probe object in `input` and "kind" at the end of the path.
      if (iss.discriminator !== undefined) {
        const kind = (iss.input as Record<string, unknown> | undefined)?.[iss.discriminator];
        if (kind === undefined) return `required (expected ${KINDS_LIST})`;
        if (typeof kind !== 'string') return `expected one of ${KINDS_LIST}, got ${typeName(kind)}`;
        return `unknown probe kind ${quoted(kind)} (expected ${KINDS_LIST})`;
      }
      return 'does not match any allowed shape';
    }
    case 'too_small':
      if (iss.origin === 'string') return 'expected a non-empty string';
      if (iss.origin === 'array') return `expected at least ${iss.minimum} item(s)`;
      return undefined;
    default:
      return undefined;
  }
}

/** zod's issues as problems; an unknown key is a problem of its own, at the key. */
export function issueProblems(issues: readonly z.core.$ZodIssue[]): Problem[] {
  const out: Problem[] = [];
  for (const iss of issues) {
    if (iss.code === 'unrecognized_keys') {
      // One problem per key, at the key itself, so the typo is the first thing the reader sees.
      for (const key of iss.keys)
        out.push({ path: [...iss.path, key], message: `unknown field ${printable(JSON.stringify(key))}` });
    } else {
      out.push({ path: iss.path, message: iss.message });
    }
  }
  return out;
}

/**
 * Where a field sits in the written document: array indices, and for object keys their position
 * in the object as written (a missing key sorts after the present ones).
 */
function documentPosition(raw: unknown, path: readonly Key[]): number[] {
  const out: number[] = [];
  let node = raw;
  for (const key of path) {
    if (typeof key === 'number') {
      out.push(key);
      node = Array.isArray(node) ? node[key] : undefined;
    } else {
      const keys = isRecord(node) ? Object.keys(node) : [];
      const at = keys.indexOf(String(key));
      out.push(at === -1 ? keys.length : at);
      node = isRecord(node) ? node[String(key)] : undefined;
    }
  }
  return out;
}

/** Problems sorted as the fields appear in the document, so each part's problems read together. */
export function inDocumentOrder(raw: unknown, problems: readonly Problem[]): Problem[] {
  const keyed = problems.map((p) => ({ p, pos: documentPosition(raw, p.path) }));
  keyed.sort((a, b) => {
    for (let i = 0; i < Math.min(a.pos.length, b.pos.length); i++)
      if (a.pos[i] !== b.pos[i]) return a.pos[i] - b.pos[i];
    return a.pos.length - b.pos.length;
  });
  return keyed.map((k) => k.p);
}

/** Each problem as one line, "path: message", in document order and without repeats. */
export function problemLines(raw: unknown, problems: readonly Problem[], root: string): string[] {
  return [...new Set(inDocumentOrder(raw, problems).map((p) => `${formatPath(p.path, root)}: ${p.message}`))];
}
