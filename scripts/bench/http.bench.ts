/**
 * HTTP precision bench: what the http probe costs by itself at keep-alive
 * on, concurrency 1, 1 KiB answers. On loopback our probe (the real runHttp, raw JSONL parsed
 * by parseHttp) and wrk (C, Debian) hit the same target — the agent's own HTTP server, run as
 * a separate process (`dist/agent.cjs serve`) so it does not share the probe's event loop —
 * interleaved in rounds so the machine's noise hits both alike. The figure http
 * self-calibration stores is printed next to them. On lab path A (when the lab is up) both
 * run from the client namespace against the path's HTTP target at the same moment.
 *
 * wrk caveat: it prints percentiles from its own histogram (1 µs steps) per run, so its
 * rounds cannot be pooled; we print each round and the median of the rounds. ab is not used:
 * its percentiles are whole milliseconds.
 */

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { z } from 'zod';
import { AGENT_BUNDLE, ensureAgentBundle } from '../../agent/bundle.js';
import { calibrate } from '../../agent/calibrate.js';
import { agentReportSchema } from '../../core/agent-report.js';
import type { AgentSpec } from '../../core/agent-spec.js';
import { percentileOf } from '../../core/stats.js';
import { parseDocument } from '../../core/stored-document.js';
import { LAB_PORTS } from '../../lab/profiles/lab-profile.js';
import { parseHttp } from '../../probes/http/http.parser.js';
import { runHttp } from '../../probes/http/http.runner.js';
import type { HttpProbe } from '../../probes/http/http.schema.js';
import { f1, labClientPrefix, stat } from './stat.bench.js';

const execFileP = promisify(execFile);
const AGENT = AGENT_BUNDLE;

const ROUNDS = 3;
const REQUESTS = 3000;
const PAYLOAD = 1024;
const WRK_SECONDS = 3;
/** Path A's target address inside the lab (lab/profiles/seed-000-profile.ts). */
const LAB_A_HOST = '10.0.2.10';

/** The rounds' middle figure, unreadable (NaN) rounds dropped: nearest-rank p50, so the lower middle of an even count. */
const middleOfRounds = (xs: number[]): number => percentileOf(xs.filter(Number.isFinite), 500) ?? Number.NaN;

function row(name: string, n: string, p50: number, p99: number): string {
  return `  ${name.padEnd(40)} ${n.padStart(7)} ${f1(p50).padStart(8)} ${f1(p99).padStart(8)}`;
}

function versus(name: string, a: number, b: number, bName: string): string {
  const d = a - b;
  const ratio = b > 0 ? (a / b).toFixed(2) : 'n/a';
  return `  ${name.padEnd(40)} ${d >= 0 ? '+' : ''}${f1(d)} µs vs ${bName} (×${ratio})`;
}

/** A wrk time ("12.00us", "1.89ms", "2.01s", "1.00m") in µs; NaN when unreadable. */
export function wrkTimeUs(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim());
  if (!m) return Number.NaN;
  const scale = { us: 1, ms: 1e3, s: 1e6, m: 60e6 }[m[2] as 'us' | 'ms' | 's' | 'm'];
  return Number(m[1]) * scale;
}

export interface WrkResult {
  p50: number;
  p99: number;
  requests: number;
  /** "Non-2xx or 3xx responses" and "Socket errors" lines, verbatim, when wrk printed them. */
  errors: string[];
}

/** Parse `wrk --latency` output: the Latency Distribution's 50%/99% lines and the request count. */
export function parseWrk(stdout: string): WrkResult {
  const pct = (q: string): number => {
    const m = new RegExp(`^\\s*${q}%\\s+(\\S+)\\s*$`, 'm').exec(stdout);
    return m ? wrkTimeUs(m[1]) : Number.NaN;
  };
  const req = /^\s*(\d+) requests in /m.exec(stdout);
  const errors = stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('Non-2xx') || l.startsWith('Socket errors'));
  return { p50: pct('50'), p99: pct('99'), requests: req ? Number(req[1]) : 0, errors };
}

async function wrk(url: string, prefix: string[] = [], connections = 1): Promise<WrkResult> {
  const [cmd, ...args] = [...prefix, 'wrk', '-t1', `-c${connections}`, `-d${WRK_SECONDS}s`, '--latency', url];
  const { stdout } = await execFileP(cmd, args, { timeout: (WRK_SECONDS + 30) * 1000 });
  const r = parseWrk(stdout);
  if (!Number.isFinite(r.p50)) throw new Error(`wrk printed no latency distribution:\n${stdout}`);
  return r;
}

async function wrkAvailable(): Promise<boolean> {
  return execFileP('wrk', ['--version']).then(
    () => true,
    // wrk --version exits 1 after printing its banner.
    (e: { stdout?: string }) => /wrk/.test(e.stdout ?? ''),
  );
}

