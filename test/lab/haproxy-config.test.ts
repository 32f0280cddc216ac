import { describe, expect, it } from 'vitest';
import { haproxyConfig } from '../../lab/haproxy-config.js';
import { seed002Profile } from '../../lab/profiles/seed-002-profile.js';

describe('haproxyConfig', () => {
  const p = seed002Profile();

  it('writes an haproxy config per proxy: L7 with upstream reuse, L4 plain', () => {
    const l7 = haproxyConfig(p.proxies![0]);
    expect(l7).toContain('mode http');
    expect(l7).toContain('http-reuse always');
    expect(l7).toContain('bind 127.255.0.1:8080');
    expect(l7).toContain('server s1 10.0.3.10:15000');
    const l4 = haproxyConfig(p.proxies![2]);
    expect(l4).toContain('mode tcp');
    expect(l4).not.toContain('http-reuse');
  });
});
