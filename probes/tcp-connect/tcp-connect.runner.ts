/**
 * tcp-connect probe: times TCP three-way handshakes to the target, the way seed 000 measured
 * connect latency (300 handshakes, 0.2 s apart, 0.4 s timeout counted as loss). Owns the raw
 * format `<probe>/1.jsonl`: one line per attempt
 * `{seq, t_start, t_end, ok, rtt_ms, error?, clock}` (t_* epoch ms, rtt_ms null when failed).
 *
 * Two measuring paths, same raw format: the precise native helper (agent/native,
 * compiled C; rtt_ms = kernel handshake RTT, app_rtt_ms = its busy-polled connect time) when it
 * can be built and run here, else the Node path below (clock "app-hrtime"). The Node path
 * costs ~0.1–0.2 ms of event-loop overhead per sample; fine for cross-AZ/-region paths,
 * visible on same-AZ ones — hence the helper.
 *
 * Design choices of the Node path (why):
 * - Open loop: attempt i starts at t0 + i·intervalMs (absolute schedule), whether or not the
 *   previous one has finished. The rate never drifts and a stalled handshake cannot hide the
 *   ones behind it (no coordinated omission).
 * - The host is resolved once, before the series, so DNS never lands inside a measurement.
 * - A timeout, refusal or reset is a FAILED sample with a short error code, never a slow one.
 * - Each connected socket is closed with an abortive close (RST, `resetAndDestroy`): neither
 *   side keeps a TIME_WAIT entry, so long or fast series cannot exhaust the client's ephemeral
 *   ports or disturb the probes that follow (seed 002's keep-alive-off lesson). The price is a
 *   reset in the server's log (iperf3 prints "unable to receive cookie"), which is harmless.
 * - Hot path: everything per attempt lives in preallocated typed arrays; the clock is read with
 *   `process.hrtime.bigint()` right after `connect()` is issued (the syscall itself runs on the
 *   next tick) and first thing in the callback. A warm-up against a private loopback
 *   listener runs the code path before the first measured sample.
 */
import { lookup } from 'node:dns/promises';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { errorMessage } from '../../core/errors.js';
import { parseTcpingLines, runTcping, TcpingArgumentError } from '../native/tcping.js';
import { ensureTcping } from '../native/tcping-build.js';
import { nicTrial, readNic } from '../run-kit/nic.js';
import type { ProbeContext, ProbeOutcome, ProbeRunner } from '../run-kit/runner-types.js';
import type { TcpConnectProbe } from './tcp-connect.schema.js';

/** Map a Node/libuv error code to the short failure reason stored in the raw line. */
export function connectErrorReason(code: string | undefined): string {
  switch (code) {
    case 'ETIMEDOUT':
      return 'timeout';
    case 'ECONNREFUSED':
      return 'refused';
    case 'ECONNRESET':
      return 'reset';
    case 'EHOSTUNREACH':
      return 'host-unreachable';
    case 'ENETUNREACH':
      return 'net-unreachable';
    case 'EADDRNOTAVAIL':
      return 'ephemeral-ports-exhausted';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'dns';
    case undefined:
      return 'error';
    default:
      return code.toLowerCase();
  }
}