function probeSpec(count: number, concurrency = 1): HttpProbe {
  return {
    kind: 'http',
    name: 'http',
    count,
    concurrency,
    keepAlive: true,
    payloadBytes: PAYLOAD,
    trials: 1,
    timeoutMs: 2000,
  };
}

/** Latencies (µs) of the ok requests in one raw http JSONL file; failures counted apart. */
async function readProbeFile(file: string): Promise<{ us: number[]; failed: number; ports: number }> {
  const recs = parseHttp(await readFile(file, 'utf8'), { runId: 'bench', pathId: 'bench', probe: 'http', trial: 1 });
  const ok = recs.filter((r) => r.ok && r.value !== null);
  return {
    us: ok.map((r) => (r.value as number) * 1000),
    failed: recs.length - ok.length,
    ports: new Set(recs.map((r) => r.local_port)).size,
  };
}

/** Our probe in this process, through the real runner. */
async function probeLocal(
  port: number,
  dir: string,
  round: number,
): Promise<{ us: number[]; failed: number; ports: number }> {
  const outDir = path.join(dir, `local-${round}`);
  const out = await runHttp(probeSpec(REQUESTS), { target: { host: '127.0.0.1', port }, outDir, log: () => {} });
  if (out.files.length === 0) throw new Error(`http probe: ${out.reason ?? 'no output'}`);
  return readProbeFile(path.join(outDir, out.files[0]));
}

/** Our probe inside a namespace: the agent bundle's `run` with a one-probe spec. */
async function probeInNetns(
  prefix: string[],
  host: string,
  port: number,
  dir: string,
  round: number,
  concurrency = 1,
): Promise<{ us: number[]; failed: number; calibration?: unknown }> {
  const spec: AgentSpec = {
    runId: 'bench',
    pathId: 'lab-a',
    target: { host, port },
    probes: [probeSpec(REQUESTS, concurrency)],
    skipped: [],
  };
  const specFile = path.join(dir, `spec-${round}-c${concurrency}.json`);
  const outDir = path.join(dir, `lab-${round}-c${concurrency}`);
  await writeFile(specFile, JSON.stringify(spec));
  const [cmd, ...args] = [...prefix, process.execPath, AGENT, 'run', '--spec', specFile, '--out', outDir];
  await execFileP(cmd, args, { timeout: 120_000 });
  const reportFile = path.join(outDir, 'agent.json');
  const report = parseDocument(reportFile, await readFile(reportFile, 'utf8'), agentReportSchema, 'agent report');
  const p = report.probes[0];
  const files = p?.files ?? [];
  if (!files.length) throw new Error(`http probe in namespace: ${p?.reason ?? 'no output'}`);
  return { ...(await readProbeFile(path.join(outDir, files[0]))), calibration: report.calibration?.http };
}

/** `agent serve --ready-file`: the ports it listens on (here only http is asked for). */
const readyFileSchema = z.object({ http: z.number() });

/** Start `agent.cjs serve --http 0` as a child; resolves with its port once the ready file exists. */
async function startServeChild(dir: string): Promise<{ port: number; child: ChildProcess; stop(): Promise<void> }> {
  const ready = path.join(dir, 'serve-ready.json');
  const child = spawn(process.execPath, [AGENT, 'serve', '--host', '127.0.0.1', '--http', '0', '--ready-file', ready], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => {
    stderr += b.toString();
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`agent serve exited ${child.exitCode}: ${stderr.trim()}`);
    const text = await readFile(ready, 'utf8').catch(() => undefined);
    if (text) return { port: parseDocument(ready, text, readyFileSchema, 'ready file').http, child, stop };
    await sleep(50);
  }
  await stop();
  throw new Error(`agent serve not ready after 10 s: ${stderr.trim()}`);
}

