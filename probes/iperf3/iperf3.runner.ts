/**
 * iperf3 probe: `iperf3 -c HOST -p PORT -J -i I -t T -P N [-u -b RATE --get-server-output]` once
 * per repeat (argv array, never a shell; through run-kit/run-tool.ts).
 *
 * Raw files per repeat r (why two): `<probe>/<r>.json` is iperf3's stdout byte for byte, written
 * before anything parses it, so the file stays tool-native (it may contain iperf3's own
 * `"error"` key, or text after the object). `<probe>/<r>.meta.json` is the sidecar: argv, exit
 * code, signal, stderr, wall-clock start/end, the failure reason and every server-busy attempt.
 * Only when iperf3 printed nothing at all (not installed, killed at the hard timeout, spawn
 * failure) is `<r>.json` a pathbench-authored stand-in in iperf3's error shape:
 * `{"error": "...", "pathbench": {"synthesized": true, "reason": "..."}}`, so every repeat
 * still parses to one failed record and an error is never recorded as 0 bps.
 *
 * Traps handled: "server is busy" (bounded retries with jittered exponential back-off, then
 * reason `server-busy`); exit code 0 on failure (the JSON's `error` key decides); a server that
 * accepts and stalls (hard timeout = duration + margin, SIGTERM then SIGKILL to the process
 * group; reason `timeout`); iperf3 missing (`iperf3-not-installed`).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { UNBOUNDED_BITRATE } from '../probe-fields.js';
import { nicTrial, readNic } from '../run-kit/nic.js';
import { runTool, type ToolResult } from '../run-kit/run-tool.js';
import type { ProbeContext, ProbeOutcome, ProbeRunner } from '../run-kit/runner-types.js';
import { classifyIperf3Error, extractJsonObject } from './iperf3.parser.js';
import type { Iperf3Probe } from './iperf3.schema.js';

/** First line of `iperf3 --version` ("iperf 3.12 (cJSON 1.7.15)" → "3.12"); undefined if missing. */
async function iperf3Version(): Promise<string | undefined> {
  const r = await runTool('iperf3', ['--version'], { timeoutMs: 5000 });
  if (r.notFound) return undefined;
  return /iperf\s+(\S+)/.exec(r.stdout)?.[1] ?? r.stdout.split('\n')[0].trim();
}

export interface Iperf3Options {
  /** Attempts per repeat while the server says it is busy. */
  busyAttempts: number;
  /** First back-off; doubles per attempt, ×(0.5–1.5) jitter, capped at backoffMaxMs. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Hard timeout = duration + this + 10 % of the duration. */
  timeoutMarginMs: number;
  /** Executable to run (tests point it at a missing name). */
  command: string;
}

export const IPERF3_DEFAULTS: Iperf3Options = {
  busyAttempts: 5,
  backoffBaseMs: 2000,
  backoffMaxMs: 30_000,
  timeoutMarginMs: 15_000,
  command: 'iperf3',
};

/** The argv for one repeat (exported for tests and the README). */
export function iperf3Args(probe: Iperf3Probe, host: string, port: number): string[] {
  const args = ['-c', host, '-p', String(port), '-J', '-i', String(probe.intervalSeconds)];
  args.push('-t', String(probe.durationSeconds), '-P', String(probe.streams));
  if (probe.mode === 'udp') {
    // The plan model always sets a bitrate; iperf3's "-b 0" (unlimited) only when the plan spelled
    // out "unbounded", never from a missing or zero rate.
    if (!probe.bitrate || /^0+(\.0*)?[kmgt]?$/i.test(probe.bitrate)) {
      throw new Error(`iperf3 probe ${probe.name}: UDP needs a bounded bitrate, got ${JSON.stringify(probe.bitrate)}`);
    }
    args.push('-u', '-b', probe.bitrate === UNBOUNDED_BITRATE ? '0' : probe.bitrate, '--get-server-output');
  }
  return args;
}

/** The `error` of iperf3's JSON in `stdout`, '' when there is a JSON object without one, undefined when no JSON. */
function jsonError(stdout: string): string | undefined {
  try {
    const doc: unknown = JSON.parse(extractJsonObject(stdout).json);
    if (doc && typeof doc === 'object' && 'error' in doc) return String((doc as { error: unknown }).error);
    return '';
  } catch {
    return undefined;
  }
}

function cut(s: string, n = 4000): string {
  return s.length > n ? `${s.slice(0, n)}…[${s.length - n} more chars]` : s;
}

