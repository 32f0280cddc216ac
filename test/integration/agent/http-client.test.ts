/**
 * The http probe's own client against real servers on loopback that answer the way front ends
 * in the wild do: chunked bodies, `Connection: close` in the middle of a keep-alive run, an
 * answer cut short, and something that is not HTTP at all.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHttp } from '../../../functions/agent/probes/http.js';
import type { HttpProbe } from '../../../functions/core/model.js';
import { parseHttp } from '../../../functions/core/parsers/http.js';

let dir: string;
const closers: (() => Promise<void>)[] = [];

/** Listen on loopback; at the end, every connection the probe left open is counted, then closed. */
const leftOpen: number[] = [];
async function listen(server: net.Server): Promise<number> {
  const socks = new Set<net.Socket>();
  server.on('connection', (s: net.Socket) => {
    socks.add(s);
    s.on('close', () => socks.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        leftOpen.push(socks.size);
        for (const s of socks) s.destroy();
        server.close(() => r());
      }),
  );
  return (server.address() as net.AddressInfo).port;
}

async function probeAt(port: number, over: Partial<HttpProbe> = {}) {
  const p: HttpProbe = {
    kind: 'http',
    name: `h${port}`,
    count: 12,
    concurrency: 1,
    keepAlive: true,
    payloadBytes: 100,
    trials: 1,
    timeoutMs: 1000,
    port,
    ...over,
  };
  const outDir = path.join(dir, String(port));
  const outcome = await runHttp(p, { target: { host: '127.0.0.1', port }, outDir, log: () => {} });
  const recs = outcome.files.length
    ? parseHttp(await readFile(path.join(outDir, outcome.files[0]), 'utf8'), {
        runId: 'r',
        pathId: 'p',
        probe: p.name,
        trial: 1,
      })
    : [];
  return { outcome, recs };
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'pb-http-client-'));
});
afterAll(async () => {
  for (const c of closers) await c();
  await rm(dir, { recursive: true, force: true });
});

describe('http probe client against real servers', () => {
  afterAll(async () => {
    // The probe closes every connection it opened, whatever the server did.
    await new Promise((r) => setTimeout(r, 50));
    for (const c of closers.splice(0)) await c();
    expect(leftOpen).toEqual(leftOpen.map(() => 0));
  });

  it('reads chunked answers in full and keeps the connection', async () => {
    const port = await listen(
      http.createServer((req, res) => {
        const n = Number(/\/bytes\/(\d+)/.exec(req.url ?? '')?.[1] ?? 0);
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        // No content-length: Node sends chunked, in three chunks here.
        res.write(Buffer.alloc(Math.floor(n / 2)));
        setImmediate(() => {
          res.write(Buffer.alloc(n - Math.floor(n / 2)));
          res.end();
        });
      }),
    );
    const { outcome, recs } = await probeAt(port, { payloadBytes: 1000 });
    expect(outcome.status).toBe('ok');
    expect(recs).toHaveLength(12);
    expect(recs.every((r) => r.ok && r.bytes === 1000 && r.status === 200)).toBe(true);
    expect(new Set(recs.map((r) => r.local_port)).size).toBe(1);
  });

  it("opens a new connection after the server's Connection: close, losing no request", async () => {
    let served = 0;
    const port = await listen(
      http.createServer((_req, res) => {
        served++;
        if (served % 4 === 0) res.setHeader('connection', 'close');
        res.writeHead(200, { 'content-length': '100' }).end(Buffer.alloc(100));
      }),
    );
    const { recs } = await probeAt(port);
    expect(recs.filter((r) => r.ok)).toHaveLength(12);
    // Warm-up took 12 as well; the trial's 12 requests span several connections of ≤ 4 requests.
    const perPort = new Map<number, number>();
    for (const r of recs) perPort.set(r.local_port as number, (perPort.get(r.local_port as number) ?? 0) + 1);
    expect(perPort.size).toBeGreaterThanOrEqual(3);
    for (const n of perPort.values()) expect(n).toBeLessThanOrEqual(4);
  });

  it('keep-alive off: a new connection per request, each closed', async () => {
    const port = await listen(
      http.createServer((_req, res) => res.writeHead(200, { 'content-length': '100' }).end(Buffer.alloc(100))),
    );
    const { recs } = await probeAt(port, { keepAlive: false, count: 8 });
    expect(recs.filter((r) => r.ok)).toHaveLength(8);
    expect(new Set(recs.map((r) => r.local_port)).size).toBe(8);
  });

  it('an answer cut short is a reset; something that is not HTTP is a bad-response', async () => {
    const cut = await listen(
      net.createServer((s) => s.once('data', () => s.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly-part'))),
    );
    const a = await probeAt(cut, { count: 3 });
    expect(a.outcome.status).toBe('failed');
    expect(a.recs.map((r) => r.error)).toEqual(['reset', 'reset', 'reset']);
    const ssh = await listen(net.createServer((s) => s.once('data', () => s.write('SSH-2.0-OpenSSH_9.2\r\n\r\n'))));
    const b = await probeAt(ssh, { count: 2 });
    expect(b.recs.map((r) => r.error)).toEqual(['bad-response', 'bad-response']);
  });

  it('a server that never answers is a timeout per request, on time', async () => {
    const port = await listen(net.createServer((s) => s.resume()));
    const t0 = Date.now();
    const { recs } = await probeAt(port, { count: 2, timeoutMs: 200 });
    expect(recs.map((r) => r.error)).toEqual(['timeout', 'timeout']);
    for (const r of recs) expect(r.t_end - r.t_start).toBeGreaterThanOrEqual(199);
    // Warm-up stops at its first failure: one warm-up timeout plus two recorded ones.
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});