async function labPathA(dir: string): Promise<string[]> {
  const found = await labClientPrefix();
  if ('skipped' in found) return [`lab path A: skipped (${found.skipped})`];
  const { lab, prefix } = found;
  const port = LAB_PORTS.http;
  const url = `http://${LAB_A_HOST}:${port}/bytes/${PAYLOAD}`;
  const ours: number[] = [];
  let failed = 0;
  let cal: unknown;
  const w: WrkResult[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const p = await probeInNetns(prefix, LAB_A_HOST, port, dir, r);
    ours.push(...p.us);
    failed += p.failed;
    cal ??= p.calibration;
    w.push(await wrk(url, prefix));
  }
  const so = stat(ours);
  const wp50 = middleOfRounds(w.map((x) => x.p50));
  const wp99 = middleOfRounds(w.map((x) => x.p99));
  const lines = [
    `lab path A (${lab}client → ${url}, keep-alive, c=1, ${ROUNDS} interleaved rounds):`,
    `  ${'client'.padEnd(40)} ${'n'.padStart(7)} ${'p50 µs'.padStart(8)} ${'p99 µs'.padStart(8)}`,
    row('pathbench http probe (agent bundle)', String(so.n), so.p50, so.p99),
    ...w.map((x, i) => row(`wrk -t1 -c1 -d${WRK_SECONDS}s, round ${i + 1}`, String(x.requests), x.p50, x.p99)),
    row('wrk, median of rounds', '', wp50, wp99),
    versus('probe p50', so.p50, wp50, 'wrk'),
    versus('probe p99', so.p99, wp99, 'wrk'),
  ];
  if (failed) lines.push(`  probe: ${failed} failed requests`);
  const errs = w.flatMap((x) => x.errors);
  if (errs.length) lines.push(`  wrk: ${errs.join('; ')}`);
  if (cal !== undefined) lines.push(`  agent's own http calibration in ${lab}client: ${JSON.stringify(cal)}`);
  // Seed 002 also ran 16 connections: the probe's C client against wrk's, one round each (the
  // target saturates here, so both mostly measure its queue; the point is the client's share).
  const c16 = await probeInNetns(prefix, LAB_A_HOST, port, dir, 0, 16);
  const w16 = await wrk(url, prefix, 16);
  const s16 = stat(c16.us);
  lines.push(
    `lab path A, keep-alive, c=16 (${REQUESTS} requests; wrk ${WRK_SECONDS} s):`,
    row('pathbench http probe, 16 connections', String(s16.n), s16.p50, s16.p99),
    row('wrk -t1 -c16', String(w16.requests), w16.p50, w16.p99),
    versus('probe p50', s16.p50, w16.p50, 'wrk'),
    versus('probe p99', s16.p99, w16.p99, 'wrk'),
  );
  return lines;
}

/** Run the http precision bench; returns the lines it printed. */
export async function benchHttp(): Promise<{ lines: string[] }> {
  const lines: string[] = [];
  // Collected, not printed: the caller (cli/bench.ts) prints the lines.
  const say = (l: string): void => {
    lines.push(l);
  };
  if (!(await wrkAvailable())) {
    say('http precision: skipped, wrk not installed (apt-get install wrk)');
    return { lines };
  }
  await ensureAgentBundle();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pathbench-bench-http-'));
  try {
    const server = await startServeChild(dir);
    try {
      const url = `http://127.0.0.1:${server.port}/bytes/${PAYLOAD}`;
      // Warm both the target's code and ours before the first measured round, so round 1 is
      // not a measurement of JIT start-up (the probe's own warm-up covers only the client).
      await probeLocal(server.port, dir, -1);
      const ours: number[][] = [];
      let failed = 0;
      let ports = 0;
      const w: WrkResult[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const p = await probeLocal(server.port, dir, r);
        ours.push(p.us);
        failed += p.failed;
        ports = Math.max(ports, p.ports);
        w.push(await wrk(url));
      }
      const so = stat(ours.flat());
      const wp50 = middleOfRounds(w.map((x) => x.p50));
      const wp99 = middleOfRounds(w.map((x) => x.p99));
      say(
        `http precision, loopback, agent serve (separate process) ${url}, keep-alive, c=1, ${ROUNDS} interleaved rounds:`,
      );
      say(`  ${'client'.padEnd(40)} ${'n'.padStart(7)} ${'p50 µs'.padStart(8)} ${'p99 µs'.padStart(8)}`);
      for (const [i, us] of ours.entries()) {
        const s = stat(us);
        say(row(`pathbench http probe, round ${i + 1}`, String(s.n), s.p50, s.p99));
      }
      say(row('pathbench http probe, all rounds', String(so.n), so.p50, so.p99));
      for (const [i, x] of w.entries()) {
        say(row(`wrk -t1 -c1 -d${WRK_SECONDS}s --latency, round ${i + 1}`, String(x.requests), x.p50, x.p99));
      }
      say(row('wrk, median of rounds', '', wp50, wp99));
      say(versus('probe p50', so.p50, wp50, 'wrk'));
      say(versus('probe p99', so.p99, wp99, 'wrk'));
      if (failed) say(`  probe: ${failed} failed requests`);
      if (ports > 1) say(`  probe: keep-alive used ${ports} connections in one round (expected 1)`);
      const errs = w.flatMap((x) => x.errors);
      if (errs.length) say(`  wrk: ${errs.join('; ')}`);

      const t0 = Date.now();
      const c = await calibrate('http', { payloadBytes: PAYLOAD, keepAlive: true, concurrency: 1 });
      say(
        `calibrate('http'): p50 ${f1(c.p50_us)} µs, p99 ${f1(c.p99_us)} µs, n ${c.n}, ${Date.now() - t0} ms — ${c.method}`,
      );
      say(`  calibration p50 − bench probe p50: ${f1(c.p50_us - so.p50)} µs`);
    } finally {
      await server.stop();
    }
    for (const l of await labPathA(dir)) say(l);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return { lines };
}
