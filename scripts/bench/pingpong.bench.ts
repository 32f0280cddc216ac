/**
 * Ping-pong bench: our pingpong probe (probes/native/pingpong.c against its echo server) beside
 * Debian's sockperf (`sockperf ping-pong` against `sockperf server`) on the same path, TCP and
 * UDP with 16-byte messages, interleaved in rounds so the machine's noise hits all alike.
 * All report the ROUND TRIP here (sockperf's full-log latency is one-way: ×2, as the sockperf
 * parser stores it). Paths: loopback (zero delay), and when a lab is up, a zero-delay lab path
 * (client namespace → the router's own address, one veth hop) and lab path A (emulated delay).
 * Like for like: our client in block mode (a blocking read, as sockperf's client with one socket)
 * against sockperf, whose first 400 ms and last 50 ms (its warm-up and cool-down, left out of its
 * full log) are left out of ours too; the target is p50 and p99 within 5 µs. Beside it our
 * default busy-poll client and its difference to block: the scheduler wake-up the busy poll
 * removes (negative), or the CPU it takes from what shares its core (positive; the lab pins the
 * client to the delay helper's CPU). Both tools' clients and servers run pinned to one CPU (see
 * benchPingpong). Also prints our tcp-rr 1/1 (netperf TCP_RR's default sizes;
 * netperf is not in Debian main, so there is no reference row for it).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { labCpu } from '../../lab/sys.js';
import { haveTool } from '../../local/targets.js';
import { runPingpong, startEchoServer } from '../../probes/native/tcping.js';
import { ensureTcping } from '../../probes/native/tcping-build.js';
import { f1, labClientPrefix, type Stat, stat } from './stat.bench.js';

const ROUNDS = 2;
const SECONDS = 2;
const MSG = 16;
const LIMIT_US = 5;
/** sockperf's warm-up and cool-down (its full log leaves them out), left out of ours alike. */
const WARMUP_NS = 400e6;
const COOLDOWN_NS = 50e6;

type Wait = 'busy' | 'block';

/** Our series: round trips in µs. */
async function ours(
  bin: string,
  host: string,
  port: number,
  mode: 'tcp' | 'udp' | 'tcp-rr',
  wait: Wait,
  dir: string,
  prefix: string[],
  sizes: [number, number] = [MSG, MSG],
): Promise<number[]> {
  const out = path.join(dir, `pp-${mode}-${wait}-${Date.now()}.csv`);
  const r = await runPingpong({
    address: host,
    port,
    mode,
    requestBytes: sizes[0],
    responseBytes: sizes[1],
    durationSeconds: SECONDS,
    count: 0,
    timeoutMs: 1000,
    wait,
    out,
    binary: bin,
    prefix,
  });
  if (!r.ok) throw new Error(`pingpong: ${r.reason}`);
  const v: number[] = [];
  let first: number | undefined;
  for (const l of (await readFile(out, 'utf8')).split('\n')) {
    const f = l.split(',');
    if (f.length !== 4 || !/^\d+$/.test(f[0])) continue;
    const tx = Number(f[1]);
    first ??= tx;
    if (f[3] !== 'ok' || tx < first + WARMUP_NS || tx > first + SECONDS * 1e9 - COOLDOWN_NS) continue;
    v.push(Number(f[2]) / 1000);
  }
  return v;
}

/** sockperf's series: its full log's one-way latency × 2, µs. */
async function sockperf(host: string, port: number, mode: 'tcp' | 'udp', dir: string, prefix: string[]) {
  const log = path.join(dir, `sp-${mode}-${Date.now()}.csv`);
  const args = ['ping-pong', '-i', host, '-p', String(port), '-t', String(SECONDS), '-m', String(MSG)];
  if (mode === 'tcp') args.push('--tcp');
  args.push('--full-log', log);
  const [cmd, ...argv] = [...prefix, 'sockperf', ...args];
  await promisify(execFile)(cmd, argv, { timeout: SECONDS * 1000 + 20_000, maxBuffer: 1 << 22 });
  const v: number[] = [];
  for (const l of (await readFile(log, 'utf8')).split('\n')) {
    if (!/^\d+, /.test(l)) continue;
    v.push(Number(l.split(',')[3]) * 2);
  }
  return v;
}

const sign = (x: number) => `${x >= 0 ? '+' : ''}${f1(x)}`;
/** One tool's series: pooled over the rounds, and each round's own p99 (how far the noise moves it). */
interface Series {
  all: Stat;
  rounds: Stat[];
}

function series(rounds: number[][]): Series {
  return { all: stat(rounds.flat()), rounds: rounds.map((r) => stat(r)) };
}

const row = (label: string, x: Series) =>
  `    ${label.padEnd(32)} n ${String(x.all.n).padStart(7)}  p50 ${f1(x.all.p50).padStart(7)} µs  p99 ${f1(x.all.p99).padStart(7)} µs  (rounds' p99 ${x.rounds.map((r) => f1(r.p99)).join(', ')})`;

function rows(title: string, block: Series, ref: Series, busy: Series): string[] {
  const d50 = block.all.p50 - ref.all.p50;
  const d99 = block.all.p99 - ref.all.p99;
  const ok = Math.abs(d50) <= LIMIT_US && Math.abs(d99) <= LIMIT_US;
  return [
    `  ${title}`,
    row('pathbench pingpong (block)', block),
    row('sockperf ping-pong (one-way×2)', ref),
    `    block vs sockperf: Δ p50 ${sign(d50)} µs, Δ p99 ${sign(d99)} µs → ${ok ? `within ${LIMIT_US} µs` : `NOT within ${LIMIT_US} µs`}`,
    row('pathbench pingpong (busy-poll)', busy),
    `    busy-poll vs block: Δ p50 ${sign(busy.all.p50 - block.all.p50)} µs, Δ p99 ${sign(busy.all.p99 - block.all.p99)} µs (− the wake-up it removes, + the CPU it takes)`,
  ];
}

