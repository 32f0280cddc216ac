/**
 * http probe: HTTP/1.1 GET latency the way seed 002 measured it with oha — `trials` × `count`
 * requests for `/bytes/<payloadBytes>` with `concurrency` closed-loop workers, keep-alive on
 * (one pooled socket per worker) or off (a new connection per request, `Connection: close`).
 * Owns the raw format `<probe>/<trial>.jsonl`: one line per request
 * `{seq, t_start, t_end, ok, latency_ms, status?, error?, bytes, lport?, clock?}` — lport is
 * the client's local port, which shows whether keep-alive really reused connections; clock is
 * "httping-monotonic" for the C client (absent: the Node client, "app-hrtime").
 *
 * Before trial 1, up to WARMUP_REQUESTS unrecorded requests warm the client and the target.
 * Latency is request start → last body byte. Up to 64 connections the requests go through the C
 * helper (http-client.c `--http`, CLOCK_MONOTONIC, busy-polled); beyond, through the probe's own
 * HTTP/1.1 client on a bare socket (http-wire.ts, `process.hrtime.bigint()`), which costs about
 * half of what Node's `http` module does per request. A timeout, reset, unreadable answer
 * ("bad-response") or non-2xx answer is a failed sample with a reason; EADDRNOTAVAIL
 * (ephemeral ports used up by TIME_WAIT when keep-alive is off) gets its own reason
 * "ephemeral-ports-exhausted" so it is never mistaken for latency.
 *
 * With `pair` (the plan's `regression.paired`), each request to the target is followed or
 * preceded by one to the reference path's target on the same client (either client, a
 * connection per target): those lines carry `"pair": "ref"` and seq count + k.
 *
 * Beside each trial, `<probe>/<trial>.meta.json`: the client's TIME_WAIT count before and after
 * (in all, and towards the target's address and port),
 * tcp_tw_reuse and the ephemeral port range (tcp-state.ts), and the matrix cell. With
 * `tcpTwReuse` in the probe, tcp_tw_reuse is set for the probe and put back after it, also on error.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { HTTPING_MAX_CONCURRENCY, runHttping } from '../native/tcping.js';
import { ensureTcping } from '../native/tcping-build.js';
import { nicTrial, readNic } from '../run-kit/nic.js';
import type { ProbeRunner } from '../run-kit/runner-types.js';
import { connectErrorReason, resolveTarget } from '../tcp-connect/tcp-connect.runner.js';
import type { HttpProbe } from './http.schema.js';
import { getRequest, HttpProtocolError, type ResponseDone, ResponseReader } from './http-wire.js';
import { tcpFacts, timeWaitCounts, withTwReuse } from './tcp-state.js';

/** Unrecorded requests before trial 1 (at most `count`). */
export const WARMUP_REQUESTS = 200;

interface TrialResult {
  lines: string[];
  ok: number;
}

/** Which client sends the requests: the C helper (up to 64 connections) or the Node client. */
export type HttpClientChoice = 'auto' | 'native' | 'node';

/** The C client as recorded in the outcome's tools. */
export const HTTPING_TOOL = 'tcping --http (C helper, busy-poll, CLOCK_MONOTONIC)';

/**
 * Run the http probe: one raw file per trial. Status is "failed" only when no request of any
 * trial succeeded or the host does not resolve.
 *
 * Client: up to HTTPING_MAX_CONCURRENCY connections the C helper's http mode (http-client.c,
 * `--http`, clock "httping-monotonic") — about wrk's cost per request and none of a fresh Node
 * process's warm-up stalls; beyond that, or where the helper cannot be built (the reason is in
 * `tools.httping` and so in the manifest's notes), the Node client below (clock "app-hrtime").
 */
