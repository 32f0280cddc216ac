/**
 * Target servers for the lab and for local runs (`agent serve`): a plain TCP echo listener,
 * an HTTP/1.1 server answering `GET /bytes/<n>` and `GET /health`, and a "slow-accept"
 * listener that reproduces an overloaded server; and the pingpong probe's TCP/UDP echo server,
 * which is the native helper (`tcping --echo`, probes/native/pingpong.c) run as a child: a Node
 * echo would add its own event-loop wake-up to every exchange it answers. When the helper cannot
 * be built here (no gcc) the other listeners still serve and `problems` says why.
 *
 * Slow accept: libuv accepts every pending connection as soon as the listening socket is
 * readable, so an ordinary Node listener never lets the kernel's accept queue fill. The slow
 * listener therefore runs in a worker thread that blocks its own event loop synchronously
 * (Atomics.wait) and lets it run for one turn every MS, so it accepts at most one queued
 * connection per MS on a fixed clock. With backlog 1 the kernel's two-slot queue stays full,
 * later SYNs are dropped and clients retransmit them (≈1 s, 3 s …) — real overload behaviour.
 */
import http from 'node:http';
import net from 'node:net';
import { Worker } from 'node:worker_threads';
import { startEchoServer } from '../probes/native/tcping.js';
import { ensureTcping } from '../probes/native/tcping-build.js';

export interface ServeOptions {
  host: string;
  /** Plain TCP echo listener port (0 = any free port). */
  tcp?: number;
  /** HTTP server port (0 = any free port). */
  http?: number;
  /** Slow-accept listener: port and the pause after each accept. */
  slowAccept?: { port: number; ms: number };
  /** The pingpong echo server's port, TCP and UDP (0 = any free port). */
  pingpong?: number;
}

export interface RunningServers {
  /** Actual bound ports, by listener. */
  ports: { tcp?: number; http?: number; slowAccept?: number; pingpong?: number };
  /** Listeners that could not start without failing the others (the pingpong helper). */
  problems: string[];
  close(): Promise<void>;
}

/** Largest payload `/bytes/<n>` serves. */
export const MAX_BYTES = 100 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024);
/** Connections idle this long are dropped, so forgotten clients cannot pile up. */
const IDLE_MS = 30_000;

/** Start the requested listeners; resolves once every one of them is listening. */
export async function startServers(opts: ServeOptions): Promise<RunningServers> {
  const closers: (() => Promise<void>)[] = [];
  const ports: RunningServers['ports'] = {};
  const problems: string[] = [];
  const close = async (): Promise<void> => {
    await Promise.allSettled(closers.map((c) => c()));
  };
  try {
    if (opts.tcp !== undefined) {
      const server = net.createServer((sock) => {
        sock.setTimeout(IDLE_MS, () => sock.destroy());
        sock.on('error', () => {});
        sock.pipe(sock);
      });
      ports.tcp = await listen(server, opts.host, opts.tcp);
      closers.push(() => closeServer(server));
    }
    if (opts.http !== undefined) {
      const server = http.createServer(handleHttp);
      server.keepAliveTimeout = IDLE_MS;
      server.headersTimeout = IDLE_MS + 1000;
      ports.http = await listen(server, opts.host, opts.http);
      closers.push(async () => {
        server.closeAllConnections();
        await closeServer(server);
      });
    }
    if (opts.slowAccept !== undefined) {
      const slow = await startSlowAccept(opts.host, opts.slowAccept.port, opts.slowAccept.ms);
      ports.slowAccept = slow.port;
      closers.push(slow.close);
    }
    if (opts.pingpong !== undefined) {
      const built = await ensureTcping();
      if (!built.ok) problems.push(`pingpong echo server not started: ${built.reason}`);
      else {
        const echo = await startEchoServer(built.path, opts.host, opts.pingpong);
        ports.pingpong = echo.port;
        closers.push(echo.close);
      }
    }
  } catch (e) {
    await close();
    throw e;
  }
  return { ports, problems, close };
}

function handleHttp(req: http.IncomingMessage, res: http.ServerResponse): void {
  req.resume();
  const url = req.url ?? '/';
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { 'content-type': 'text/plain', allow: 'GET, HEAD' }).end('method not allowed\n');
    return;
  }
  if (url === '/health') {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    return;
  }
  const m = /^\/bytes\/(\d{1,10})$/.exec(url);
  if (!m) {
    const bad = url.startsWith('/bytes/');
    res
      .writeHead(bad ? 400 : 404, { 'content-type': 'text/plain' })
      .end(bad ? 'bytes must be an integer\n' : 'not found\n');
    return;
  }
  const n = Number(m[1]);
  if (n > MAX_BYTES) {
    res.writeHead(400, { 'content-type': 'text/plain' }).end(`at most ${MAX_BYTES} bytes\n`);
    return;
  }
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(n) });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  let left = n;
  // Write in 64 KiB chunks and honour backpressure so a 100 MiB answer never sits in memory.
  const pump = (): void => {
    while (left > 0) {
      const size = Math.min(left, CHUNK.length);
      left -= size;
      if (!res.write(size === CHUNK.length ? CHUNK : CHUNK.subarray(0, size))) {
        res.once('drain', pump);
        return;
      }
    }
    res.end();
  };
  pump();
}

function listen(server: net.Server, host: string, port: number, backlog?: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, backlog }, () => {
      server.off('error', reject);
      resolve((server.address() as net.AddressInfo).port);
    });
  });
}

function closeServer(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

// Plain JS on purpose: eval'd in a worker, identical under tsx and in the esbuild bundle.
const SLOW_ACCEPT_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const net = require('node:net');
const gate = new Int32Array(workerData.gate);
const server = net.createServer((sock) => {
  sock.on('error', () => {});
  sock.destroy();
});
// Accept on a fixed clock, never on demand: block MS, then give libuv one loop turn (its poll
// phase accepts whatever the kernel queued), then block again. A server that accepted as soon
// as it woke would let the next SYN straight in; on a clock the queue stays full.
function tick() {
  if (Atomics.load(gate, 0) !== 0) return;
  Atomics.wait(gate, 0, 0, workerData.ms);
  setImmediate(tick);
}
server.on('error', (e) => parentPort.postMessage({ error: e.code || String(e) }));
server.listen({ host: workerData.host, port: workerData.port, backlog: 1 }, () => {
  parentPort.postMessage({ port: server.address().port });
  setImmediate(tick);
});
parentPort.on('message', () => server.close(() => parentPort.close()));
`;

async function startSlowAccept(
  host: string,
  port: number,
  ms: number,
): Promise<{ port: number; close(): Promise<void> }> {
  const gateBuf = new SharedArrayBuffer(4);
  const gate = new Int32Array(gateBuf);
  const worker = new Worker(SLOW_ACCEPT_WORKER, { eval: true, workerData: { host, port, ms, gate: gateBuf } });
  const bound = await new Promise<number>((resolve, reject) => {
    worker.once('message', (m: { port?: number; error?: string }) => {
      if (m.port !== undefined) resolve(m.port);
      else reject(new Error(`slow-accept listener on ${host}:${port}: ${m.error}`));
    });
    worker.once('error', reject);
  });
  return {
    port: bound,
    close: async () => {
      // Open the gate and wake the sleeper so the worker can process the close request.
      Atomics.store(gate, 0, 1);
      Atomics.notify(gate, 0);
      worker.postMessage('close');
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      const timer = setTimeout(() => void worker.terminate(), 2000);
      await exited;
      clearTimeout(timer);
    },
  };
}
