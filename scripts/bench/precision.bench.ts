/**
 * Precision bench: what the tcp-connect probe costs by itself. On loopback (a
 * zero-delay path) every microsecond measured is the probe's plus the kernel's; we print our
 * helper (kernel clock and app clock), a plain Node connect loop and nping side by side,
 * interleaved in rounds so the machine's noise hits all of them alike, plus the figures
 * self-calibration stores. When a lab is up, the helper and nping also run interleaved on a
 * zero-delay lab path (one veth hop to the router) and on lab path A, with the wire captured by
 * tcpdump as a reference for both; and pingpong udp's network figure (kernel software
 * timestamps, network_rtt_us) beside its own round trip and the wire's, on the zero-delay path and
 * on path A.
 *
 * nping caveat (nping/ProbeMode.cc, NpingTarget::setProbeSentTCP): nping stamps the start
 * with gettimeofday *after* its nonblocking connect() returned and the end when its event loop
 * dispatches the completion. Whatever the kernel does inside connect() is left out: on loopback
 * that is the whole handshake, and in the veth lab it is the SYN's way through the emulated
 * router up to the delay queue (the bench prints that time, measured by our helper). nping only
 * prints per-probe times at 0.1 ms resolution, so per-probe values come from runs of 2 probes
 * (its Max and Min rtt are then both samples, at 1 µs resolution).
 */

import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { calibrate } from '../../agent/calibrate.js';
import { readState } from '../../lab/lab-state.js';
import { labLocation } from '../../lab/location.js';
import { labCpu } from '../../lab/sys.js';
import { haveTool } from '../../local/targets.js';
import {
  parseTcpingLines,
  runPingpong,
  runTcping,
  startEchoServer,
  startQuietListener,
} from '../../probes/native/tcping.js';
import { ensureTcping } from '../../probes/native/tcping-build.js';
import { NETWORK_METRIC, parsePingpong } from '../../probes/pingpong/pingpong.parser.js';
import { f1, labClientPrefix, type Stat, stat } from './stat.bench.js';

const execFileP = promisify(execFile);

const ROUNDS = 3;
const HELPER_N = 500;
const NODE_N = 500;
const NPING_PAIRS = 100;
const GAP_MS = 2;
const PINGPONG_N = 3000;

function row(name: string, s: Stat): string {
  return `  ${name.padEnd(38)} ${String(s.n).padStart(5)} ${f1(s.p50).padStart(8)} ${f1(s.p99).padStart(8)}`;
}

function versus(name: string, s: Stat, ref: Stat, refName: string): string {
  const d = s.p50 - ref.p50;
  const ratio = ref.p50 > 0 ? (s.p50 / ref.p50).toFixed(2) : 'n/a';
  return `  ${name.padEnd(38)} p50 ${d >= 0 ? '+' : ''}${f1(d)} µs vs ${refName} (×${ratio})`;
}

/** Helper series: primary (kernel) and app-clock values, µs. */
async function helperSeries(
  bin: string,
  host: string,
  port: number,
  count: number,
  intervalMs: number,
  dir: string,
  prefix: string[] = [],
): Promise<{ kernel: number[]; app: number[]; call: number[]; failed: number }> {
  const out = path.join(dir, `tcping-${Date.now()}.jsonl`);
  const r = await runTcping({ host, port, count, intervalMs, timeoutMs: 400, out, binary: bin, prefix });
  if (!r.ok) throw new Error(`tcping: ${r.reason}`);
  const lines = parseTcpingLines(await readFile(out, 'utf8'));
  const ok = lines.filter((l) => l.ok && l.rtt_ms !== null);
  return {
    kernel: ok.map((l) => (l.rtt_ms as number) * 1000),
    app: ok.map((l) => l.app_rtt_ms * 1000),
    call: ok.flatMap((l) => (l.connect_call_us === undefined ? [] : [l.connect_call_us])),
    failed: lines.length - ok.length,
  };
}

/** The "plain Node" probe: one net.Socket connect at a time, hrtime around it, 2 ms gaps. */
async function nodeSeries(port: number, count: number, gapMs: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    await sleep(gapMs);
    const v = await new Promise<number | null>((resolve) => {
      const s = new net.Socket();
      const t0 = process.hrtime.bigint();
      s.once('connect', () => {
        const t1 = process.hrtime.bigint();
        s.resetAndDestroy();
        resolve(Number(t1 - t0) / 1000);
      });
      s.once('error', () => resolve(null));
      s.connect(port, '127.0.0.1');
    });
    if (v !== null) out.push(v);
  }
  return out;
}

