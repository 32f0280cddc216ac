/**
 * parseHttp on raw output produced by the real http runner against the agent's own loopback
 * HTTP server (keep-alive on and off, a 400 answer, a closed port). Hand-written input is in
 * http.test.ts.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServers, startServers } from '../../../agent/server.js';
import { parseHttp } from '../../../probes/http/http.parser.js';
import { runHttp } from '../../../probes/http/http.runner.js';
import type { HttpProbe } from '../../../probes/http/http.schema.js';

const META = { runId: 'r1', pathId: 'p1', probe: 'http', trial: 1 };
let dir: string;
let servers: RunningServers;

function probe(name: string, over: Partial<HttpProbe>): HttpProbe {
  return {
    kind: 'http',
    name,
    count: 40,
    concurrency: 2,
    keepAlive: true,
    payloadBytes: 1024,
    trials: 1,
    timeoutMs: 2000,
    port: servers.ports.http,
    ...over,
  };
}

async function run(p: HttpProbe) {
  const outcome = await runHttp(p, { target: { host: 'localhost', port: 1 }, outDir: dir, log: () => {} });
  const raws = await Promise.all(outcome.files.map((f) => readFile(path.join(dir, f), 'utf8')));
  return { outcome, raws };
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'pb-http-parse-'));
  servers = await startServers({ host: '127.0.0.1', http: 0 });
});
afterAll(async () => {
  await servers.close();
  await rm(dir, { recursive: true, force: true });
});

describe('parseHttp on real agent output', () => {
  it('parses keep-alive trials: one record per request, connections reused', async () => {
    const { outcome, raws } = await run(probe('ka', { trials: 2 }));
    expect(outcome).toMatchObject({ status: 'ok', trials: 2, files: ['ka/1.jsonl', 'ka/2.jsonl'] });
    for (const [i, raw] of raws.entries()) {
      const recs = parseHttp(raw, { ...META, probe: 'ka', trial: i + 1 });
      expect(recs).toHaveLength(40);
      expect(new Set(recs.map((r) => r.seq)).size).toBe(40);
      for (const r of recs) {
        expect(r).toMatchObject({ kind: 'http', probe: 'ka', trial: i + 1, metric: 'http_latency_ms', unit: 'ms' });
        expect(r).toMatchObject({ ok: true, status: 200, bytes: 1024 });
        expect(r.value).toBeGreaterThan(0);
        expect(r.t_end).toBeGreaterThanOrEqual(r.t_start);
      }
      // Two workers on a keep-alive agent: at most two client connections for 40 requests.
      expect(new Set(recs.map((r) => r.local_port)).size).toBeLessThanOrEqual(2);
    }
  });

  it('parses keep-alive-off runs: a new connection per request', async () => {
    const { raws } = await run(probe('noka', { keepAlive: false, concurrency: 1, count: 30 }));
    const recs = parseHttp(raws[0], META);
    expect(recs.every((r) => r.ok && r.bytes === 1024)).toBe(true);
    expect(new Set(recs.map((r) => r.local_port)).size).toBe(30);
  });

  it('keeps non-2xx answers as failed samples with the status', async () => {
    // The server refuses payloads over 100 MiB with 400.
    const { outcome, raws } = await run(probe('too-big', { payloadBytes: 200 * 1024 * 1024, count: 3 }));
    const recs = parseHttp(raws[0], META);
    expect(outcome.status).toBe('failed');
    for (const r of recs) expect(r).toMatchObject({ ok: false, value: null, error: 'http-400', status: 400 });
  });

  it('keeps refused connections as failed samples', async () => {
    const s = net.createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as net.AddressInfo).port;
    await new Promise((r) => s.close(r));
    const { raws } = await run(probe('closed', { port, count: 3 }));
    const recs = parseHttp(raws[0], META);
    expect(recs).toHaveLength(3);
    for (const r of recs) expect(r).toMatchObject({ ok: false, value: null, error: 'refused', bytes: 0 });
  });
});
