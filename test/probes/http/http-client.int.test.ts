/**
 * Both clients of the http probe — the C helper's `--http` mode (concurrency 1) and the Node
 * client on a bare socket — against real servers on loopback that answer the way front ends in
 * the wild do: chunked bodies, `Connection: close` in the middle of a keep-alive run, interim
 * answers, bodiless answers, an answer cut short, and something that is not HTTP at all. The two
 * must agree request for request.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseHttp } from '../../../probes/http/http.parser.js';
import { HTTPING_TOOL, type HttpClientChoice, httpRunner } from '../../../probes/http/http.runner.js';
import { HTTP_PAIR_METRIC, type HttpProbe } from '../../../probes/http/http.schema.js';
import { ensureTcping } from '../../../probes/native/tcping-build.js';
import { freePort } from '../../helpers/ports.js';

let dir: string;

/** Listen on loopback; at the end, every connection the probe left open is counted, then closed. */
function servers() {
  const closers: (() => Promise<void>)[] = [];
  const leftOpen: number[] = [];
  const listen = async (server: net.Server): Promise<number> => {
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
  };
  const closeAll = async (): Promise<number[]> => {
    await sleep(50);
    for (const c of closers.splice(0)) await c();
    return leftOpen;
  };
  return { listen, closeAll };
}

/** A raw server that answers every request (one per read) with `answer`, then maybe closes. */
function canned(answer: string | ((n: number) => string), close = false): net.Server {
  let n = 0;
  return net.createServer((s) => {
    s.on('data', () => {
      const text = typeof answer === 'string' ? answer : answer(++n);
      if (close) s.end(text, 'latin1');
      else s.write(text, 'latin1');
    });
  });
}