/** nping values in µs from runs of 2 probes (Max and Min rtt are then exactly the two samples). */
async function npingPairs(
  host: string,
  port: number,
  pairs: number,
  gapMs: number,
  prefix: string[] = [],
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < pairs; i++) {
    const argv = ['--tcp-connect', '-c', '2', '--delay', `${gapMs}ms`, '-p', String(port), host, '-q'];
    const [cmd, ...args] = [...prefix, 'nping', ...argv];
    const { stdout } = await execFileP(cmd, args, { timeout: 20_000 });
    const m = /Max rtt: ([\d.]+)ms \| Min rtt: ([\d.]+)ms/.exec(stdout);
    if (m) out.push(Number(m[1]) * 1000, Number(m[2]) * 1000);
  }
  return out;
}

/** One long nping run: its own summary line (avg is all it offers at µs resolution). */
async function npingSummary(
  host: string,
  port: number,
  count: number,
  gapMs: number,
  prefix: string[] = [],
): Promise<string> {
  const argv = ['--tcp-connect', '-c', String(count), '--delay', `${gapMs}ms`, '-p', String(port), host, '-q'];
  const [cmd, ...args] = [...prefix, 'nping', ...argv];
  const { stdout } = await execFileP(cmd, args, { timeout: 120_000 });
  return /Max rtt:.*$/m.exec(stdout)?.[0] ?? 'no summary';
}

async function npingAvailable(): Promise<boolean> {
  return execFileP('nping', ['--version']).then(
    () => true,
    () => false,
  );
}

/**
 * tcpdump on the client's interface with `filter`: off the lab's CPU where it cannot delay a
 * probe, buffered, with nanosecond stamps. Returns a stop function that gives it time to drain,
 * stops it and yields the capture as `tcpdump -tt -nn` text lines, or undefined without tcpdump.
 * The kernel stamps packets at the tap: a reference independent of the probes' clocks.
 * Not --immediate-mode (nor -U): a capture that wakes tcpdump per packet does so inside the send
 * path, between the tap's stamp and the driver's, and moved what it measures. Measured on the
 * zero-delay lab path, pingpong udp, 3,000 exchanges: immediate mode put the wire 5.5 µs above
 * the probe's network figure (network 8.8 µs, round trip +10 µs); buffered, the wire read 14.1 µs
 * against a network figure of 13.5 µs with the capture and 13.3–13.4 µs without one. Buffered
 * blocks reach tcpdump up to its 1 s block timeout late: the stop waits that out.
 */
async function startCapture(
  clientNs: string,
  filter: string,
  file: string,
): Promise<(() => Promise<string[]>) | undefined> {
  if (!haveTool('tcpdump')) return undefined;
  const args = ['netns', 'exec', clientNs, ...offLabCpu(), 'tcpdump', '-i', 'eth0', '-nn'];
  args.push('--time-stamp-precision=nano', '-w', file, filter);
  const child = spawn('ip', args, { stdio: 'ignore' });
  await sleep(700);
  return async () => {
    await sleep(1500);
    child.kill('SIGINT');
    await once(child, 'exit');
    const { stdout } = await execFileP('tcpdump', ['-nn', '-tt', '--time-stamp-precision=nano', '-r', file], {
      maxBuffer: 64 << 20,
    });
    return stdout.split('\n');
  };
}

/** A captured line's stamp in epoch ns, and its addresses' ports and rest, or undefined. */
function packetOf(line: string): { ns: bigint; from: number; to: number; rest: string } | undefined {
  const m = /^(\d+)\.(\d{9}) IP \S+?\.(\d+) > \S+?\.(\d+): (.*)$/.exec(line);
  return m
    ? { ns: BigInt(m[1]) * 1_000_000_000n + BigInt(m[2]), from: Number(m[3]), to: Number(m[4]), rest: m[5] }
    : undefined;
}

/**
 * The wire's own round trip of each TCP handshake to `port`: SYN out → SYN-ACK in on the client's
 * interface. Returns a stop function that yields { at (SYN epoch ms), us } per handshake.
 */
