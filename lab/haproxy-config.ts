import type { LabProxy } from './profiles/lab-profile.js';

/**
 * haproxy's configuration for one lab proxy: one frontend, one server, no health checks (the
 * server starts with the lab), keep-alive and connection reuse towards the server for L7 (as
 * Envoy and Lattice pool upstream connections), plain splicing for L4.
 */
export function haproxyConfig(p: LabProxy): string {
  const http = p.mode === 'http';
  return [
    'global',
    '  maxconn 8192',
    '  nbthread 1',
    'defaults',
    `  mode ${p.mode}`,
    '  timeout connect 2s',
    '  timeout client 30s',
    '  timeout server 30s',
    ...(http ? ['  option http-keep-alive', '  http-reuse always', '  timeout http-keep-alive 30s'] : []),
    `frontend ${p.name}`,
    `  bind ${p.listen.ip}:${p.listen.port}`,
    '  maxconn 8192',
    `  default_backend ${p.name}-up`,
    `backend ${p.name}-up`,
    `  server s1 ${p.server.ip}:${p.server.port} maxconn 8192`,
    '',
  ].join('\n');
}