export function httpRunner(choice: HttpClientChoice = 'auto'): ProbeRunner<HttpProbe> {
  return async (probe, ctx) => {
    const port = probe.port ?? ctx.target.port;
    const target = await resolveTarget(ctx.target.host);
    if (!target.ok) return { status: 'failed', files: [], trials: 0, reason: target.reason };
    const address = target.address;
    // Name-based front ends (ALB, Lattice, Service Connect) route on Host, so keep the name there.
    const hostHeader = ctx.target.host.includes(':') ? `[${ctx.target.host}]:${port}` : `${ctx.target.host}:${port}`;
    await mkdir(path.join(ctx.outDir, probe.name), { recursive: true });
    const warmup = Math.min(probe.count, WARMUP_REQUESTS);
    const tools: Record<string, string> = {};

    const endpoints = [endpoint(probe, address, port, hostHeader)];
    if (probe.pair) {
      // The reference path's target, alternating with this one (the plan's regression.paired).
      const ref = await resolveTarget(probe.pair.host);
      if (!ref.ok) return { status: 'failed', files: [], trials: 0, reason: `pair ${probe.pair.path}: ${ref.reason}` };
      const h = probe.pair.host.includes(':')
        ? `[${probe.pair.host}]:${probe.pair.port}`
        : `${probe.pair.host}:${probe.pair.port}`;
      endpoints.push(endpoint(probe, ref.address, probe.pair.port, h, true));
      tools.pair = `${probe.pair.path} (${probe.pair.host}:${probe.pair.port}): one request to each in turn`;
    }
    const pairArgs = probe.pair
      ? { address: endpoints[1].address, port: endpoints[1].port, hostHeader: endpoints[1].hostHeader }
      : undefined;

    let native: string | undefined;
    if (choice === 'native' || (choice === 'auto' && probe.concurrency <= HTTPING_MAX_CONCURRENCY)) {
      const built = await ensureTcping();
      if (built.ok) native = built.path;
      else tools.httping = `unavailable: ${built.reason}`;
    }
    if (native) tools.httping = HTTPING_TOOL;
    else {
      tools.node = process.versions.node;
      tools.client = 'net.Socket HTTP/1.1 (http-wire.ts)';
      // Warm the client's own code (JIT) with unrecorded requests on a throw-away pool, so
      // trial 1 does not pay Node's start-up cost (measured here: the first few hundred
      // requests run 3-20x slower). Each trial still starts with an empty pool, like oha.
      if (warmup > 0) {
        // Stops at the first failure: warming against a dead or refusing target only wastes time.
        const w = await runTrial({ ...probe, count: warmup }, endpoints, true);
        ctx.log('http warm-up done', { probe: probe.name, requests: warmup, ok: w.ok });
      }
    }
    tools.warmup = `${warmup} requests, not recorded`;

    const files: string[] = [];
    let okTotal = 0;
    // tcp_tw_reuse as the plan asks for this probe, put back after the last trial (also on error).
    await withTwReuse(probe.tcpTwReuse, async (problem) => {
      if (problem) {
        tools.tcpTwReuse = `unavailable: ${problem}`;
        ctx.log('http tcp_tw_reuse not set', { probe: probe.name, problem });
      } else if (probe.tcpTwReuse !== undefined) tools.tcpTwReuse = `set to ${probe.tcpTwReuse} for this probe`;
      for (let trial = 1; trial <= probe.trials; trial++) {
        // The client's TIME_WAIT and port facts around each trial (sidecar <trial>.meta.json).
        const facts = await tcpFacts();
        const before = await timeWaitCounts({ address, port });
        const nicBefore = await readNic(ctx.nic);
        const startedAt = new Date().toISOString();
        ctx.log('http trial start', {
          probe: probe.name,
          trial,
          address,
          port,
          count: probe.count,
          concurrency: probe.concurrency,
          keepAlive: probe.keepAlive,
          client: native ? 'httping' : 'node',
        });
        const rel = `${probe.name}/${trial}.jsonl`;
        const file = path.join(ctx.outDir, rel);
        let ok: number;
        const r = native
          ? await runHttping({
              address,
              port,
              hostHeader,
              path: requestPath(probe),
              count: probe.count,
              timeoutMs: probe.timeoutMs,
              keepAlive: probe.keepAlive,
              warmup: trial === 1 ? warmup : 0,
              concurrency: probe.concurrency,
              ...(pairArgs ? { pair: pairArgs } : {}),
              out: file,
              binary: native,
            })
          : undefined;
        if (r?.ok) {
          ok = (await readFile(file, 'utf8')).split('\n').filter((l) => l.includes('"ok":true')).length;
        } else {
          if (r) {
            // The helper itself failed (not a request): this trial and the rest use the Node client.
            tools.httping = `unavailable from trial ${trial}: ${r.reason}`;
            tools.client = 'net.Socket HTTP/1.1 (http-wire.ts)';
            native = undefined;
            ctx.log('http helper failed, Node client from here', { probe: probe.name, trial, reason: r.reason });
          }
          const result = await runTrial(probe, endpoints);
          await writeFile(file, result.lines.length ? `${result.lines.join('\n')}\n` : '');
          ok = result.ok;
        }
        files.push(rel);
        okTotal += ok;
        const nic = nicTrial(nicBefore, nicBefore ? await readNic(ctx.nic) : undefined);
        const after = await timeWaitCounts({ address, port });
        const sidecar = {
          trial,
          startedAt,
          endedAt: new Date().toISOString(),
          keepAlive: probe.keepAlive,
          concurrency: probe.concurrency,
          payloadBytes: probe.payloadBytes,
          ...(probe.cell ? { cell: probe.cell, matrix: probe.matrix } : {}),
          ...(before ? { timeWaitBefore: before.all, timeWaitToTargetBefore: before.toTarget } : {}),
          ...(after ? { timeWaitAfter: after.all, timeWaitToTargetAfter: after.toTarget } : {}),
          ...facts,
          ...nic,
        };
        await writeFile(path.join(ctx.outDir, probe.name, `${trial}.meta.json`), `${JSON.stringify(sidecar)}\n`);
        ctx.log('http trial done', {
          probe: probe.name,
          trial,
          ok,
          failed: probe.count * endpoints.length - ok,
          timeWaitAfter: after?.all,
          timeWaitToTargetAfter: after?.toTarget,
        });
      }
    });
    if (okTotal === 0 && probe.count > 0 && probe.trials > 0) {
      return { status: 'failed', files, trials: probe.trials, reason: 'no request succeeded', tools };
    }
    return { status: 'ok', files, trials: probe.trials, tools };
  };
}

