// The precise helper next to nping on loopback, at the same moment and against the same quiet
// listener. Loose bounds only (this machine is noisy); the hard numbers are in the bench
// (scripts/bench/precision.bench.ts). nping starts its clock after connect() returns, which on
// loopback excludes the handshake, so it reads a little lower than the helper's app clock.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calibrate } from '../../agent/calibrate.js';
import { percentileOf } from '../../core/stats.js';
import { parseTcpingLines, type QuietListener, runTcping, startQuietListener } from '../../probes/native/tcping.js';
import { ensureTcping } from '../../probes/native/tcping-build.js';

const execFileP = promisify(execFile);

let dir: string;
let bin: string;
let listener: QuietListener;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'pb-precision-it-'));
  const built = await ensureTcping();
  if (!built.ok) throw new Error(`helper did not build: ${built.reason}`);
  bin = built.path;
  listener = await startQuietListener(bin);
});

afterAll(async () => {
  await listener?.close();
  await rm(dir, { recursive: true, force: true });
});

async function npingPairsUs(port: number, pairs: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < pairs; i++) {
    const { stdout } = await execFileP('/usr/bin/nping', [
      '--tcp-connect',
      '-c',
      '2',
      '--delay',
      '2ms',
      '-p',
      String(port),
      '127.0.0.1',
      '-q',
    ]);
    const m = /Max rtt: ([\d.]+)ms \| Min rtt: ([\d.]+)ms/.exec(stdout);
    if (m) out.push(Number(m[1]) * 1000, Number(m[2]) * 1000);
  }
  return out;
}

describe('precise tcp-connect helper vs nping on loopback', () => {
  it('has a p50 close to nping’s (same listener, interleaved)', async () => {
    const kernel: number[] = [];
    const app: number[] = [];
    const nping: number[] = [];
    for (let round = 0; round < 2; round++) {
      const out = path.join(dir, `r${round}.jsonl`);
      const r = await runTcping({
        host: '127.0.0.1',
        port: listener.port,
        count: 300,
        intervalMs: 2,
        timeoutMs: 400,
        out,
      });
      expect(r.ok).toBe(true);
      const lines = parseTcpingLines(await readFile(out, 'utf8'));
      expect(lines.every((l) => l.ok)).toBe(true);
      kernel.push(...lines.map((l) => (l.rtt_ms as number) * 1000));
      app.push(...lines.map((l) => l.app_rtt_ms * 1000));
      nping.push(...(await npingPairsUs(listener.port, 40)));
    }
    expect(nping.length).toBe(160);
    const [k, a, n] = [kernel, app, nping].map((xs) => percentileOf(xs, 500) as number);
    console.log(`loopback p50 µs: tcping kernel ${k}, tcping app ${a.toFixed(1)}, nping ${n}`);
    // Target is 10 µs; allow 30 here for a loaded CI box. A Node-style probe is ~80 µs off.
    expect(Math.abs(k - n)).toBeLessThan(30);
    expect(Math.abs(a - n)).toBeLessThan(30);
    // The kernel's figure is part of the app-observed one (same handshake, narrower window).
    expect(k).toBeLessThanOrEqual(a);
  });

  it('self-calibration agrees with a bench-style run within a few µs', async () => {
    const c = await calibrate('tcp-connect', { count: 200, intervalMs: 2 });
    const out = path.join(dir, 'cmp.jsonl');
    await runTcping({ host: '127.0.0.1', port: listener.port, count: 200, intervalMs: 2, timeoutMs: 400, out });
    const k = percentileOf(
      parseTcpingLines(await readFile(out, 'utf8')).map((l) => (l.rtt_ms as number) * 1000),
      500,
    ) as number;
    expect(c.n).toBe(200);
    expect(Math.abs(c.p50_us - k)).toBeLessThan(10);
  });
});