async function startWire(
  clientNs: string,
  port: number,
  file: string,
): Promise<(() => Promise<{ at: number; us: number }[]>) | undefined> {
  const stop = await startCapture(clientNs, `tcp port ${port} and tcp[tcpflags] & tcp-syn != 0`, file);
  if (!stop) return undefined;
  return async () => {
    const syn = new Map<number, number>();
    const out: { at: number; us: number }[] = [];
    for (const line of await stop()) {
      const p = packetOf(line);
      const flags = p && /^Flags \[(S\.?)\]/.exec(p.rest)?.[1];
      if (!p || !flags) continue;
      const us = Number(p.ns / 1000n);
      if (flags === 'S') syn.set(p.from, us);
      else {
        const sent = syn.get(p.to);
        if (sent !== undefined) {
          out.push({ at: sent / 1000, us: us - sent });
          syn.delete(p.to);
        }
      }
    }
    return out;
  };
}

/** A taskset prefix for a CPU other than the lab's, when there is one. */
function offLabCpu(): string[] {
  const n = os.availableParallelism();
  const cpu = labCpu();
  return n > 1 ? ['taskset', '-c', String(cpu === 0 ? 1 : 0)] : [];
}

/**
 * One lab path, interleaved: our helper, then nping, ROUNDS times, with the wire captured
 * throughout. Besides both probes and the wire it prints the time our helper spent inside
 * connect(): nping's clock starts only when connect() returns, and in a veth lab the sender's
 * kernel forwards the SYN through the emulated router (and into the delay queue) inside that
 * call, so that is the part of the round trip nping cannot see.
 */
async function labPath(
  title: string,
  bin: string,
  dir: string,
  clientNs: string,
  prefix: string[],
  host: string,
  port: number,
): Promise<string[]> {
  const gap = 5;
  const k: number[] = [];
  const a: number[] = [];
  const call: number[] = [];
  const n: number[] = [];
  const stopWire = await startWire(clientNs, port, path.join(dir, `wire-${port}.pcap`));
  const windows: { tool: 'tcping' | 'nping'; from: number; to: number }[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    let from = Date.now();
    const h = await helperSeries(bin, host, port, 200, gap, dir, prefix);
    windows.push({ tool: 'tcping', from, to: Date.now() });
    k.push(...h.kernel);
    a.push(...h.app);
    call.push(...h.call);
    from = Date.now();
    n.push(...(await npingPairs(host, port, 50, gap, prefix)));
    windows.push({ tool: 'nping', from, to: Date.now() });
  }
  const sk = stat(k);
  const sa = stat(a);
  const sc = stat(call);
  const sn = stat(n);
  const wireLines: string[] = [];
  if (stopWire) {
    const wire = await stopWire();
    const during = (tool: string) =>
      wire.filter((w) => windows.some((x) => x.tool === tool && w.at >= x.from && w.at <= x.to)).map((w) => w.us);
    const wt = stat(during('tcping'));
    const wn = stat(during('nping'));
    wireLines.push(
      row('wire RTT during tcping (tcpdump)', wt),
      row('wire RTT during nping (tcpdump)', wn),
      versus('tcping kernel', sk, wt, 'wire'),
      versus('nping', sn, wn, 'wire'),
    );
  } else wireLines.push('  wire reference: skipped (tcpdump not installed)');
  return [
    `${title} (${clientNs} → ${host}:${port}, ${gap} ms gaps, ${ROUNDS} interleaved rounds):`,
    `  ${'probe'.padEnd(38)} ${'n'.padStart(5)} ${'p50 µs'.padStart(8)} ${'p99 µs'.padStart(8)}`,
    row('pathbench tcping, kernel-tcpi_rtt', sk),
    row('pathbench tcping, app clock', sa),
    row('nping --tcp-connect (2-probe runs)', sn),
    versus('tcping kernel', sk, sn, 'nping'),
    versus('tcping app', sa, sn, 'nping'),
    ...wireLines,
    row('time inside connect() (tcping)', sc),
    `  (nping's clock starts when connect() returns; the lab forwards the SYN inside that call)`,
  ];
}