export const runHttp: ProbeRunner<HttpProbe> = httpRunner('auto');

const requestPath = (probe: HttpProbe): string => `/bytes/${probe.payloadBytes}`;

/** One client connection, with its listeners attached once and the current request's hooks. */
interface Conn {
  sock: net.Socket;
  /** Set once the peer ended or the socket failed or closed: never reused after that. */
  closed: boolean;
  lport?: number;
  onData?: (b: Buffer) => void;
  onEnd?: () => void;
  onError?: (e: NodeJS.ErrnoException) => void;
}

function openConn(address: string, port: number): Conn {
  const sock = net.connect({ host: address, port, noDelay: true });
  const conn: Conn = { sock, closed: false };
  sock.on('connect', () => {
    conn.lport = sock.localPort;
  });
  sock.on('data', (b: Buffer) => {
    if (conn.onData) conn.onData(b);
    else {
      // Bytes nobody asked for: the connection's framing is lost, never reuse it.
      conn.closed = true;
      sock.destroy();
    }
  });
  const ended = (): void => {
    conn.closed = true;
    conn.onEnd?.();
  };
  sock.on('end', ended);
  sock.on('close', ended);
  sock.on('error', (e: NodeJS.ErrnoException) => {
    conn.closed = true;
    conn.onError?.(e);
  });
  return conn;
}

/** Where a trial's requests go: the path's target, and with `pair` the reference path's after it. */
interface Endpoint {
  address: string;
  port: number;
  hostHeader: string;
  request: Buffer;
  /** Set on the reference's requests: written as `"pair": "ref"` (parsed as HTTP_PAIR_METRIC). */
  ref?: boolean;
}

