/**
 * Ping-pong bench: our pingpong probe (agent/native/pingpong.c against its echo server) beside
 * Debian's sockperf (`sockperf ping-pong` against `sockperf server`) on the same path, TCP and
 * UDP with 16-byte messages, interleaved in rounds so the machine's noise hits both alike.
 * Both report the ROUND TRIP here (sockperf's full-log latency is one-way: ×2, as the sockperf
 * parser stores it). Paths: loopback (zero delay), and when a lab is up, a zero-delay lab path
 * (client namespace → the router's own address, one veth hop) and lab path A (emulated delay).
 * The target is p50 and p99 within 5 µs of sockperf's. Also prints our tcp-rr 1/1 (netperf
 * TCP_RR's default sizes; netperf is not in Debian main, so there is no reference row for it).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { ensureTcping, runPingpong, startEchoServer } from '../../agent/native/tcping.js';
import { TARGET_PORTS } from '../../functions/core/target-ports.js';
import { haveTool } from '../../local/targets.js';
import { f1, labClientPrefix, type Stat, stat } from './stat.js';

const ROUNDS = 3;
const SECONDS = 2;
const MSG = 16;
const LIMIT_US = 5;

/** Our series: round trips in µs. */
async function ours(
  bin: string,
  host: string,
  port: number,
  mode: 'tcp' | 'udp' | 'tcp-rr',
  dir: string,
  prefix: string[],
  sizes: [number, number] = [MSG, MSG],
): Promise<number[]> {
  const out = path.join(dir, `pp-${mode}-${Date.now()}.csv`);
  const r = await runPingpong({
    address: host,
    port,
    mode,
    requestBytes: sizes[0],
    responseBytes: sizes[1],
    durationSeconds: SECONDS,
    count: 0,
    timeoutMs: 1000,
    out,
    binary: bin,
    prefix,
  });
  if (!r.ok) throw new Error(`pingpong: ${r.reason}`);
  const v: number[] = [];
  for (const l of (await readFile(out, 'utf8')).split('\n')) {
    const f = l.split(',');
    if (f.length === 4 && f[3] === 'ok') v.push(Number(f[2]) / 1000);
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

function rows(title: string, mine: Stat, ref: Stat): string[] {
  const d50 = mine.p50 - ref.p50;
  const d99 = mine.p99 - ref.p99;
  const sign = (x: number) => `${x >= 0 ? '+' : ''}${f1(x)}`;
  const ok = Math.abs(d50) <= LIMIT_US && Math.abs(d99) <= LIMIT_US;
  return [
    `  ${title}`,
    `    ${'pathbench pingpong (busy-poll)'.padEnd(32)} n ${String(mine.n).padStart(7)}  p50 ${f1(mine.p50).padStart(7)} µs  p99 ${f1(mine.p99).padStart(7)} µs`,
    `    ${'sockperf ping-pong (one-way×2)'.padEnd(32)} n ${String(ref.n).padStart(7)}  p50 ${f1(ref.p50).padStart(7)} µs  p99 ${f1(ref.p99).padStart(7)} µs`,
    `    Δ p50 ${sign(d50)} µs, Δ p99 ${sign(d99)} µs → ${ok ? `within ${LIMIT_US} µs` : `NOT within ${LIMIT_US} µs`}`,
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
  const out = [`${title} (${host}; ${MSG}-byte messages, ${ROUNDS} interleaved rounds of ${SECONDS} s each):`];
  for (const mode of modes) {
    const a: number[] = [];
    const b: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      a.push(...(await ours(bin, host, ports.pingpong, mode, dir, prefix)));
      b.push(...(await sockperf(host, ports.sockperf, mode, dir, prefix)));
    }
    out.push(...rows(`${mode}:`, stat(a), stat(b)));
  }
  const rr = stat(await ours(bin, host, ports.pingpong, 'tcp-rr', dir, prefix, [1, 1]));
  out.push(
    `  tcp-rr 1/1 bytes (netperf TCP_RR sizes; no netperf here): n ${rr.n}  p50 ${f1(rr.p50)} µs  p99 ${f1(rr.p99)} µs round trip`,
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

/** Run the ping-pong bench; returns the lines it printed. */
export async function benchPingpong(): Promise<{ lines: string[] }> {
  const built = await ensureTcping();
  if (!built.ok) return { lines: [`pingpong: skipped, helper unavailable: ${built.reason}`] };
  if (!haveTool('sockperf')) return { lines: ['pingpong: skipped, sockperf not installed (the reference)'] };
  const bin = built.path;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pathbench-bench-pp-'));
  const lines: string[] = [];
  try {
    // Loopback: both servers on 127.0.0.1.
    const echo = await startEchoServer(bin, '127.0.0.1', 0);
    const spPort = await freePort();
    const stopSp = await sockperfServers('127.0.0.1', spPort, []);
    try {
      lines.push(
        ...(await onePath(
          'loopback, zero delay',
          bin,
          dir,
          [],
          '127.0.0.1',
          { pingpong: echo.port, sockperf: spPort },
          ['tcp', 'udp'],
        )),
      );
    } finally {
      await stopSp();
      await echo.close();
    }
    const found = await labClientPrefix();
    if ('skipped' in found) {
      lines.push(`lab paths: skipped (${found.skipped})`);
      return { lines };
    }
    const { lab, prefix } = found;
    // Zero-delay lab path: both servers in the router namespace on its client-side address.
    const routerIp = '10.0.1.1';
    const inRouter = ['ip', 'netns', 'exec', `${lab}router`];
    const labEcho = await startEchoServer(bin, routerIp, 0, inRouter);
    const labSp = 11_211;
    const stopLabSp = await sockperfServers(routerIp, labSp, inRouter);
    try {
      lines.push(
        ...(await onePath(
          'zero-delay lab path',
          bin,
          dir,
          prefix,
          routerIp,
          { pingpong: labEcho.port, sockperf: labSp },
          ['tcp'],
        )),
      );
    } finally {
      await stopLabSp();
      await labEcho.close();
    }
    // Lab path A: the target namespace's own servers (lab/servers.ts), behind the emulated delay.
    lines.push(
      ...(await onePath(
        'lab path A',
        bin,
        dir,
        prefix,
        '10.0.2.10',
        { pingpong: TARGET_PORTS.pingpong, sockperf: TARGET_PORTS.sockperf },
        ['tcp'],
      )),
    );
    return { lines };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
