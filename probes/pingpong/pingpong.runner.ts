/**
 * pingpong probe: back-to-back request/response exchanges with the native helper
 * (probes/native/pingpong.c, `tcping --pingpong`), against the echo server every target runs on
 * TARGET_PORTS.pingpong (`agent serve --pingpong`, `tcping --echo`). The helper writes the raw
 * log itself, one CSV line per exchange, timed with CLOCK_MONOTONIC, the reply busy-polled or
 * awaited in a blocking read (the probe's `wait`; the log's clock name says which); the runner
 * then gzips it: `<probe>/<trial>.csv.gz` (a same-AZ minute is over a million lines), one series
 * per trial (`trials`, one after another). A sidecar `<probe>/<trial>.meta.json` keeps the argv,
 * the helper's notes and a failure's reason.
 * No fallback: without the helper (no gcc) the probe fails and says why; a Node loop would add
 * its own event-loop wake-up (tens of µs) to every exchange, which is what this probe removes.
 */
import { mkdir, open, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { TARGET_PORTS } from '../../core/target-ports.js';
import { runPingpong, TcpingArgumentError } from '../native/tcping.js';
import { ensureTcping } from '../native/tcping-build.js';
import { gzipInPlace } from '../run-kit/compress.js';
import { nicTrial, readNic } from '../run-kit/nic.js';
import type { ProbeRunner } from '../run-kit/runner-types.js';
import { runTrials, type TrialResult } from '../run-kit/trials.js';
import { resolveTarget } from '../tcp-connect/tcp-connect.runner.js';
import type { PingpongProbe } from './pingpong.schema.js';

/**
 * Counts from the END of a log (its last 64 KiB, so a 1 M-line log is never read whole): the
 * helper's "# end exchanges=N ok=M" line, and the last failure's status before it.
 */
export function summarizePingpongTail(tail: string): {
  exchanges: number;
  ok: number;
  lastError?: string;
  clocks?: PingpongClocks;
} {
  const lines = tail.split('\n');
  const clocks = clocksOf([...lines].reverse().find((l) => l.startsWith('# clocks ')));
  const end = /^# end exchanges=(\d+) ok=(\d+)$/.exec([...lines].reverse().find((l) => l.startsWith('# end')) ?? '');
  const lastError = lines
    .filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith('seq,'))
    // status is the 4th column (seq,tx_ns,rtt_ns,status[,net_ns])
    .map((l) => l.split(',')[3] ?? '')
    .reverse()
    .find((s) => s !== 'ok');
  return {
    exchanges: end ? Number(end[1]) : 0,
    ok: end ? Number(end[2]) : 0,
    ...(lastError ? { lastError } : {}),
    ...(clocks ? { clocks } : {}),
  };
}

/**
 * Each end's clock over a series, from the helper's "# clocks" line: its largest adjtimex maximum
 * error in µs, or "unsync" when it was not disciplined at some point; oneKernel when both ends
 * are one kernel (one clock, no error between them). Absent when the server sent no readings.
 */
export interface PingpongClocks {
  clientMaxErrorUs: number | 'unsync';
  serverMaxErrorUs: number | 'unsync';
  oneKernel: boolean;
}

function clocksOf(line: string | undefined): PingpongClocks | undefined {
  const m = /^# clocks client_maxerror_us=(\d+|unsync) server_maxerror_us=(\d+|unsync) one_kernel=([01])$/.exec(
    line ?? '',
  );
  if (!m) return undefined;
  const bound = (v: string) => (v === 'unsync' ? 'unsync' : Number(v));
  return { clientMaxErrorUs: bound(m[1]), serverMaxErrorUs: bound(m[2]), oneKernel: m[3] === '1' };
}

async function readTail(file: string, bytes = 1 << 16): Promise<string> {
  const fh = await open(file, 'r').catch(() => undefined);
  if (!fh) return '';
  try {
    const { size } = await fh.stat();
    const len = Math.min(size, bytes);
    const buf = Buffer.alloc(len);
    await fh.read(buf, 0, len, size - len);
    return buf.toString('utf8');
  } finally {
    await fh.close();
  }
}