async function probeAt(client: HttpClientChoice, port: number, over: Partial<HttpProbe> = {}, concurrency = 1) {
  const p: HttpProbe = {
    kind: 'http',
    name: `h${port}`,
    count: 12,
    concurrency,
    keepAlive: true,
    payloadBytes: 100,
    trials: 1,
    timeoutMs: 1000,
    port,
    ...over,
  };
  const outDir = path.join(dir, `${client}-${port}`);
  const outcome = await httpRunner(client)(p, { target: { host: '127.0.0.1', port }, outDir, log: () => {} });
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
  // gcc is installed here (CI installs it): the C client must be available, not skipped.
  expect(await ensureTcping()).toMatchObject({ ok: true });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const CLIENTS: [HttpClientChoice, number, string][] = [
  ['native', 1, 'httping-monotonic'],
  ['native', 3, 'httping-monotonic'],
  ['node', 1, 'app-hrtime'],
  ['node', 3, 'app-hrtime'],
];

describe.each(CLIENTS)('http probe, %s client, concurrency %i, against real servers', (client, c, clock) => {
  const { listen, closeAll } = servers();
  afterAll(async () => {
    // The probe closes every connection it opened, whatever the server did.
    const left = await closeAll();
    expect(left).toEqual(left.map(() => 0));
  });

  it('says which client and clock measured', async () => {
    const port = await listen(
      http.createServer((_req, res) => res.writeHead(200, { 'content-length': '100' }).end(Buffer.alloc(100))),
    );
    const { outcome, recs } = await probeAt(client, port, { count: 3 }, c);
    expect(recs.map((r) => r.clock)).toEqual([clock, clock, clock]);
    if (client === 'native') expect(outcome.tools?.httping).toBe(HTTPING_TOOL);
    else expect(outcome.tools?.client).toMatch(/net\.Socket/);
  });

  it('reads chunked answers in full and keeps the connection', async () => {
    const port = await listen(
      http.createServer((req, res) => {
        const n = Number(/\/bytes\/(\d+)/.exec(req.url ?? '')?.[1] ?? 0);
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        // No content-length: Node sends chunked, in two chunks here.
        res.write(Buffer.alloc(Math.floor(n / 2)));
        setImmediate(() => {
          res.write(Buffer.alloc(n - Math.floor(n / 2)));
          res.end();
        });
      }),
    );
    const { outcome, recs } = await probeAt(client, port, { payloadBytes: 1000 }, c);
    expect(outcome.status).toBe('ok');
    expect(recs).toHaveLength(12);
    expect(recs.every((r) => r.ok && r.bytes === 1000 && r.status === 200)).toBe(true);
    // One connection per slot, kept for the whole run.
    expect(new Set(recs.map((r) => r.local_port)).size).toBe(c);
    expect(recs.map((r) => r.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  });

  it("opens a new connection after the server's Connection: close, losing no request", async () => {
    // Every connection is closed by the server after its 4th answer.
    const served = new WeakMap<net.Socket, number>();
    const port = await listen(
      http.createServer((req, res) => {
        const n = (served.get(req.socket) ?? 0) + 1;
        served.set(req.socket, n);
        if (n === 4) res.setHeader('connection', 'close');
        res.writeHead(200, { 'content-length': '100' }).end(Buffer.alloc(100));
      }),
    );
    const { recs } = await probeAt(client, port, {}, c);
    expect(recs.filter((r) => r.ok)).toHaveLength(12);
    const perPort = new Map<number, number>();
    for (const r of recs) perPort.set(r.local_port as number, (perPort.get(r.local_port as number) ?? 0) + 1);
    expect(perPort.size).toBeGreaterThanOrEqual(3);
    for (const n of perPort.values()) expect(n).toBeLessThanOrEqual(4);
  });

  it('keep-alive off: a new connection per request, each closed', async () => {
    const port = await listen(
      http.createServer((_req, res) => res.writeHead(200, { 'content-length': '100' }).end(Buffer.alloc(100))),
    );
    const { recs } = await probeAt(client, port, { keepAlive: false, count: 8 }, c);
    expect(recs.filter((r) => r.ok)).toHaveLength(8);
    expect(new Set(recs.map((r) => r.local_port)).size).toBe(8);
  });

  it("the C client times each request's network part by the kernel's stamps, with and without keep-alive", async () => {
    const port = await listen(
      http.createServer((_req, res) => res.writeHead(200, { 'content-length': '100' }).end(Buffer.alloc(100))),
    );
    for (const keepAlive of [true, false]) {
      const { recs } = await probeAt(client, port, { keepAlive, count: 40 }, c);
      expect(recs.filter((r) => r.ok)).toHaveLength(40);
      if (client === 'node') {
        // The Node client has no kernel stamps: the app clock only.
        expect(recs.every((r) => r.ts_source === 'user' && r.host_us === undefined)).toBe(true);
        continue;
      }
      // Every request stamped, also with a connection per request (the stamps stay switched on).
      expect(recs.filter((r) => r.ts_source === 'kernel-sw').length, `keepAlive ${keepAlive}`).toBe(40);
      for (const r of recs) {
        // The host's own part: positive, and less than the whole request.
        expect(r.host_us as number).toBeGreaterThan(0);
        expect(r.host_us as number).toBeLessThan((r.value as number) * 1000);
      }
    }
  });

  const framings: [string, string, boolean, { bytes: number; status: number; reused: boolean }][] = [
    [
      'interim 100 then the answer',
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc',
      false,
      { bytes: 3, status: 200, reused: true },
    ],
    [
      'chunked with extension and trailer',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;x=1\r\nabcd\r\n2\r\nef\r\n0\r\nX-T: y\r\n\r\n',
      false,
      { bytes: 6, status: 200, reused: true },
    ],
    ['204 without a body', 'HTTP/1.1 204 No Content\r\n\r\n', false, { bytes: 0, status: 204, reused: true }],
    [
      'HTTP/1.0 with keep-alive',
      'HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok',
      false,
      { bytes: 2, status: 200, reused: true },
    ],
    [
      'HTTP/1.0 without keep-alive, body until close',
      'HTTP/1.0 200 OK\r\n\r\nuntil-close',
      true,
      { bytes: 11, status: 200, reused: false },
    ],
  ];
  for (const [name, answer, close, want] of framings) {
    it(`frames ${name}`, async () => {
      const port = await listen(canned(answer, close));
      const { recs } = await probeAt(client, port, { count: 4 }, c);
      expect(recs.map((r) => [r.ok, r.status, r.bytes])).toEqual(Array(4).fill([true, want.status, want.bytes]));
      expect(new Set(recs.map((r) => r.local_port)).size).toBe(want.reused ? Math.min(c, 4) : 4);
    });
  }

  it('a 404 is a failed sample with its status, and the connection is kept', async () => {
    const port = await listen(canned('HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nno'));
    const { outcome, recs } = await probeAt(client, port, { count: 3 }, c);
    expect(outcome.status).toBe('failed');
    expect(recs.map((r) => [r.ok, r.error, r.status, r.bytes])).toEqual(Array(3).fill([false, 'http-404', 404, 2]));
    expect(new Set(recs.map((r) => r.local_port)).size).toBe(Math.min(c, 3));
  });

  it('an answer cut short is a reset; something that is not HTTP is a bad-response', async () => {
    const cut = await listen(canned('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly-part', true));
    const a = await probeAt(client, cut, { count: 3 }, c);
    expect(a.outcome.status).toBe('failed');
    expect(a.recs.map((r) => r.error)).toEqual(['reset', 'reset', 'reset']);
    const ssh = await listen(canned('SSH-2.0-OpenSSH_9.2\r\n\r\n'));
    const b = await probeAt(client, ssh, { count: 2 }, c);
    expect(b.recs.map((r) => r.error)).toEqual(['bad-response', 'bad-response']);
    const extra = await listen(canned('HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxy'));
    const d = await probeAt(client, extra, { count: 2 }, c);
    expect(d.recs.map((r) => r.error)).toEqual(['bad-response', 'bad-response']);
  });

  it('a closed port is refused; a server that never answers is a timeout per request, on time', async () => {
    const closedPort = await freePort();
    const refused = await probeAt(client, closedPort, { count: 1 }, c);
    expect(refused.recs.map((r) => r.error)).toEqual(['refused']);
    const port = await listen(net.createServer((s) => s.resume()));
    const t0 = Date.now();
    const { recs } = await probeAt(client, port, { count: 2, timeoutMs: 200 }, c);
    expect(recs.map((r) => r.error)).toEqual(['timeout', 'timeout']);
    for (const r of recs) expect(r.t_end - r.t_start).toBeGreaterThanOrEqual(199);
    // Warm-up stops at its first failure: one warm-up timeout plus two recorded ones.
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});

describe('http probe without a C compiler', () => {
  it('measures with the Node client and says why in tools.httping (the manifest notes it)', async () => {
    const { listen, closeAll } = servers();
    const port = await listen(
      http.createServer((_req, res) => res.writeHead(200, { 'content-length': '100' }).end(Buffer.alloc(100))),
    );
    const saved = { CC: process.env.CC, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME };
    process.env.CC = 'pb-no-such-gcc';
    process.env.XDG_CACHE_HOME = path.join(dir, 'empty-cache');
    try {
      const { outcome, recs } = await probeAt('auto', port, { count: 5 });
      expect(outcome.status).toBe('ok');
      expect(outcome.tools?.httping).toMatch(/^unavailable: .*pb-no-such-gcc not found/);
      expect(recs.map((r) => [r.ok, r.clock])).toEqual(Array(5).fill([true, 'app-hrtime']));
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      await closeAll();
    }
  });
});

describe.each(['native', 'node'] as const)('http probe with a pair (regression.paired), %s client', (client) => {
  it('alternates its target and the reference target, one each in turn, each on its own connection', async () => {
    const { listen, closeAll } = servers();
    // Two real servers; each answers after its own delay and says which it is, and remembers
    // when each request came, so the alternation is seen from the servers' side too.
    const arrivals: string[] = [];
    // Each server's clients' ports: which connection a record came over, whatever the host's load.
    const portsSeen: Record<string, Set<number>> = { own: new Set(), ref: new Set() };
    const server = (name: string, delayMs: number) =>
      http.createServer((req, res) => {
        arrivals.push(name);
        portsSeen[name].add(req.socket.remotePort as number);
        setTimeout(() => res.writeHead(200, { 'content-length': '100' }).end(Buffer.alloc(100)), delayMs);
      });
    const own = await listen(server('own', 3));
    const ref = await listen(server('ref', 0));
    try {
      for (const c of [1, 2]) {
        arrivals.length = 0;
        const { outcome, recs } = await probeAt(
          client,
          own,
          { count: 40, pair: { path: 'A', host: '127.0.0.1', port: ref }, name: `pair-c${c}` },
          c,
        );
        expect(outcome.status).toBe('ok');
        expect(outcome.tools?.pair).toMatch(/^A \(127\.0\.0\.1:\d+\): one request to each in turn/);
        if (client === 'native') expect(outcome.tools?.httping).toBe(HTTPING_TOOL);
        else expect(outcome.tools?.client).toMatch(/net\.Socket/);
        const mine = recs.filter((r) => r.metric === 'http_latency_ms');
        const theirs = recs.filter((r) => r.metric === HTTP_PAIR_METRIC);
        expect([mine.length, theirs.length]).toEqual([40, 40]);
        expect(recs.every((r) => r.ok)).toBe(true);
        expect(new Set(recs.map((r) => r.clock))).toEqual(
          new Set([client === 'native' ? 'httping-monotonic' : 'app-hrtime']),
        );
        // lines come in completion order: with two workers, the seqs are all there, not in order
        expect(theirs.map((r) => r.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => 41 + i));
        // each series came over its own server's connections, and the 3 ms server's delay is in
        // its own series only (a timer fires no earlier than about 1 ms short of its delay; a busy
        // host adds to both series, so their medians are not compared)
        for (const r of mine) expect(portsSeen.own.has(r.local_port as number)).toBe(true);
        for (const r of theirs) expect(portsSeen.ref.has(r.local_port as number)).toBe(true);
        expect(Math.min(...mine.map((r) => r.value as number))).toBeGreaterThan(1.9);
        // keep-alive: one connection per side per worker
        expect(new Set(mine.map((r) => r.local_port)).size).toBe(c);
        expect(new Set(theirs.map((r) => r.local_port)).size).toBe(c);
        // one at a time (concurrency 1): the servers saw own, ref, ref, own, own, ref, ... —
        // after the warm-up, the recorded trial alternates in pairs whose order swaps each time
        if (c === 1) {
          const trial = arrivals.slice(-80);
          for (let k = 0; k < 40; k++) expect(new Set(trial.slice(2 * k, 2 * k + 2))).toEqual(new Set(['own', 'ref']));
        }
      }
    } finally {
      await closeAll();
    }
  });

  it('fails before measuring when the reference target does not resolve', async () => {
    const { outcome } = await probeAt(client, 9, {
      count: 3,
      pair: { path: 'A', host: 'no-such-host.invalid', port: 80 },
      name: 'pair-bad',
    });
    expect(outcome).toMatchObject({
      status: 'failed',
      reason: expect.stringMatching(/^pair A: cannot resolve no-such-host\.invalid/),
    });
  });
});