async function onePath(
  title: string,
  bin: string,
  dir: string,
  prefix: string[],
  host: string,
  ports: { pingpong: number; sockperf: number },
  modes: readonly ('tcp' | 'udp')[],
): Promise<string[]> {
  const out = [
    `${title} (${host}; ${MSG}-byte messages, ${ROUNDS} interleaved rounds of ${SECONDS} s each, first ${WARMUP_NS / 1e6} ms and last ${COOLDOWN_NS / 1e6} ms of each left out as sockperf does):`,
  ];
  for (const mode of modes) {
    const block: number[][] = [];
    const ref: number[][] = [];
    const busy: number[][] = [];
    for (let r = 0; r < ROUNDS; r++) {
      block.push(await ours(bin, host, ports.pingpong, mode, 'block', dir, prefix));
      ref.push(await sockperf(host, ports.sockperf, mode, dir, prefix));
      busy.push(await ours(bin, host, ports.pingpong, mode, 'busy', dir, prefix));
    }
    out.push(...rows(`${mode}:`, series(block), series(ref), series(busy)));
  }
  const rr = stat(await ours(bin, host, ports.pingpong, 'tcp-rr', 'busy', dir, prefix, [1, 1]));
  out.push(
    `  tcp-rr 1/1 bytes, busy-poll (netperf TCP_RR sizes; no netperf here): n ${rr.n}  p50 ${f1(rr.p50)} µs  p99 ${f1(rr.p99)} µs round trip`,
  );
  return out;
}

/** A loopback port that was free a moment ago (TCP; sockperf binds UDP on it too). */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve, reject) => {
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Start `sockperf server` (TCP and UDP) on host:port, optionally in a namespace; returns a stopper. */
async function sockperfServers(host: string, port: number, prefix: string[]): Promise<() => Promise<void>> {
  const kids = [['--tcp'], []].map((extra) => {
    const [cmd, ...argv] = [...prefix, 'sockperf', 'server', ...extra, '-i', host, '-p', String(port)];
    return spawn(cmd, argv, { stdio: 'ignore' });
  });
  await sleep(500);
  for (const k of kids) {
    if (k.exitCode !== null) throw new Error(`sockperf server on ${host}:${port} exited with ${k.exitCode}`);
  }
  return async () => {
    for (const k of kids) {
      if (k.exitCode === null && k.signalCode === null) {
        const gone = new Promise<void>((r) => k.once('close', () => r()));
        k.kill('SIGTERM');
        await gone;
      }
    }
  };
}

/**
 * One path's rows with its own pair of servers (our echo, sockperf's TCP and UDP) on `host`,
 * started through `serverPrefix` (namespace and CPU pin) and stopped after.
 */
async function withServers(
  title: string,
  bin: string,
  dir: string,
  clientPrefix: string[],
  serverPrefix: string[],
  host: string,
  sockperfPort: number,
): Promise<string[]> {
  const echo = await startEchoServer(bin, host, 0, serverPrefix);
  try {
    const stopSp = await sockperfServers(host, sockperfPort, serverPrefix);
    try {
      return await onePath(title, bin, dir, clientPrefix, host, { pingpong: echo.port, sockperf: sockperfPort }, [
        'tcp',
        'udp',
      ]);
    } finally {
      await stopSp();
    }
  } finally {
    await echo.close();
  }
}

/**
 * Run the ping-pong bench; returns the lines it printed. Every client and server of both tools
 * runs pinned to one CPU (the lab's, where the lab also pins its client and delay helpers):
 * left to the scheduler, each tool's server landed on a CPU of its own choosing, and that alone
 * moved one tool's p50 by 10–40 µs against the other's on lab path A here.
 */
export async function benchPingpong(): Promise<{ lines: string[] }> {
  const built = await ensureTcping();
  if (!built.ok) return { lines: [`pingpong: skipped, helper unavailable: ${built.reason}`] };
  if (!haveTool('sockperf')) return { lines: ['pingpong: skipped, sockperf not installed (the reference)'] };
  const bin = built.path;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pathbench-bench-pp-'));
  const cpu = labCpu();
  const pin = ['taskset', '-c', String(cpu)];
  const on = `, every client and server on CPU ${cpu}`;
  const lines: string[] = [];
  try {
    // Loopback: both servers on 127.0.0.1.
    lines.push(...(await withServers(`loopback, zero delay${on}`, bin, dir, pin, pin, '127.0.0.1', await freePort())));
    const found = await labClientPrefix();
    if ('skipped' in found) {
      lines.push(`lab paths: skipped (${found.skipped})`);
      return { lines };
    }
    const { lab, prefix } = found;
    const inNs = (role: string) => ['ip', 'netns', 'exec', `${lab}${role}`, ...pin];
    // Zero-delay lab path: servers in the router namespace on its client-side address.
    lines.push(
      ...(await withServers(`zero-delay lab path${on}`, bin, dir, prefix, inNs('router'), '10.0.1.1', 11_211)),
    );
    // Lab path A: servers in its target namespace beside the lab's own (lab/servers.ts; the bench
    // starts pinned ones on other ports), behind the emulated delay.
    lines.push(...(await withServers(`lab path A${on}`, bin, dir, prefix, inNs('a'), '10.0.2.10', 11_212)));
    return { lines };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