export const runPingpongProbe: ProbeRunner<PingpongProbe> = (probe, ctx) =>
  runTrials(probe.trials ?? 1, 'tcping', (trial) => pingpongTrial(probe, ctx, trial));

/** One series: `<trial>.csv.gz` (the helper's log) and `<trial>.meta.json`. */
async function pingpongTrial(
  probe: PingpongProbe,
  ctx: Parameters<ProbeRunner<PingpongProbe>>[1],
  trial: number,
): Promise<TrialResult> {
  const dir = path.join(ctx.outDir, probe.name);
  await mkdir(dir, { recursive: true });
  const csv = path.join(dir, `${trial}.csv`);
  const port = probe.port ?? TARGET_PORTS.pingpong;
  const responseBytes = probe.responseBytes ?? probe.messageBytes;
  const wait = probe.wait ?? 'busy';
  const writeMeta = (extra: Record<string, unknown>) =>
    writeFile(
      path.join(dir, `${trial}.meta.json`),
      `${JSON.stringify({ tool: 'pingpong', trial, mode: probe.mode, wait, port, requestBytes: probe.messageBytes, responseBytes, note: 'rtt_us is the round trip; one_way_us = rtt_us / 2', ...extra }, null, 2)}\n`,
    );
  const fail = async (reason: string, fatal: boolean) => {
    await writeMeta({ reason });
    ctx.log('pingpong failed', { probe: probe.name, trial, reason });
    return { files: [`${probe.name}/${trial}.meta.json`], reason, fatal };
  };
  const target = await resolveTarget(ctx.target.host);
  if (!target.ok) return fail(target.reason, true);
  const built = await ensureTcping();
  if (!built.ok) return fail(`pingpong helper unavailable: ${built.reason}`, true);
  ctx.log('pingpong start', { probe: probe.name, trial, address: target.address, port, mode: probe.mode, wait });
  const nicBefore = await readNic(ctx.nic);
  const startedAtMs = Date.now();
  let result: Awaited<ReturnType<typeof runPingpong>>;
  try {
    result = await runPingpong({
      address: target.address,
      port,
      mode: probe.mode,
      requestBytes: probe.messageBytes,
      responseBytes,
      durationSeconds: probe.durationSeconds,
      count: probe.count,
      timeoutMs: probe.timeoutMs,
      wait,
      out: csv,
      binary: built.path,
    });
  } catch (e) {
    if (e instanceof TcpingArgumentError) return fail(e.message, true);
    throw e;
  }
  const endedAtMs = Date.now();
  const nic = nicTrial(nicBefore, nicBefore ? await readNic(ctx.nic) : undefined);
  const tail = await readTail(csv);
  const sum = summarizePingpongTail(tail);
  let reason = result.ok ? undefined : (result.reason ?? 'helper failed');
  if (!reason && sum.ok === 0) reason = sum.lastError ? `no exchange succeeded (${sum.lastError})` : 'no exchanges';
  const files: string[] = [];
  if (tail !== '') {
    try {
      await gzipInPlace(csv);
      files.push(`${probe.name}/${trial}.csv.gz`);
    } catch (e) {
      ctx.log('pingpong: could not compress the log; keeping it plain', { error: (e as Error).message });
      files.push(`${probe.name}/${trial}.csv`);
    }
  }
  const binary = path.basename(built.path);
  await writeMeta({
    binary,
    startedAtMs,
    endedAtMs,
    exchanges: sum.exchanges,
    ok: sum.ok,
    ...(sum.clocks ? { clocks: sum.clocks } : {}),
    ...(result.notes?.length ? { notes: result.notes } : {}),
    ...(reason ? { reason } : {}),
    ...nic,
  });
  files.push(`${probe.name}/${trial}.meta.json`);
  ctx.log('pingpong done', { probe: probe.name, trial, exchanges: sum.exchanges, ok: sum.ok });
  return { files, version: binary, ...(reason ? { reason } : {}) };
}
