/**
 * Which hosts a path may target. Some addresses are never a measurement's target — the
 * unspecified address, broadcast and reserved space, multicast, link-local (the instance
 * metadata service at 169.254.169.254 among them) and AWS's instance services on IPv6 — and are
 * refused in every plan (core/resolved-plan.ts targetSchema). Beyond that, the operator may set
 * an allow-list at deploy time (stack configuration `allowedTargets`, docs/aws.md "Who can be
 * a target"), checked by preflight (functions/pipeline/preflight.ts): CIDRs for address
 * targets, names for hostname targets. Pure: no I/O, no name resolution.
 */
import { BlockList, isIP } from 'node:net';
import { z } from 'zod';
import { ConfigError } from './errors.js';
import { isValidHost, quoted } from './fields.js';

/** Address ranges no plan may target, with why (first match wins: the narrower first). */
const FORBIDDEN: readonly { net: string; prefix: number; why: string }[] = [
  { net: '0.0.0.0', prefix: 32, why: 'the unspecified address' },
  { net: '0.0.0.0', prefix: 8, why: '"this network" (0.0.0.0/8)' },
  { net: '169.254.0.0', prefix: 16, why: 'link-local (169.254.0.0/16, the instance metadata service among them)' },
  { net: '224.0.0.0', prefix: 4, why: 'multicast (224.0.0.0/4)' },
  { net: '240.0.0.0', prefix: 4, why: 'reserved (240.0.0.0/4, the broadcast address among them)' },
  { net: '::', prefix: 128, why: 'the unspecified address' },
  { net: 'ff00::', prefix: 8, why: 'multicast (ff00::/8)' },
  { net: 'fe80::', prefix: 10, why: 'link-local (fe80::/10)' },
  { net: 'fd00:ec2::', prefix: 32, why: "AWS's instance services (fd00:ec2::/32: metadata, DNS, time)" },
];

const family = (address: string): 'ipv4' | 'ipv6' => (isIP(address) === 4 ? 'ipv4' : 'ipv6');

/** One list per range, so a match can say which range and why. */
const forbidden = FORBIDDEN.map((f) => {
  const list = new BlockList();
  list.addSubnet(f.net, f.prefix, family(f.net));
  return { list, why: f.why };
});

/**
 * Why `host` may never be a target, or undefined. Only address literals are judged (IPv4-mapped
 * IPv6 as the IPv4 address it carries); a hostname is the allow-list's to judge.
 */
export function forbiddenTarget(host: string): string | undefined {
  if (isIP(host) === 0) return undefined;
  const hit = forbidden.find((f) => f.list.check(host, family(host)));
  return hit ? `${quoted(host)} is ${hit.why}: never a target` : undefined;
}

/** A CIDR of either family ("10.1.0.0/16", "2001:db8::/32"), or undefined when `s` is not one. */
function parseCidr(s: string): { net: string; prefix: number; type: 'ipv4' | 'ipv6' } | undefined {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(s);
  if (!m) return undefined;
  const version = isIP(m[1]);
  const prefix = Number(m[2]);
  if (version === 0 || prefix > (version === 4 ? 32 : 128)) return undefined;
  return { net: m[1], prefix, type: version === 4 ? 'ipv4' : 'ipv6' };
}

const entrySchema = z.string().refine((s) => parseCidr(s) !== undefined || (isIP(s) === 0 && isValidHost(s)), {
  error: (iss) => `expected a CIDR such as "10.1.0.0/16" or "2001:db8::/32", or a hostname, got ${quoted(iss.input)}`,
});
export const allowedTargetsSchema = z.array(entrySchema);

/** The operator's allow-list: CIDRs for address targets, exact names (any case) for hostname targets. */
export interface AllowedTargets {
  /** The entries as configured (shown in refusals). */
  entries: readonly string[];
  cidrs: BlockList;
  names: ReadonlySet<string>;
}

/** Check a configured allow-list (JSON already parsed); errors name the entry. */
export function checkAllowedTargets(raw: unknown, source: string): AllowedTargets {
  const r = allowedTargetsSchema.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0];
    const at = i.path.map((p) => `[${String(p)}]`).join('');
    throw new ConfigError(`${source}${at}: ${i.message}`);
  }
  const cidrs = new BlockList();
  const names = new Set<string>();
  for (const e of r.data) {
    const cidr = parseCidr(e);
    if (cidr) cidrs.addSubnet(cidr.net, cidr.prefix, cidr.type);
    else names.add(e.toLowerCase().replace(/\.$/, ''));
  }
  return { entries: r.data, cidrs, names };
}

/**
 * Parse the allow-list (JSON text: a list of strings). A missing list allows nothing, as the
 * routes' does (the stack always sets it; a local run has no list and allows every target).
 */
export function parseAllowedTargets(text: string | undefined, source: string): AllowedTargets {
  if (text === undefined || text.trim() === '') return checkAllowedTargets([], source);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`${source}: not JSON (${(e as Error).message})`);
  }
  return checkAllowedTargets(raw, source);
}

/** The allow-list's entries for a message: the first few and how many more. */
function shownEntries(entries: readonly string[]): string {
  if (entries.length === 0) return 'none allowed';
  const head = entries.slice(0, 10).join(', ');
  return `allowed: ${entries.length > 10 ? `${head} and ${entries.length - 10} more` : head}`;
}

/**
 * Why `host` may not be targeted under the allow-list, or undefined when it may. `allowed`
 * undefined: no list (local runs), every target that is not forbidden is allowed.
 */
export function targetRefusal(allowed: AllowedTargets | undefined, host: string): string | undefined {
  const never = forbiddenTarget(host);
  if (never) return never;
  if (allowed === undefined) return undefined;
  const ok =
    isIP(host) !== 0
      ? allowed.cidrs.check(host, family(host))
      : allowed.names.has(host.toLowerCase().replace(/\.$/, ''));
  if (ok) return undefined;
  return `${quoted(host)} is not in the stack's allowedTargets (${shownEntries(allowed.entries)}); redeploy with it to allow it`;
}
