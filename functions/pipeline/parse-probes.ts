/**
 * A path's raw files into sample files: each probe's trials found under the path's own client
 * prefix, parsed one by one (sample-file.ts), with the agent report's word on each probe
 * (read-agent-report.ts) and a failed sample for a probe that left nothing, so loss shows it.
 */
import type { AgentReport } from '../../core/agent-report.js';
import { type AgentSpec, readSpec } from '../../core/agent-spec.js';
import type { ClientNetwork } from '../../core/client-network.js';
import { keys, RAW_EXT } from '../../core/keys.js';
import type { ProbeProvenance } from '../../core/path-manifest.js';
import { HttpTrialTally, httpWarnings } from '../../probes/http/http-trials.js';
import type { Deps } from '../ports.js';
import { readAgentReport } from './read-agent-report.js';
import { collectFile, failedRecord, toJsonl } from './sample-file.js';
import { loadResolvedPlan } from './validate.js';

/** What a path's parse found: each probe's provenance, the files that failed, the agent's report. */
export interface Parsed {
  provenance: ProbeProvenance[];
  failures: string[];
  total: number;
  report?: AgentReport;
  /** Why agent.json could not be read whole ("truncated …", "unreadable …"). */
  reportProblem?: string;
}

/** A finite epoch ms from an ISO time the agent wrote, else undefined. */
function isoMs(v: unknown): number | undefined {
  const t = typeof v === 'string' ? Date.parse(v) : Number.NaN;
  return Number.isFinite(t) ? t : undefined;
}

/** The http probes' warnings (TIME_WAIT pressure, NIC-bound trials), on their provenance. */
function flagHttp(spec: AgentSpec, provenance: ProbeProvenance[], network: ClientNetwork | undefined): void {
  const probes = spec.probes.flatMap((probe) => {
    const prov = provenance.find((p) => p.probe === probe.name);
    if (probe.kind !== 'http' || !prov?.httpTrials) return [];
    return [{ ...probe, probe: probe.name, trials: prov.httpTrials }];
  });
  for (const w of httpWarnings(probes, network)) {
    const prov = provenance.find((p) => p.probe === w.probe);
    if (prov) prov.warnings = [...(prov.warnings ?? []), { flag: w.flag, text: w.text }];
  }
}

/**
 * Parse every raw file of a path into sample files. `salvage` is for a probe command that
 * failed: probes without raw output get no failed record (their absence says nothing about the
 * network). A file cut off mid-line keeps its complete lines (counted as truncated); a bad line
 * is rejected and counted, the others kept; a file with no good line at all fails the probe.
 */