/** Epoch milliseconds of an hrtime reading, anchored once so all stamps share one clock. */
function makeEpochClock(): (hr: bigint) => number {
  const hrBase = process.hrtime.bigint();
  const epochBase = performance.timeOrigin + performance.now();
  return (hr) => epochBase + Number(hr - hrBase) / 1e6;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

export type Resolved = { ok: true; address: string } | { ok: false; reason: string };

/**
 * Resolve once, before the series, so no name lookup lands inside a measurement. IPv4 is
 * preferred when a name has both families (the measured paths are IPv4; "localhost" may list
 * ::1 first while a lab server listens on 127.0.0.1); an IPv6 literal measures IPv6.
 */
export async function resolveTarget(host: string): Promise<Resolved> {
  try {
    const all = await lookup(host, { all: true });
    const pick = all.find((a) => a.family === 4) ?? all[0];
    if (!pick) return { ok: false, reason: `cannot resolve ${host}: no addresses` };
    return { ok: true, address: pick.address };
  } catch (e) {
    return { ok: false, reason: `cannot resolve ${host}: ${(e as NodeJS.ErrnoException).code ?? errorMessage(e)}` };
  }
}

/** Outcome from the finished raw file's lines: "failed" only when no attempt succeeded. */
function outcomeOf(rel: string, errors: (string | undefined)[], tools: Record<string, string>): ProbeOutcome {
  const reasons = new Map<string, number>();
  for (const e of errors) if (e !== undefined) reasons.set(e, (reasons.get(e) ?? 0) + 1);
  const ok = errors.length - [...reasons.values()].reduce((a, b) => a + b, 0);
  if (ok === 0 && errors.length > 0) {
    const why = [...reasons].map(([r, n]) => `${r} ×${n}`).join(', ');
    return {
      status: 'failed',
      files: [rel],
      trials: 1,
      reason: `all ${errors.length} connects failed (${why})`,
      tools,
    };
  }
  return { status: 'ok', files: [rel], trials: 1, tools };
}

/**
 * Run `count` timed TCP connects to the target (or `probe.port`), one every `intervalMs`,
 * with the precise native helper when it is available (compiled and runnable here), else
 * with the Node path. Writes `<name>/1.jsonl`; which one measured is in `tools.tcping` /
 * the lines' `clock`. Status is "failed" only when no attempt succeeded or the host does
 * not resolve.
 */
export const runTcpConnect: ProbeRunner<TcpConnectProbe> = async (probe, ctx) => {
  const target = await resolveTarget(ctx.target.host);
  if (!target.ok) return { status: 'failed', files: [], trials: 0, reason: target.reason };
  // The NIC's allowance counters around the series: a sidecar `1.meta.json` only when read.
  const nicBefore = await readNic(ctx.nic);
  const measure = async (): Promise<ProbeOutcome> => {
    const precise = await runTcpConnectPrecise(probe, ctx, target.address);
    if (precise.outcome) return precise.outcome;
    // The helper is an improvement, not a requirement: say why it was not used and measure anyway.
    ctx.log('tcp-connect: precise helper unavailable, using the Node path', { reason: precise.unavailable });
    const out = await runTcpConnectNode(probe, ctx);
    return { ...out, tools: { ...out.tools, tcping: `unavailable: ${precise.unavailable}` } };
  };
  const out = await measure();
  const { nic } = nicTrial(nicBefore, nicBefore ? await readNic(ctx.nic) : undefined);
  if (!nic) return out;
  const meta = `${probe.name}/1.meta.json`;
  await mkdir(path.join(ctx.outDir, probe.name), { recursive: true });
  await writeFile(path.join(ctx.outDir, meta), `${JSON.stringify({ tool: 'tcp-connect', trial: 1, nic }, null, 2)}\n`);
  return { ...out, files: [...out.files, meta] };
};

/**
 * The precise path: the native helper (probes/native/tcping.ts) measures the series
 * and writes the raw lines itself (kernel figure as rtt_ms, app-observed figure as
 * app_rtt_ms). Returns `unavailable` with the reason when the helper cannot be used here.
 */
export async function runTcpConnectPrecise(
  probe: TcpConnectProbe,
  ctx: ProbeContext,
  address: string,
): Promise<{ outcome?: ProbeOutcome; unavailable?: string }> {
  const port = probe.port ?? ctx.target.port;
  const rel = `${probe.name}/1.jsonl`;
  const file = path.join(ctx.outDir, rel);
  const built = await ensureTcping();
  if (!built.ok) return { unavailable: built.reason };
  await mkdir(path.join(ctx.outDir, probe.name), { recursive: true });
  ctx.log('tcp-connect start', { probe: probe.name, address, port, count: probe.count, clock: 'tcping' });
  let result: Awaited<ReturnType<typeof runTcping>>;
  try {
    result = await runTcping({
      host: address,
      port,
      count: probe.count,
      intervalMs: probe.intervalMs,
      timeoutMs: probe.timeoutMs,
      out: file,
      binary: built.path,
    });
  } catch (e) {
    // Options the helper cannot express (e.g. a fractional interval): the Node path can.
    if (e instanceof TcpingArgumentError) return { unavailable: e.message };
    throw e;
  }
  if (!result.ok) return { unavailable: result.reason ?? 'helper failed' };
  const lines = parseTcpingLines(await readFile(file, 'utf8'));
  ctx.log('tcp-connect done', { probe: probe.name, ok: lines.filter((l) => l.ok).length, notes: result.notes });
  const tools: Record<string, string> = { tcping: path.basename(built.path) };
  if (result.notes?.length) tools.tcpingNotes = result.notes.join('; ');
  return {
    outcome: outcomeOf(
      rel,
      lines.map((l) => (l.ok ? undefined : (l.error ?? 'error'))),
      tools,
    ),
  };
}

/** The Node path only (open loop, app-hrtime clock); also the fallback of runTcpConnect. */
export const runTcpConnectNode: ProbeRunner<TcpConnectProbe> = async (probe, ctx) => {
  const port = probe.port ?? ctx.target.port;
  const rel = `${probe.name}/1.jsonl`;
  const target = await resolveTarget(ctx.target.host);
  if (!target.ok) return { status: 'failed', files: [], trials: 0, reason: target.reason };
  const address = target.address;
  await warmUpConnect();
  ctx.log('tcp-connect start', { probe: probe.name, address, port, count: probe.count, clock: 'app-hrtime' });
  const samples = await connectSeries(address, port, probe.count, probe.intervalMs, probe.timeoutMs);
  const lines: string[] = new Array(probe.count);
  for (let i = 0; i < probe.count; i++) {
    const err = samples.error[i];
    lines[i] = JSON.stringify({
      seq: i + 1,
      t_start: round3(samples.tStart[i]),
      t_end: round3(samples.tEnd[i]),
      ok: err === undefined,
      rtt_ms: err === undefined ? samples.rtt[i] : null,
      ...(err === undefined ? {} : { error: err }),
      clock: 'app-hrtime',
    });
  }
  await mkdir(path.join(ctx.outDir, probe.name), { recursive: true });
  await writeFile(path.join(ctx.outDir, rel), probe.count ? `${lines.join('\n')}\n` : '');
  ctx.log('tcp-connect done', { probe: probe.name, ok: samples.error.filter((e) => e === undefined).length });
  return outcomeOf(rel, samples.error, { node: process.versions.node });
};

/**
 * Run the connect code path a few times against a private loopback listener, so the JIT
 * and lazily loaded internals are warm before the first measured sample (the first Node
 * connect otherwise reads ~5x slower) and the target never sees the extra handshakes.
 */
async function warmUpConnect(): Promise<void> {
  const server = net.createServer((s) => s.destroy());
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as net.AddressInfo;
    await connectSeries('127.0.0.1', port, 5, 0, 1000);
  } catch {
    // No loopback here (odd, but possible in a sandbox): measure without the warm-up.
  } finally {
    server.close();
  }
}

