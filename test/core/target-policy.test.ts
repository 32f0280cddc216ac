/**
 * Targets: the addresses no plan may name, and the operator's allow-list (CIDRs of either family,
 * hostnames by name) as the stack configures it and preflight applies it.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import { forbiddenTarget, parseAllowedTargets, targetRefusal } from '../../core/target-policy.js';

describe('forbiddenTarget', () => {
  it('names the range of a forbidden address and lets hostnames and unicast addresses through', () => {
    expect(forbiddenTarget('169.254.169.254')).toBe(
      '"169.254.169.254" is link-local (169.254.0.0/16, the instance metadata service among them): never a target',
    );
    expect(forbiddenTarget('FF02::1')).toMatch(/multicast \(ff00::\/8\)/);
    for (const host of ['127.0.0.1', '10.0.0.1', '::1', '2001:db8::1', 'instance-data', 'example.com'])
      expect(forbiddenTarget(host)).toBeUndefined();
  });
});

describe('allowedTargets', () => {
  it('allows addresses inside its CIDRs (IPv4 and IPv6) and hostnames by name, refusing the rest', () => {
    const allowed = parseAllowedTargets('["10.1.0.0/16","2001:db8::/32","target.example"]', 'test');
    expect(targetRefusal(allowed, '10.1.255.1')).toBeUndefined();
    expect(targetRefusal(allowed, '2001:db8:1::5')).toBeUndefined();
    expect(targetRefusal(allowed, 'Target.Example')).toBeUndefined();
    expect(targetRefusal(allowed, '10.2.0.1')).toMatch(/"10\.2\.0\.1" is not in the stack's allowedTargets/);
    expect(targetRefusal(allowed, 'sub.target.example')).toMatch(/not in the stack's allowedTargets/);
    // a forbidden address stays forbidden whatever the list says
    expect(targetRefusal(parseAllowedTargets('["0.0.0.0/0"]', 'test'), '169.254.169.254')).toMatch(/never a target/);
    // no list (local runs): anything not forbidden
    expect(targetRefusal(undefined, '203.0.113.9')).toBeUndefined();
  });

  it('refuses a bad entry at deploy, naming the setting and the entry', () => {
    expect(() => parseAllowedTargets('["10.1.0.0/33"]', 'context allowedTargets')).toThrow(ConfigError);
    expect(() => parseAllowedTargets('["10.1.0.0/33"]', 'context allowedTargets')).toThrow(
      'context allowedTargets[0]: expected a CIDR such as "10.1.0.0/16" or "2001:db8::/32", or a hostname, got "10.1.0.0/33"',
    );
    expect(() => parseAllowedTargets('{', 'PATHBENCH_ALLOWED_TARGETS')).toThrow(/PATHBENCH_ALLOWED_TARGETS: not JSON/);
    expect(parseAllowedTargets(undefined, 'x').entries).toEqual([]);
  });
});
