/**
 * Executes one AgentSpec: runs its probes in order, each writing raw files under
 * outDir/<probe name>/, and returns the AgentReport (provenance) that main.ts stores as
 * agent.json. A probe that fails — or whose runner throws — is recorded and the next probe
 * still runs: failures are data, and nothing measured is lost.
 */
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import type { AgentProbe, AgentReport } from '../core/agent-report.js';
import type { AgentSpec } from '../core/agent-spec.js';
import { errorMessage } from '../core/errors.js';
import type { HttpProbe } from '../probes/http/http.schema.js';
import { PROBE_KINDS, type ProbeKind } from '../probes/index.js';
import { nicReader } from '../probes/run-kit/nic.js';
import type { ProbeContext } from '../probes/run-kit/runner-types.js';
import { runProbe } from '../probes/runners.js';
import { type CalibratedKind, type CalibrateOptions, calibrate } from './calibrate.js';

// Injected by scripts/build.mjs (esbuild `define`) from package.json; absent when running from source.
declare const __AGENT_VERSION__: string | undefined;

/** The agent's version: package.json's version in the bundle, "dev" when running from source. */
export const AGENT_VERSION: string = typeof __AGENT_VERSION__ === 'string' ? __AGENT_VERSION__ : 'dev';

export type AgentLog = (message: string, data?: Record<string, unknown>) => void;

/** A probe entry as this agent writes it: every field (readers also take reports of earlier agents). */
type ProbeEntry = AgentProbe & Required<Pick<AgentProbe, 'trials' | 'files' | 'startedAt' | 'endedAt'>>;

/**
 * Best guess of a skipped probe's kind from its name: names default to the kind, with
 * "-2", "-3" … for repeats (probeNames in core/plan-checks.ts).
 */
function kindOfName(name: string): ProbeKind | undefined {
  return PROBE_KINDS.find((k) => name === k || new RegExp(`^${k}-\\d+$`).test(name));
}

/**
 * Run every probe of `spec` in order against spec.target and return the report. Throws only
 * when outDir cannot be created (or `onProbe` throws); probe failures are recorded in the
 * report. `onProbe`, when given, receives the report so far before each probe (the running
 * probe listed as failed/"interrupted") and after it, so the caller can persist provenance
 * that survives the agent being killed mid-probe.
 */
export async function runSpec(
  spec: AgentSpec,
  outDir: string,
  log: AgentLog,
  onProbe?: (partial: AgentReport) => Promise<void>,
): Promise<AgentReport> {
  await mkdir(outDir, { recursive: true });
  const startedAt = new Date().toISOString();
  const probes: ProbeEntry[] = [];
  const unclassified: { name: string; reason: string }[] = [];
  for (const s of spec.skipped) {
    const kind = s.kind ?? kindOfName(s.name);
    if (kind === undefined) {
      unclassified.push({ name: s.name, reason: s.reason });
      continue;
    }
    const now = new Date().toISOString();
    probes.push({
      probe: s.name,
      kind,
      status: 'skipped',
      reason: s.reason,
      trials: 0,
      files: [],
      startedAt: now,
      endedAt: now,
    });
  }
  // Self-calibration: the probe's own cost on loopback, so readers can tell a path's latency
  // from the probe's noise (calibrate.ts). tcp-connect and http have one (http with the first
  // http probe's settings); a failure is recorded.
  const calibration: NonNullable<AgentReport['calibration']> = {};
  const calibrations: [CalibratedKind, CalibrateOptions][] = [];
  // tcp-connect at the first tcp-connect probe's pace, kept within 2–10 ms: idle gaps make
  // connects colder (the probe's own pace is what its overhead is), and a back-to-back probe's
  // calibration then takes 0.4 s, not 2 s, on every path.
  const connectProbe = spec.probes.find((p) => p.kind === 'tcp-connect');
  if (connectProbe)
    calibrations.push(['tcp-connect', { intervalMs: Math.min(10, Math.max(2, connectProbe.intervalMs ?? 10)) }]);
  const httpProbe = spec.probes.find((p): p is HttpProbe => p.kind === 'http');
  if (httpProbe) {
    const { keepAlive, payloadBytes, concurrency } = httpProbe;
    calibrations.push(['http', { keepAlive, payloadBytes, concurrency, timeoutMs: httpProbe.timeoutMs }]);
  }
  for (const [kind, opts] of calibrations) {
    try {
      const c = await calibrate(kind, opts);
      calibration[kind] = c;
      log('calibrated', { kind, ...c });
    } catch (e) {
      calibration[kind] = { error: errorMessage(e) };
      log('calibration failed', { kind, error: errorMessage(e) });
    }
  }
  // The NIC's allowance counters (ENA, or the lab's tbf), read around every trial by the runners.
  let nicUnavailable = 'not read';
  const nic = nicReader({
    onUnavailable: (why) => {
      nicUnavailable = why;
    },
  });
  const firstNic = await nic();
  log('nic counters', firstNic ? { source: firstNic.source, dev: firstNic.dev } : { unavailable: nicUnavailable });
  const report = (): AgentReport => ({
    agentVersion: AGENT_VERSION,
    host: os.hostname(),
    kernel: os.release(),
    platform: `${process.platform}-${process.arch}`,
    node: process.version,
    runId: spec.runId,
    pathId: spec.pathId,
    target: spec.target,
    startedAt,
    endedAt: new Date().toISOString(),
    probes: [...probes],
    ...(calibrations.length === 0 ? {} : { calibration }),
    ...(unclassified.length ? { skippedUnknownKind: unclassified } : {}),
    nic: firstNic ? { source: firstNic.source, dev: firstNic.dev } : { unavailable: nicUnavailable },
  });
  const ctx: ProbeContext = { target: spec.target, outDir, log, nic };
  for (const probe of spec.probes) {
    const t0 = new Date().toISOString();
    log('probe start', { probe: probe.name, kind: probe.kind });
    if (onProbe) {
      // Tombstone first: if the agent dies inside this probe (crash, SSM timeout kill), the
      // stored report already says which probe was running and that it did not finish.
      const tombstone: ProbeEntry = {
        probe: probe.name,
        kind: probe.kind,
        status: 'failed',
        reason: 'interrupted: the agent stopped while this probe was running',
        trials: 0,
        files: [],
        startedAt: t0,
        endedAt: t0,
      };
      await onProbe({ ...report(), probes: [...probes, tombstone] });
    }
    let entry: ProbeEntry;
    try {
      const out = await runProbe(probe, ctx);
      entry = {
        probe: probe.name,
        kind: probe.kind,
        status: out.status,
        ...(out.reason === undefined ? {} : { reason: out.reason }),
        trials: out.trials,
        files: out.files,
        startedAt: t0,
        endedAt: new Date().toISOString(),
        ...(out.tools === undefined ? {} : { tools: out.tools }),
      };
    } catch (e) {
      // A runner threw (a bug, or a disk problem): keep the record, move on to the next probe.
      entry = {
        probe: probe.name,
        kind: probe.kind,
        status: 'failed',
        reason: `runner error: ${errorMessage(e)}`,
        trials: 0,
        files: [],
        startedAt: t0,
        endedAt: new Date().toISOString(),
      };
    }
    log('probe end', { probe: probe.name, status: entry.status, reason: entry.reason, files: entry.files.length });
    probes.push(entry);
    if (onProbe) await onProbe(report());
  }
  return report();
}