/** Per-attempt results in parallel arrays; rtt is meaningful only where error is undefined. */
export interface ConnectSeries {
  tStart: Float64Array;
  tEnd: Float64Array;
  rtt: Float64Array;
  error: (string | undefined)[];
  /** Epoch ms of the schedule's origin: attempt i is due at origin + i × intervalMs. */
  origin: number;
}

/**
 * The open-loop connect series itself (exported for the precision helper's comparison runs).
 * `address` must be an IP literal so that no name lookup happens inside the timed section.
 */
export function connectSeries(
  address: string,
  port: number,
  count: number,
  intervalMs: number,
  timeoutMs: number,
): Promise<ConnectSeries> {
  const out: ConnectSeries = {
    tStart: new Float64Array(count),
    tEnd: new Float64Array(count),
    rtt: new Float64Array(count),
    error: new Array(count).fill(undefined),
    origin: Number.NaN,
  };
  if (count === 0) return Promise.resolve(out);
  const epoch = makeEpochClock();
  const intervalNs = BigInt(Math.round(intervalMs * 1e6));
  const timeoutNs = BigInt(Math.round(timeoutMs * 1e6));
  return new Promise((resolve) => {
    let pending = count;
    let next = 0;
    const t0 = process.hrtime.bigint();
    out.origin = epoch(t0);

    const attempt = (i: number): void => {
      let done = false;
      const sock = new net.Socket();
      let start = 0n;
      let timer: NodeJS.Timeout | undefined;
      let soon: NodeJS.Immediate | undefined;
      const finish = (end: bigint, err: string | undefined): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        clearImmediate(soon);
        out.tStart[i] = epoch(start);
        out.tEnd[i] = epoch(end);
        out.rtt[i] = Number(end - start) / 1e6;
        out.error[i] = err;
        if (err === undefined) sock.resetAndDestroy();
        else sock.destroy();
        if (--pending === 0) resolve(out);
      };
      sock.once('connect', () => finish(process.hrtime.bigint(), undefined));
      // Late errors after a finished attempt (e.g. the RST racing a server FIN) are ignored.
      sock.on('error', (e: NodeJS.ErrnoException) => finish(process.hrtime.bigint(), connectErrorReason(e.code)));
      // An attempt times out only once timeoutMs have passed since its own stamp on the hrtime
      // clock: Node's timers may fire up to ~1 ms early (see wait below), so an early expiry
      // waits out the remainder instead of calling a handshake still in its time lost.
      const expire = (): void => {
        const now = process.hrtime.bigint();
        const leftMs = Number(start + timeoutNs - now) / 1e6;
        if (leftMs <= 0) finish(now, 'timeout');
        else if (leftMs > 1.5) timer = setTimeout(expire, leftMs - 1);
        else soon = setImmediate(expire);
      };
      sock.connect(port, address);
      // Stamp after connect() returns: for an IP literal Node defers the connect(2) syscall
      // to process.nextTick, so the SYN still leaves after this stamp, while the JS handle
      // set-up (~20 µs, measured) stays outside the window. The timeout counts from here too.
      start = process.hrtime.bigint();
      timer = setTimeout(expire, timeoutMs);
    };

    // Node's timers count whole milliseconds of a loop time cached per iteration, so a timer
    // can fire up to ~1 ms before its due time on the hrtime clock: wait out the remainder with
    // setImmediate (which still lets earlier attempts' completions be stamped) so no attempt
    // ever starts ahead of its schedule.
    const wait = (): void => {
      const waitMs = Number(t0 + intervalNs * BigInt(next) - process.hrtime.bigint()) / 1e6;
      if (waitMs <= 0) tick();
      else if (waitMs > 1.5) setTimeout(wait, waitMs - 1);
      else setImmediate(wait);
    };
    const tick = (): void => {
      attempt(next++);
      if (next < count) wait();
    };
    tick();
  });
}