export async function parseProbes(
  deps: Deps,
  runId: string,
  pathId: string,
  spec: AgentSpec,
  salvage?: { reason: string; cutLines: number },
  network?: ClientNetwork,
): Promise<Parsed> {
  const prefix = await clientPrefix(deps, runId, pathId);
  const rawKeys = await deps.store.list(prefix);
  const { report, problem: reportProblem } = readAgentReport(await deps.store.getText(`${prefix}agent.json`));

  const provenance: ProbeProvenance[] = [];
  const failures: string[] = [];
  let total = 0;
  for (const probe of spec.probes) {
    const ext = RAW_EXT[probe.kind];
    const files = trialFiles(rawKeys, prefix, probe.name, ext);
    const agentProbe = report?.probes.find((p) => p.probe === probe.name);
    const prov: ProbeProvenance = {
      probe: probe.name,
      kind: probe.kind,
      trials: files.length,
      rawKeys: files.map((f) => f.key),
      sampleKeys: [],
      samples: 0,
      status: agentProbe?.status === 'failed' ? 'failed' : 'ok',
      ...(typeof agentProbe?.reason === 'string' ? { reason: agentProbe.reason } : {}),
      ...(agentProbe?.tools && typeof agentProbe.tools === 'object' ? { tools: agentProbe.tools } : {}),
    };
    if (files.length === 0 && salvage) {
      Object.assign(prov, { status: 'failed', reason: agentProbe?.reason ?? `no raw output: ${salvage.reason}` });
      provenance.push(prov);
      continue;
    }
    if (files.length === 0) {
      // The probe left nothing to parse: keep its failure as a failed sample so loss shows it.
      const reason =
        (typeof agentProbe?.reason === 'string' ? agentProbe.reason : undefined) ??
        (report && !reportProblem
          ? 'no raw output'
          : reportProblem
            ? `no raw output; ${reportProblem}`
            : 'agent report missing');
      const rec = failedRecord(runId, pathId, probe, 0, isoMs(agentProbe?.startedAt) ?? deps.now().getTime(), reason);
      const key = keys.samples(pathId, runId, probe.name, 0);
      await deps.store.put(key, toJsonl([rec]), 'application/x-ndjson');
      Object.assign(prov, { status: 'failed', reason, sampleKeys: [key], samples: 1 });
      provenance.push(prov);
      total += 1;
      continue;
    }
    prov.files = [];
    for (const f of files) {
      // Runners keep facts the tool does not print (argv, exit code, clock offsets) beside it.
      const sidecar = await deps.store.getText(f.key.replace(new RegExp(`\\.${ext}(\\.gz)?$`), '.meta.json'));
      const meta = { runId, pathId, probe: probe.name, trial: f.trial, sidecar };
      const sampleKey = keys.samples(pathId, runId, probe.name, f.trial);
      const tally = probe.kind === 'http' ? new HttpTrialTally() : undefined;
      const st = await collectFile(deps, probe.kind, f.key, sampleKey, meta, network, prov, tally);
      if (tally) prov.httpTrials = [...(prov.httpTrials ?? []), tally.finish(f.trial, sidecar)];
      if (st.samples === 0 && st.rejected === 0) {
        // Nothing in it (killed before the first line, an upload in progress): a failed sample, so loss shows it.
        const reason = st.truncated ? 'raw file truncated before its first complete line' : 'empty raw file';
        const rec = failedRecord(
          runId,
          pathId,
          probe,
          f.trial,
          isoMs(agentProbe?.startedAt) ?? deps.now().getTime(),
          reason,
        );
        await deps.store.put(sampleKey, toJsonl([rec]), 'application/x-ndjson');
        prov.sampleKeys.push(sampleKey);
        st.samples = 1;
        prov.status = 'failed';
        prov.reason ??= `${f.key}: ${reason}`;
      }
      prov.files.push({
        key: f.key,
        trial: f.trial,
        lines: st.lines,
        samples: st.samples,
        rejected: st.rejected,
        ...(st.firstRejection ? { firstRejection: st.firstRejection } : {}),
        ...(st.truncated ? { truncated: true, ...(st.truncation ? { truncation: st.truncation } : {}) } : {}),
      });
      prov.samples += st.samples;
      total += st.samples;
      if (st.rejected) prov.rejected = (prov.rejected ?? 0) + st.rejected;
      if (st.truncated && salvage) salvage.cutLines++;
      if (st.samples === 0 && st.rejected > 0) {
        // Not one good line: this is not that tool's output (or all of it is damaged).
        prov.status = 'parse-failed';
        prov.reason = `${f.key}: ${st.firstRejection}`;
        failures.push(prov.reason);
      }
    }
    provenance.push(prov);
  }
  flagHttp(spec, provenance, network);
  for (const s of spec.skipped) {
    provenance.push({
      probe: s.name,
      kind: s.kind,
      trials: 0,
      rawKeys: [],
      sampleKeys: [],
      samples: 0,
      status: 'skipped',
      reason: s.reason,
    });
  }
  return { provenance, failures, total, ...(report ? { report } : {}), ...(reportProblem ? { reportProblem } : {}) };
}

/**
 * A probe's raw trial files under the client's prefix, in trial order: `<trial>.<ext>.gz`
 * (compressed by the agent) or plain `<trial>.<ext>` (older runs, or a stop before compression);
 * when a trial has both, the .gz is the finished one.
 */
function trialFiles(rawKeys: string[], prefix: string, probe: string, ext: string): RawTrialFile[] {
  const pattern = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}${probe}/(\\d+)\\.${ext}(\\.gz)?$`);
  const byTrial = new Map<number, RawTrialFile>();
  for (const k of rawKeys) {
    const m = pattern.exec(k);
    if (!m) continue;
    const trial = Number(m[1]);
    if (!Number.isSafeInteger(trial)) continue;
    const gz = m[2] !== undefined;
    const seen = byTrial.get(trial);
    if (!seen || (gz && !seen.gz)) byTrial.set(trial, { key: k, trial, gz });
  }
  return [...byTrial.values()].sort((a, b) => a.trial - b.trial);
}

interface RawTrialFile {
  key: string;
  trial: number;
  gz: boolean;
}

/**
 * The raw prefix of the path's own client (keys.clientRawPrefix): files other clients put
 * anywhere else under the path's raw prefix are never read.
 */
export async function clientPrefix(deps: Deps, runId: string, pathId: string): Promise<string> {
  return keys.clientRawPrefix(pathId, runId, await pathClientId(deps, runId, pathId));
}

/** The path's client instance id, from the run's resolved plan. */
async function pathClientId(deps: Deps, runId: string, pathId: string): Promise<string> {
  const path = (await loadResolvedPlan(deps, runId)).paths.find((p) => p.id === pathId);
  if (!path) throw new Error(`path ${pathId} not in plan`);
  return path.client.instanceId;
}

/** The path's agent spec as ValidatePlan stored it for the path's client; undefined when there is none. */
export async function pathSpec(deps: Deps, runId: string, pathId: string): Promise<AgentSpec | undefined> {
  return readSpec(deps.store, runId, pathId, await pathClientId(deps, runId, pathId));
}
