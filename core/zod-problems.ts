/**
 * zod issues → problems a person can act on: "dotted.path[i]: what is wrong", in the order the
 * fields are written. Shared by the plan (core/plan.ts), the agent's spec (core/agent-spec.ts)
 * and the checked readers of stored documents (core/stored-document.ts).
 */
import type { z } from 'zod';
import { PROBE_KINDS } from '../probes/index.js';
import { type Issue, quoted, shown, typeName } from './fields.js';

export type Key = PropertyKey;

/** One problem: where in the document, and what is wrong there. */
export interface Problem {
  path: readonly Key[];
  message: string;
}

export type Rec = Record<string, unknown>;
export const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keys longer than this are shown quoted and cut short (core/fields.ts quoted), not whole. */
const MAX_PLAIN_KEY = 60;

/**
 * Render a zod-style path as `paths[2].target.port`; the empty path is the document itself
 * (`root`). A key that is not a short identifier is shown quoted, cut short.
 */
export function formatPath(path: readonly Key[], root = 'plan'): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else {
      const s = String(key);
      if (s.length <= MAX_PLAIN_KEY && /^[A-Za-z_$][\w$]*$/.test(s)) out += out ? `.${s}` : s;
      else out += `[${quoted(s)}]`;
    }
  }
  return out || root;
}

const KINDS_LIST = PROBE_KINDS.join(', ');

/** Messages for issues whose field carries no message of its own (pass as `error` to safeParse). */
export function fallbackMessage(iss: Issue): string | undefined {
  switch (iss.code) {
    case 'invalid_type':
      if (iss.input === undefined) return 'required';
      // JSON's 1e400 reads as Infinity: a number, but not one zod (or anything after it) takes.
      if (iss.expected === 'number' && typeof iss.input === 'number')
        return `expected a finite number, got ${iss.input}`;
      return `expected ${iss.expected}, got ${typeName(iss.input)}`;
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
      for (const key of iss.keys) out.push({ path: [...iss.path, key], message: `unknown field ${quoted(key)}` });
    } else {
      out.push({ path: iss.path, message: iss.message });
    }
  }
  return out;
}

/**
 * Where a field sits in the written document: array indices, and for object keys their position
 * in the object as written (a missing key sorts after the present ones). Each object's keys are
 * read once into `seen` and looked up from there, so placing n problems costs O(n), not O(n × keys).
 */
function documentPosition(raw: unknown, path: readonly Key[], seen: WeakMap<object, Map<string, number>>): number[] {
  const out: number[] = [];
  let node = raw;
  for (const key of path) {
    if (typeof key === 'number') {
      out.push(key);
      node = Array.isArray(node) ? node[key] : undefined;
    } else if (isRecord(node)) {
      let at = seen.get(node);
      if (!at) {
        at = new Map(Object.keys(node).map((k, i) => [k, i]));
        seen.set(node, at);
      }
      out.push(at.get(String(key)) ?? at.size);
      node = node[String(key)];
    } else {
      out.push(0);
      node = undefined;
    }
  }
  return out;
}

/** Problems sorted as the fields appear in the document, so each part's problems read together. */
export function inDocumentOrder(raw: unknown, problems: readonly Problem[]): Problem[] {
  const seen = new WeakMap<object, Map<string, number>>();
  const keyed = problems.map((p) => ({ p, pos: documentPosition(raw, p.path, seen) }));
  keyed.sort((a, b) => {
    for (let i = 0; i < Math.min(a.pos.length, b.pos.length); i++)
      if (a.pos[i] !== b.pos[i]) return a.pos[i] - b.pos[i];
    return a.pos.length - b.pos.length;
  });
  return keyed.map((k) => k.p);
}

/**
 * The most problems listed one a line; any more are counted on a last line of their own
 * ("plan: and 19,900 more problems (the first 100 are listed)"), so a hostile document cannot
 * turn its problems into megabytes of text.
 */
export const MAX_PROBLEM_LINES = 100;

const MORE_PROBLEMS = /: and ([\d,]+) more problems? \(the first \d+ are listed\)$/;

/**
 * Each problem as one line, "path: message", in document order and without repeats; at most
 * `max` of them, then a line counting the rest.
 */
export function problemLines(
  raw: unknown,
  problems: readonly Problem[],
  root: string,
  max = MAX_PROBLEM_LINES,
): string[] {
  const lines = [...new Set(inDocumentOrder(raw, problems).map((p) => `${formatPath(p.path, root)}: ${p.message}`))];
  if (lines.length <= max) return lines;
  const more = lines.length - max;
  return [
    ...lines.slice(0, max),
    `${root}: and ${more.toLocaleString('en-US')} more problem${more === 1 ? '' : 's'} (the first ${max} are listed)`,
  ];
}

/** How many problems the lines of {@link problemLines} stand for (the last line may count the rest). */
export function problemCount(lines: readonly string[]): number {
  const more = lines.length > 0 ? MORE_PROBLEMS.exec(lines[lines.length - 1]) : null;
  return more ? lines.length - 1 + Number(more[1].replaceAll(',', '')) : lines.length;
}