/**
 * UDP request/reply pairs to `port` on the client's eth0, for the pingpong comparison: each request
 * paired with the next reply from it, one exchange at a time. Returns a stop function yielding
 * the wire round trips (µs).
 */
async function startUdpWire(
  clientNs: string,
  port: number,
  file: string,
): Promise<(() => Promise<number[]>) | undefined> {
  const stop = await startCapture(clientNs, `udp port ${port}`, file);
  if (!stop) return undefined;
  return async () => {
    const out: number[] = [];
    let sent: bigint | undefined;
    for (const line of await stop()) {
      // Every line is UDP (the capture's filter); tcpdump decodes some ports' payloads by port
      // (7000–7009 as AFS RX, the lab's pingpong 7007 among them), so its text is not "UDP, …".
      const p = packetOf(line);
      if (!p) continue;
      if (p.to === port) sent = p.ns;
      else if (p.from === port && sent !== undefined) {
        out.push(Number(p.ns - sent) / 1000);
        sent = undefined;
      }
    }
    return out;
  };
}

/**
 * pingpong udp on one lab path with the wire captured: its user-clock round trip, its network
 * round trip by kernel software timestamps (network_rtt_us), the host part between them, and
 * the wire's round trip by tcpdump on the client's eth0, which the network figure should match.
 */
async function pingpongVsWire(
  title: string,
  bin: string,
  dir: string,
  clientNs: string,
  prefix: string[],
  host: string,
  port: number,
): Promise<string[]> {
  const stopWire = await startUdpWire(clientNs, port, path.join(dir, `udp-wire-${port}.pcap`));
  const out = path.join(dir, `pingpong-${port}-${Date.now()}.csv`);
  const r = await runPingpong({
    address: host,
    port,
    mode: 'udp',
    requestBytes: 16,
    responseBytes: 16,
    durationSeconds: 0,
    count: PINGPONG_N,
    timeoutMs: 200,
    wait: 'busy',
    out,
    binary: bin,
    prefix,
  });
  const wire = stopWire ? await stopWire() : undefined;
  if (!r.ok) return [`${title}: pingpong failed: ${r.reason}`];
  const recs = parsePingpong(await readFile(out, 'utf8'), { runId: 'bench', pathId: title, probe: 'pp', trial: 1 });
  const ok = (metric: string) => recs.filter((x) => x.metric === metric && x.ok).map((x) => x.value as number);
  const rtt = stat(ok('rtt_us'));
  const net = stat(ok(NETWORK_METRIC));
  const host_ = stat(recs.flatMap((x) => (typeof x.host_us === 'number' ? [x.host_us] : [])));
  const lines = [
    `${title}, pingpong udp 16 B (${clientNs} → ${host}:${port}, back to back, busy-poll):`,
    `  ${'figure'.padEnd(38)} ${'n'.padStart(5)} ${'p50 µs'.padStart(8)} ${'p99 µs'.padStart(8)}`,
    row('round trip, helper clock (rtt_us)', rtt),
    row('network, kernel stamps (network_rtt_us)', net),
    row('host part (host_us = rtt − network)', host_),
  ];
  if (wire) {
    const w = stat(wire);
    lines.push(row('wire RTT (tcpdump on eth0)', w), versus('network_rtt_us', net, w, 'wire'));
  } else lines.push('  wire reference: skipped (tcpdump not installed)');
  return lines;
}

