/**
 * sockperf probe: `sockperf ping-pong -i IP -p PORT -t T [--tcp] --no-rdtsc --full-log FILE`.
 * Per trial (`trials`, one after another) sockperf itself writes the raw file `<probe>/<trial>.csv`
 * (its full log: one line per exchange), so the raw stays tool-native; the runner then gzips it
 * to `<probe>/<trial>.csv.gz` (compress.ts). `--no-rdtsc` makes its tx/rx times CLOCK_MONOTONIC seconds; the
 * sidecar `<probe>/<trial>.meta.json` stores the monotonic→epoch offset measured around the run (plus
 * argv, exit code, sockperf's own summary on stdout, stderr, reason) so the parser can give each
 * exchange an epoch time. sockperf exits 0 even when it cannot connect or gets no reply, so the
 * outcome is judged from the log and stdout, not the exit code. The server side must run
 * `sockperf server` (with `--tcp` for TCP mode: the default server is UDP only).
 */
import { lookup } from 'node:dns/promises';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipInPlace } from '../run-kit/compress.js';
import { nicTrial, readNic } from '../run-kit/nic.js';
import { runTool } from '../run-kit/run-tool.js';
import type { ProbeContext, ProbeOutcome, ProbeRunner } from '../run-kit/runner-types.js';
import { runTrials, type TrialResult } from '../run-kit/trials.js';
import type { SockperfProbe } from './sockperf.schema.js';

/** epoch ms − CLOCK_MONOTONIC ms (process.hrtime is CLOCK_MONOTONIC on Linux). */
function monotonicToEpochMs(): number {
  return Date.now() - Number(process.hrtime.bigint()) / 1e6;
}

/** Map sockperf's console output to a short failure reason; undefined when it reports success. */
export function sockperfFailure(stdout: string): string | undefined {
  if (/errno=111|connection refused/i.test(stdout)) return 'connection-refused';
  if (/No messages were received/i.test(stdout)) return 'no-replies';
  if (/ERROR/.test(stdout)) return 'sockperf-error';
  return undefined;
}

function cut(s: string, n = 20_000): string {
  return s.length > n ? `${s.slice(0, n)}…[${s.length - n} more chars]` : s;
}

/** Runner with an explicit executable (tests point it at a missing name). */
export async function runSockperfWith(
  probe: SockperfProbe,
  ctx: ProbeContext,
  opt: { command: string },
): Promise<ProbeOutcome> {
  const dir = path.join(ctx.outDir, probe.name);
  await mkdir(dir, { recursive: true });
  const trials = probe.trials ?? 1;
  let ip = ctx.target.host;
  let dns: string | undefined;
  try {
    // sockperf wants an address; resolve once so DNS never lands inside the run.
    ip = (await lookup(ctx.target.host, { family: 4 })).address;
  } catch {
    dns = 'dns';
  }
  return runTrials(trials, 'sockperf', (trial) => runTrial(probe, ctx, opt.command, dir, ip, trial, dns));
}

/** One `sockperf ping-pong` run: `<trial>.csv.gz` (its full log) and `<trial>.meta.json`. */
async function runTrial(
  probe: SockperfProbe,
  ctx: ProbeContext,
  command: string,
  dir: string,
  ip: string,
  trial: number,
  dns: string | undefined,
): Promise<TrialResult> {
  const port = probe.port ?? ctx.target.port;
  const csv = path.join(dir, `${trial}.csv`);
  const files: string[] = [];
  let reason = dns;
  const args = ['ping-pong', '-i', ip, '-p', String(port), '-t', String(probe.durationSeconds)];
  if (probe.mode === 'tcp') args.push('--tcp');
  args.push('--no-rdtsc', '--full-log', csv);
  const nicBefore = reason ? undefined : await readNic(ctx.nic);
  const offsetBefore = monotonicToEpochMs();
  const res = reason ? undefined : await runTool(command, args, { timeoutMs: probe.durationSeconds * 1100 + 15_000 });
  const offsetAfter = monotonicToEpochMs();
  const nic = nicTrial(nicBefore, nicBefore ? await readNic(ctx.nic) : undefined);
  const version = res && !res.notFound ? /version\s+#?(\S+)/.exec(res.stdout)?.[1] : undefined;
  if (res) {
    if (res.notFound) reason = 'sockperf-not-installed';
    else if (res.spawnError) reason = 'spawn-failed';
    else if (res.timedOut) reason = 'timeout';
    else
      reason = sockperfFailure(res.stdout) ?? (res.exitCode === 0 ? undefined : `exit-${res.exitCode ?? res.signal}`);
  }
  const csvExists = await stat(csv).then(
    () => true,
    () => false,
  );
  if (csvExists) {
    // Its full log is one line per exchange (a million a minute same-AZ): stored gzip-compressed.
    try {
      await gzipInPlace(csv);
      files.push(`${probe.name}/${trial}.csv.gz`);
    } catch (e) {
      ctx.log('sockperf: could not compress the full log; keeping it plain', { error: (e as Error).message });
      files.push(`${probe.name}/${trial}.csv`);
    }
  }
  const sidecar = {
    tool: 'sockperf',
    version,
    argv: ['sockperf', ...args.map((a) => (a === csv ? `${trial}.csv` : a))],
    trial,
    exitCode: res?.exitCode ?? null,
    signal: res?.signal ?? null,
    timedOut: res?.timedOut ?? false,
    startedAtMs: res?.startedAtMs ?? Date.now(),
    endedAtMs: res?.endedAtMs ?? Date.now(),
    monotonicToEpochMs: (offsetBefore + offsetAfter) / 2,
    mode: probe.mode,
    note: 'sockperf logs one-way latency (RTT/2); the parser stores the round trip (x2) as rtt_us',
    ...(reason ? { reason } : {}),
    stdout: cut(res?.stdout ?? ''),
    stderr: cut(res?.stderr ?? ''),
    ...nic,
  };
  await writeFile(path.join(dir, `${trial}.meta.json`), `${JSON.stringify(sidecar, null, 2)}\n`);
  files.push(`${probe.name}/${trial}.meta.json`);
  if (reason) ctx.log('sockperf failed', { probe: probe.name, trial, reason, exitCode: res?.exitCode });
  // sockperf missing, or no address: the other trials would fail the same way.
  const fatal = dns !== undefined || (res?.notFound ?? false);
  return { files, fatal, ...(reason ? { reason } : {}), ...(version ? { version } : {}) };
}

/** The sockperf probe runner (see module header). */
export const runSockperf: ProbeRunner<SockperfProbe> = (probe, ctx) =>
  runSockperfWith(probe, ctx, { command: 'sockperf' });
