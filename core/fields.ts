/**
 * Field schemas whose messages say what was expected and what was received — zod's default
 * messages say neither. Shared by the contracts (the probes' schemas, the agent's spec in
 * core/agent-spec.ts) and the plan (core/plan-input.ts); imports nothing of ours but printable.ts,
 * so all of them can use it.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { printable } from './printable.js';

export type Issue = z.core.$ZodRawIssue;

export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** How a received value is shown after "got": numbers by value, anything else by type. */
export function shown(v: unknown): string {
  return typeof v === 'number' ? String(v) : typeName(v);
}

/** A received string, quoted and cut short so one bad field cannot flood the output. */
export function quoted(v: unknown): string {
  if (typeof v !== 'string') return typeName(v);
  const s = v.length > 60 ? `${v.slice(0, 57)}...` : v;
  return printable(JSON.stringify(s));
}

/** The message for a missing value (a plan's options have defaults; a spec's must be present). */
const orRequired = (message: (iss: Issue) => string) => (iss: Issue) =>
  iss.input === undefined ? 'required' : message(iss);

export function intIn(min: number, max: number) {
  const range = orRequired((iss) => `expected an integer ${min}–${max}, got ${shown(iss.input)}`);
  return z
    .number({ error: range })
    .int({ error: range })
    .min(min, { error: (iss) => `expected an integer ≥ ${min}, got ${shown(iss.input)}` })
    .max(max, { error: range });
}

export function numberIn(min: number, max: number) {
  const range = orRequired((iss) => `expected a number ${min}–${max}, got ${shown(iss.input)}`);
  return z.number({ error: range }).min(min, { error: range }).max(max, { error: range });
}

/** A non-empty string matching `re`; `what` describes the expected form in the message. */
export function matching(re: RegExp, what: string, maxLength = Number.POSITIVE_INFINITY) {
  return z.string().refine((s) => s.length <= maxLength && re.test(s), {
    error: (iss) => `expected ${what}, got ${iss.input === '' ? 'an empty string' : quoted(iss.input)}`,
  });
}

const HOST_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/**
 * True for a DNS hostname (RFC 1123 labels) or an IPv4/IPv6 literal. The host reaches tool
 * command lines (iperf3, sockperf, ping), so anything else — spaces, shell metacharacters,
 * slashes, URLs, IPv6 zone ids — is refused here rather than escaped later.
 */
export function isValidHost(host: string): boolean {
  if (host.includes('%')) return false;
  if (isIP(host) !== 0) return true;
  if (host.length === 0 || host.length > 253) return false;
  // An all-numeric dotted string that isIP rejected is a mistyped address, not a hostname.
  if (/^[\d.]+$/.test(host)) return false;
  return host.split('.').every((label) => HOST_LABEL.test(label));
}

/** Safe identifier: used in S3 keys, SQL values and file names. */
export const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

/** A safe id in a message that says what was expected and what was received. */
export const safeId = matching(
  SAFE_ID,
  'a safe id (letters, digits, "-", "_", starting with a letter or digit, at most 63 characters)',
);