function endpoint(probe: HttpProbe, address: string, port: number, hostHeader: string, ref = false): Endpoint {
  return {
    address,
    port,
    hostHeader,
    request: getRequest(requestPath(probe), hostHeader, !probe.keepAlive),
    ...(ref ? { ref } : {}),
  };
}

/**
 * One trial of `probe.count` requests per endpoint over `probe.concurrency` workers. With two
 * endpoints (a pair) each worker sends request k to both, one after the other, the order swapped
 * from one k to the next so neither side always goes first; each side keeps its own connection.
 * The reference's line for request k has seq count + k.
 */
async function runTrial(probe: HttpProbe, endpoints: Endpoint[], stopOnFailure = false): Promise<TrialResult> {
  const hrBase = process.hrtime.bigint();
  const epochBase = performance.timeOrigin + performance.now();
  const epoch = (hr: bigint): number => Math.round((epochBase + Number(hr - hrBase) / 1e6) * 1000) / 1000;

  const lines: string[] = new Array(probe.count * endpoints.length);
  let ok = 0;
  let next = 0;

  /** One request; resolves with the connection when it may carry the next one. */
  const one = (i: number, e: Endpoint, side: number, reuse: Conn | undefined): Promise<Conn | undefined> =>
    new Promise((resolve) => {
      const start = process.hrtime.bigint();
      const conn = reuse && !reuse.closed ? reuse : openConn(e.address, e.port);
      const reader = new ResponseReader();
      let done = false;
      const finish = (err: string | undefined, status?: number, bytes = 0, keep = false): void => {
        if (done) return;
        const end = process.hrtime.bigint();
        done = true;
        clearTimeout(timer);
        conn.onData = undefined;
        conn.onEnd = undefined;
        conn.onError = undefined;
        const good = err === undefined;
        if (good) ok++;
        else if (stopOnFailure) next = probe.count;
        lines[side * probe.count + i] = JSON.stringify({
          seq: side * probe.count + i + 1,
          t_start: epoch(start),
          t_end: epoch(end),
          ok: good,
          latency_ms: good ? Number(end - start) / 1e6 : null,
          ...(status === undefined ? {} : { status }),
          ...(good ? {} : { error: err }),
          bytes,
          ...(conn.lport === undefined ? {} : { lport: conn.lport }),
          ...(e.ref ? { pair: 'ref' } : {}),
        });
        if (keep && !conn.closed) resolve(conn);
        else {
          conn.closed = true;
          conn.sock.destroy();
          resolve(undefined);
        }
      };
      const answered = (r: ResponseDone): void => {
        const good = r.status >= 200 && r.status < 300;
        finish(good ? undefined : `http-${r.status}`, r.status, r.bodyBytes, probe.keepAlive && r.reusable);
      };
      conn.onData = (b) => {
        try {
          const r = reader.feed(b);
          if (r) answered(r);
        } catch (e) {
          finish(e instanceof HttpProtocolError ? 'bad-response' : 'error');
        }
      };
      conn.onEnd = () => {
        if (!reader.started) return finish('reset');
        try {
          answered(reader.end());
        } catch {
          finish('reset');
        }
      };
      conn.onError = (err) => finish(connectErrorReason(err.code));
      const timer = setTimeout(() => finish('timeout'), probe.timeoutMs);
      conn.sock.write(e.request);
    });

  const worker = async (): Promise<void> => {
    const conns: (Conn | undefined)[] = endpoints.map(() => undefined);
    for (let i = next++; i < probe.count; i = next++) {
      for (let k = 0; k < endpoints.length; k++) {
        const side = (i + k) % endpoints.length;
        conns[side] = await one(i, endpoints[side], side, conns[side]);
      }
    }
    for (const c of conns) c?.sock.destroy();
  };
  await Promise.all(Array.from({ length: Math.max(1, probe.concurrency) }, worker));
  return { lines: lines.filter((l) => l !== undefined), ok };
}