/** Runner with explicit options (tests shorten the back-off and timeout). */
export async function runIperf3With(probe: Iperf3Probe, ctx: ProbeContext, opt: Iperf3Options): Promise<ProbeOutcome> {
  const host = ctx.target.host;
  const port = probe.port ?? ctx.target.port;
  const dir = path.join(ctx.outDir, probe.name);
  await mkdir(dir, { recursive: true });
  const args = iperf3Args(probe, host, port);
  const version = opt.command === 'iperf3' ? await iperf3Version() : undefined;
  const timeoutMs = probe.durationSeconds * 1100 + opt.timeoutMarginMs;
  const files: string[] = [];
  const failures: string[] = [];
  for (let repeat = 1; repeat <= probe.repeats; repeat++) {
    const attempts: Record<string, unknown>[] = [];
    // The NIC's allowance counters around the repeat (its busy retries included).
    const nicBefore = await readNic(ctx.nic);
    let res: ToolResult;
    let reason: string | undefined;
    for (let attempt = 1; ; attempt++) {
      res = await runTool(opt.command, args, { timeoutMs });
      const err = jsonError(res.stdout);
      reason = undefined;
      if (res.notFound) reason = 'iperf3-not-installed';
      else if (res.spawnError) reason = 'spawn-failed';
      else if (res.timedOut) reason = 'timeout';
      else if (err) reason = classifyIperf3Error(err);
      else if (err === undefined)
        reason = res.stdout.trim() ? 'unparseable-output' : `exit-${res.exitCode ?? res.signal}`;
      if (reason !== 'server-busy' || attempt >= opt.busyAttempts) break;
      const backoff = Math.min(opt.backoffMaxMs, opt.backoffBaseMs * 2 ** (attempt - 1)) * (0.5 + Math.random());
      // The busy attempt's own output is kept here: it is not the repeat's raw file.
      attempts.push({
        attempt,
        reason,
        exitCode: res.exitCode,
        stdout: res.stdout,
        stderr: cut(res.stderr),
        backoffMs: Math.round(backoff),
      });
      ctx.log('iperf3 server busy, retrying', { probe: probe.name, repeat, attempt, backoffMs: Math.round(backoff) });
      await sleep(backoff);
    }
    const nic = nicTrial(nicBefore, nicBefore ? await readNic(ctx.nic) : undefined);
    const rawName = `${repeat}.json`;
    // Raw first: iperf3's stdout verbatim; the stand-in only when there is no stdout at all.
    const raw = res.stdout.trim()
      ? res.stdout
      : `${JSON.stringify({
          error: `pathbench: iperf3 produced no output (${reason})`,
          pathbench: { synthesized: true, reason, startedAtMs: res.startedAtMs, endedAtMs: res.endedAtMs },
        })}\n`;
    await writeFile(path.join(dir, rawName), raw);
    const sidecar = {
      tool: 'iperf3',
      version,
      argv: [opt.command, ...args],
      repeat,
      exitCode: res.exitCode,
      signal: res.signal,
      timedOut: res.timedOut,
      timeoutMs,
      stderr: cut(res.stderr),
      startedAtMs: res.startedAtMs,
      endedAtMs: res.endedAtMs,
      mode: probe.mode,
      streams: probe.streams,
      ...(reason ? { reason } : {}),
      busyAttempts: attempts,
      ...nic,
    };
    await writeFile(path.join(dir, `${repeat}.meta.json`), `${JSON.stringify(sidecar, null, 2)}\n`);
    files.push(`${probe.name}/${rawName}`, `${probe.name}/${repeat}.meta.json`);
    if (reason) {
      failures.push(`repeat ${repeat}: ${reason}`);
      ctx.log('iperf3 repeat failed', { probe: probe.name, repeat, reason, exitCode: res.exitCode });
    }
    // iperf3 is missing: the other repeats would fail the same way.
    if (res.notFound) {
      for (let r = repeat + 1; r <= probe.repeats; r++) failures.push(`repeat ${r}: not run`);
      break;
    }
  }
  const allFailed = failures.length >= probe.repeats;
  const firstReason = failures[0]?.replace(/^repeat \d+: /, '');
  return {
    status: allFailed ? 'failed' : 'ok',
    files,
    trials: probe.repeats,
    ...(failures.length
      ? {
          reason: allFailed
            ? firstReason
            : `${failures.length} of ${probe.repeats} repeats failed: ${failures.join('; ')}`,
        }
      : {}),
    ...(version ? { tools: { iperf3: version } } : {}),
  };
}

/** The iperf3 probe runner (see module header). */
export const runIperf3: ProbeRunner<Iperf3Probe> = (probe, ctx) => runIperf3With(probe, ctx, IPERF3_DEFAULTS);