async function labRows(bin: string, dir: string, hasNping: boolean): Promise<string[]> {
  const found = await labClientPrefix();
  if ('skipped' in found) return [`lab paths: skipped (${found.skipped})`];
  if (!hasNping) return ['lab paths: skipped (nping not installed)'];
  const { lab, prefix } = found;
  const clientNs = `${lab}client`;
  const out: string[] = [];
  // pingpong's network figure against the wire: an echo server of ours on the zero-delay hop,
  // and path A's own target (the lab's agent serve, its pingpong port).
  const echo = await startEchoServer(bin, '10.0.1.1', 0, ['ip', 'netns', 'exec', `${lab}router`]);
  try {
    out.push(...(await pingpongVsWire('zero-delay lab path', bin, dir, clientNs, prefix, '10.0.1.1', echo.port)));
  } finally {
    await echo.close();
  }
  const ppPort = readState(labLocation({ prefix: lab }).dir)?.ports.pingpong;
  out.push(
    ...(ppPort === undefined
      ? ['lab path A, pingpong: skipped (the lab has no pingpong server; `pathbench lab down` and `up`)']
      : await pingpongVsWire('lab path A', bin, dir, clientNs, prefix, '10.0.2.10', ppPort)),
  );
  // Zero-delay lab path: one veth hop to the router's own address, no delay queue on the way;
  // a quiet listener of ours answers there.
  const routerIp = '10.0.1.1';
  const listener = await startQuietListener(bin, routerIp, ['ip', 'netns', 'exec', `${lab}router`]);
  try {
    out.push(...(await labPath('zero-delay lab path', bin, dir, clientNs, prefix, routerIp, listener.port)));
  } finally {
    await listener.close();
  }
  out.push(...(await labPath('lab path A', bin, dir, clientNs, prefix, '10.0.2.10', 7000)));
  out.push(`  nping -c 300 summary (path A): ${await npingSummary('10.0.2.10', 7000, 300, 5, prefix)}`);
  return out;
}

/** Run the precision bench; returns the lines it printed. */
export async function benchPrecision(): Promise<{ lines: string[] }> {
  const lines: string[] = [];
  const say = (l: string): void => {
    lines.push(l);
  };
  const built = await ensureTcping();
  if (!built.ok) {
    say(`precision: skipped, precise helper unavailable: ${built.reason}`);
    return { lines };
  }
  const bin = built.path;
  const hasNping = await npingAvailable();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pathbench-precision-'));
  const listener = await startQuietListener(bin);
  try {
    const k: number[] = [];
    const a: number[] = [];
    const nd: number[] = [];
    const np: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const h = await helperSeries(bin, '127.0.0.1', listener.port, HELPER_N, GAP_MS, dir);
      k.push(...h.kernel);
      a.push(...h.app);
      nd.push(...(await nodeSeries(listener.port, NODE_N, GAP_MS)));
      if (hasNping) np.push(...(await npingPairs('127.0.0.1', listener.port, NPING_PAIRS, GAP_MS)));
    }
    const sk = stat(k);
    const sa = stat(a);
    const sd = stat(nd);
    const sn = stat(np);
    say(
      `precision, loopback (zero-delay path), quiet listener 127.0.0.1:${listener.port}, ${GAP_MS} ms gaps, ${ROUNDS} interleaved rounds:`,
    );
    say(`  ${'probe'.padEnd(38)} ${'n'.padStart(5)} ${'p50 µs'.padStart(8)} ${'p99 µs'.padStart(8)}`);
    say(row('pathbench tcping, kernel-tcpi_rtt', sk));
    say(row('pathbench tcping, app clock (busy-poll)', sa));
    say(row('plain Node net.Socket + hrtime', sd));
    if (hasNping) {
      say(row('nping --tcp-connect (2-probe runs)', sn));
      say(`  nping -c 500 summary: ${await npingSummary('127.0.0.1', listener.port, 500, GAP_MS)}`);
      say(versus('tcping kernel', sk, sn, 'nping'));
      say(versus('tcping app', sa, sn, 'nping'));
      say(versus('plain Node', sd, sn, 'nping'));
      say('  (nping starts its clock after connect() returns: on loopback that excludes the handshake)');
    } else say('  nping: not installed, comparison skipped');
    say(versus('plain Node', sd, sk, 'tcping kernel'));

    const c10 = await calibrate('tcp-connect', { count: 200, intervalMs: 10 });
    const c2 = await calibrate('tcp-connect', { count: 200, intervalMs: GAP_MS });
    for (const c of [c10, c2]) {
      say(
        `calibrate(): p50 ${f1(c.p50_us)} µs, p99 ${f1(c.p99_us)} µs, n ${c.n}` +
          (c.app_p50_us !== undefined
            ? ` (app clock p50 ${f1(c.app_p50_us)}, p99 ${f1(c.app_p99_us ?? Number.NaN)})`
            : '') +
          ` — ${c.method}`,
      );
    }
    say(`  calibration p50 − bench p50 (kernel clock, 2 ms): ${f1(c2.p50_us - sk.p50)} µs`);
  } finally {
    await listener.close();
  }
  try {
    for (const l of await labRows(bin, dir, hasNping)) say(l);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return { lines };
}
