/**
 * CollectOutput: the raw tool files are already in the store (the command runner put them
 * there); parse each into sample records, write one JSONL per probe trial, register the
 * partition and record provenance. A parse failure marks the path, never deletes raw data.
 * iperf3 trials are checked for a burst-credit cliff and, against the client's baseline
 * bandwidth recorded at BeginPath, for a plateau at the baseline (core/credit.ts).
 */

import { type AgentReport, agentProbeSchema, agentReportSchema, type ProbeOverhead } from '../../core/agent-report.js';
import { type AgentSpec, readSpec } from '../../core/agent-spec.js';
import type { ClientNetwork } from '../../core/client-network.js';
import { flagAtBaseline, flagCreditCliffs, formatAtBaselineNote } from '../../core/credit.js';
import { CollectError, errorMessage } from '../../core/errors.js';
import { keys, RAW_EXT } from '../../core/keys.js';
import type { PathManifest, ProbeProvenance } from '../../core/path-manifest.js';
import type { SampleRecord } from '../../core/sample-record.js';
import { fallbackMessage, isRecord, issueProblems, problemLines, type Rec } from '../../core/zod-problems.js';
import { HttpTrialTally, httpWarnings } from '../../probes/http/http-trials.js';
import type { ProbeKind } from '../../probes/index.js';
import { fileParser, PROBES } from '../../probes/index.js';
import { closeTruncatedJson } from '../../probes/parsing/json-repair.js';
import { splitLines } from '../../probes/parsing/lines.js';
import type { ParseMeta, ParseStats } from '../../probes/parsing/parser-types.js';
import type { Deps } from '../ports.js';
import type { PathRef } from './contracts.js';
import { loadManifest, pathEntry, stepEnded, stepStarted, updateManifest } from './manifest.js';
import { readRawChunks, writeIfAny } from './stream-io.js';
import { loadResolvedPlan } from './validate.js';

export function toJsonl(records: SampleRecord[]): string {
  return records.map((r) => JSON.stringify(r)).join('\n') + (records.length ? '\n' : '');
}

interface Parsed {
  provenance: ProbeProvenance[];
  failures: string[];
  total: number;
  report?: AgentReport;
  /** Why agent.json could not be read whole ("truncated …", "unreadable …"). */
  reportProblem?: string;
}

/** Flush the sample text written so far at about this size (bounded memory, few writes). */
const FLUSH_CHARS = 1 << 16;

/**
 * agent.json as far as it can be read (core/agent-report.ts): whole; or, cut off, its complete
 * probe entries (the raw files say the rest); or, with a field of the wrong type, the entries
 * that are right and the problem named; or nothing, with the reason.
 */
export function readAgentReport(text: string | undefined): { report?: AgentReport; problem?: string } {
  if (text === undefined) return {};
  let doc: unknown;
  let problem: string | undefined;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    const repaired = closeTruncatedJson(text, 2);
    if (repaired === undefined) return { problem: `agent.json is unreadable (${errorMessage(e).slice(0, 80)})` };
    try {
      doc = JSON.parse(repaired);
    } catch {
      return { problem: `agent.json is unreadable (${errorMessage(e).slice(0, 80)})` };
    }
    problem = 'agent.json is truncated';
  }
  if (!isRecord(doc)) return { problem: 'agent.json is not a JSON object' };
  const entries = Array.isArray(doc.probes) ? doc.probes : [];
  if (!Array.isArray(doc.probes)) problem ??= 'agent.json has no probes list';
  const whole = agentReportSchema.safeParse({ ...doc, probes: entries }, { error: fallbackMessage });
  if (whole.success) return { report: whole.data, ...(problem ? { problem } : {}) };
  // Keep what is right: the facts when only a probe entry is wrong, and every entry that matches.
  const probes = entries.flatMap((p: unknown) => {
    const e = agentProbeSchema.safeParse(p);
    return e.success ? [e.data] : [];
  });
  const facts = agentReportSchema.safeParse({ ...doc, probes: [] });
  const [first] = problemLines(doc, issueProblems(whole.error.issues), 'agent.json');
  return {
    report: { ...(facts.success ? facts.data : {}), probes },
    problem: problem ?? `agent.json does not match the agent report (${first})`,
  };
}

/** A finite epoch ms from an ISO time the agent wrote, else undefined. */
function isoMs(v: unknown): number | undefined {
  const t = typeof v === 'string' ? Date.parse(v) : Number.NaN;
  return Number.isFinite(t) ? t : undefined;
}

/**
 * Parse one raw file into its sample file, streaming: lines from the store's read stream go
 * through the kind's line parser and out to the store's write as they come. iperf3's records
 * (one small document) are flagged for credit cliffs and baseline plateaus as a whole.
 */
async function collectFile(
  deps: Deps,
  kind: ProbeKind,
  rawKey: string,
  sampleKey: string,
  meta: ParseMeta,
  network: ClientNetwork | undefined,
  prov: ProbeProvenance,
  tally?: HttpTrialTally,
): Promise<ParseStats> {
  const fp = fileParser(kind, meta);
  let damage: string | undefined;
  const chunks = await readRawChunks(deps.store, rawKey, (reason) => {
    damage = reason;
  });
  const clocks = new Set(prov.clocks ?? []);
  async function* sampleText(): AsyncGenerator<string> {
    let buf = '';
    const add = (r: SampleRecord): void => {
      if (typeof r.clock === 'string') clocks.add(r.clock);
      tally?.add(r);
      buf += `${JSON.stringify(r)}\n`;
    };
    if (chunks) {
      for await (const l of splitLines(chunks)) {
        for (const r of fp.line(l)) add(r);
        if (buf.length >= FLUSH_CHARS) {
          yield buf;
          buf = '';
        }
      }
    }
    const tail = fp.end();
    if (kind === 'iperf3') flagIperf3(tail, network, prov);
    for (const r of tail) add(r);
    if (buf) yield buf;
  }
  if (await writeIfAny(deps.store, sampleKey, sampleText(), 'application/x-ndjson')) prov.sampleKeys.push(sampleKey);
  if (clocks.size) prov.clocks = [...clocks].sort();
  if (damage !== undefined) {
    // What decompressed before the damage is kept; the file reads as truncated.
    fp.stats.truncated = true;
    fp.stats.truncation = fp.stats.truncation ? `${damage}; ${fp.stats.truncation}` : damage;
  }
  return fp.stats;
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

/** Credit cliffs, then (a trial with a cliff is not also a plateau) trials at the baseline. */
function flagIperf3(records: SampleRecord[], network: ClientNetwork | undefined, prov: ProbeProvenance): void {
  const cliffs = flagCreditCliffs(records);
  if (cliffs.length) prov.credit = [...(prov.credit ?? []), ...cliffs];
  const plateaus = flagAtBaseline(records, network);
  if (plateaus.length)
    prov.atBaseline = [
      ...(prov.atBaseline ?? []),
      ...plateaus.map(({ trial, median, baselineBps, intervals }) => ({ trial, median, baselineBps, intervals })),
    ];
}

/**
 * Parse every raw file of a path into sample files. `salvage` is for a probe command that
 * failed: probes without raw output get no failed record (their absence says nothing about the
 * network). A file cut off mid-line keeps its complete lines (counted as truncated); a bad line
 * is rejected and counted, the others kept; a file with no good line at all fails the probe.
 */
async function parseProbes(
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
    // `<trial>.<ext>.gz` (compressed by the agent) or plain `<trial>.<ext>` (older runs, or a
    // stop before compression); when a trial has both, the .gz is the finished one.
    const pattern = new RegExp(
      `^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}${probe.name}/(\\d+)\\.${ext}(\\.gz)?$`,
    );
    const byTrial = new Map<number, { key: string; trial: number; gz: boolean }>();
    for (const k of rawKeys) {
      const m = pattern.exec(k);
      if (!m) continue;
      const trial = Number(m[1]);
      if (!Number.isSafeInteger(trial)) continue;
      const gz = m[2] !== undefined;
      const seen = byTrial.get(trial);
      if (!seen || (gz && !seen.gz)) byTrial.set(trial, { key: k, trial, gz });
    }
    const files = [...byTrial.values()].sort((a, b) => a.trial - b.trial);
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

/** The manifest notes a probe's damaged or truncated raw files earn. */
export function parseNotes(pr: ProbeProvenance): string[] {
  const notes: string[] = [];
  const files = pr.files ?? [];
  const unit = pr.kind ? PROBES[pr.kind].parseUnit : 'line';
  const lines = files.reduce((a, f) => a + f.lines, 0);
  const first = files.find((f) => f.firstRejection)?.firstRejection;
  if (pr.rejected) {
    notes.push(`${pr.probe}: ${pr.rejected} of ${lines} raw ${unit}(s) rejected, the rest kept (first: ${first})`);
  }
  for (const f of files.filter((x) => x.truncated)) {
    notes.push(`${pr.probe}: raw file ${f.key} is truncated; kept the ${f.samples} sample(s) of its complete part`);
  }
  return notes;
}

/** What the manifest learns from a parse: provenance, degraded tools, agent facts, calibration. */
function recordProvenance(p: PathManifest, { provenance, report, reportProblem }: Parsed): void {
  p.probes = provenance;
  const say = (text: string): void => {
    if (!p.notes.includes(text)) p.notes.push(text);
  };
  for (const pr of provenance) for (const text of parseNotes(pr)) say(text);
  for (const pr of provenance) for (const w of pr.warnings ?? []) say(w.text);
  if (reportProblem) say(`${reportProblem}: the probes were read from their raw files`);
  // A trial at the baseline is flagged in the samples; the note says what that means.
  for (const pr of provenance) {
    for (const t of pr.atBaseline ?? []) {
      const text = formatAtBaselineNote({ probe: pr.probe, ...t }, p.client?.peakBps);
      if (!p.notes.includes(text)) p.notes.push(text);
    }
  }
  // A degraded measurement must say so where readers look, not only in agent.json.
  for (const pr of provenance) {
    for (const [tool, v] of Object.entries(pr.tools ?? {})) {
      const text = `${pr.probe}: ${tool} ${v}`;
      if (/^unavailable/.test(v) && !p.notes.includes(text)) p.notes.push(text);
    }
  }
  if (report) {
    const { probes: _probes, ...facts } = report;
    p.provenance = { ...(p.provenance ?? {}), agent: facts };
    for (const [kind, cal] of Object.entries(report.calibration ?? {}) as [
      ProbeKind,
      ProbeOverhead | { error: string },
    ][]) {
      if ('p50_us' in cal) p.probe_overhead_us = { ...(p.probe_overhead_us ?? {}), [kind]: cal };
      else p.notes.push(`${kind} probe self-calibration failed: ${cal.error}`);
    }
  }
}

export async function collectOutput(deps: Deps, ref: PathRef): Promise<{ samples: number; probes: number }> {
  const { runId, pathId } = ref;
  const manifest = await updateManifest(deps.store, runId, (m) =>
    stepStarted(pathEntry(m, pathId), 'Collect', deps.now()),
  );
  const spec = await readSpec(deps.store, runId, pathId);
  if (!spec) throw new CollectError(`no spec for path ${pathId}`);
  const parsed = await parseProbes(deps, runId, pathId, spec, undefined, pathEntry(manifest, pathId).client);
  const { failures, total, provenance } = parsed;
  await deps.query.registerPartition(pathId, runId);

  await updateManifest(deps.store, runId, (m) => {
    const p = pathEntry(m, pathId);
    recordProvenance(p, parsed);
    const now = deps.now();
    stepEnded(p, 'Collect', now, failures.length ? 'failed' : 'succeeded');
    if (!failures.length) {
      p.status = 'succeeded';
      p.endedAt = now.toISOString();
    }
  });
  if (failures.length) throw new CollectError(`could not parse ${failures.length} raw file(s): ${failures.join('; ')}`);
  deps.log.info('output collected', { runId, pathId, samples: total, probes: provenance.length });
  return { samples: total, probes: provenance.length };
}

/** One failed sample standing for a probe trial that produced nothing, so loss shows it. */
function failedRecord(
  runId: string,
  pathId: string,
  probe: { name: string; kind: ProbeKind },
  trial: number,
  t: number,
  reason: string,
): SampleRecord {
  return {
    run_id: runId,
    path_id: pathId,
    probe: probe.name,
    kind: probe.kind,
    trial,
    seq: 0,
    t_start: t,
    t_end: t,
    ...PROBES[probe.kind].primary,
    value: null,
    ok: false,
    error: reason,
  };
}

/**
 * The raw prefix of the path's own client (keys.clientRawPrefix): files other clients put
 * anywhere else under the path's raw prefix are never read.
 */
async function clientPrefix(deps: Deps, runId: string, pathId: string): Promise<string> {
  const path = (await loadResolvedPlan(deps, runId)).paths.find((p) => p.id === pathId);
  if (!path) throw new Error(`path ${pathId} not in plan`);
  return keys.clientRawPrefix(pathId, runId, path.client.instanceId);
}

/**
 * The probe document's note of a stop (execution timeout, cancel: SIGTERM): what it had uploaded
 * is complete except the trial files it names, cut where the stop came.
 */
async function stoppedNote(deps: Deps, prefix: string): Promise<string | undefined> {
  const text = await deps.store.getText(`${prefix}interrupted.json`);
  if (text === undefined) return undefined;
  let m: Rec;
  try {
    const doc: unknown = JSON.parse(text);
    m = isRecord(doc) ? doc : {};
  } catch {
    return 'the probe command was stopped (its interrupted.json is unreadable): the last trial may be incomplete';
  }
  const files = Array.isArray(m.incomplete) ? m.incomplete.map(String) : [];
  return `the probe command was stopped (${String(m.signal ?? 'signal')} at ${String(m.at ?? '?')}): ${
    files.length ? `trial in progress incomplete: ${files.join(', ')}` : 'no trial was in progress'
  }`;
}

/**
 * After the probe command failed (crashed, cancelled after its deadline, timed out): parse
 * whatever raw output the runner still delivered, so probes that finished before the failure
 * keep their samples. The path stays failed; a note says what was kept. Nothing to salvage
 * (no spec, no raw file) is not an error.
 */
export async function salvageOutput(deps: Deps, ref: PathRef, reason: string): Promise<{ samples: number }> {
  const { runId, pathId } = ref;
  const spec = await readSpec(deps.store, runId, pathId);
  if (!spec) return { samples: 0 };
  const rawKeys = await deps.store.list(await clientPrefix(deps, runId, pathId));
  if (!rawKeys.some((k) => !k.endsWith('agent.json'))) return { samples: 0 };
  const cut = { reason, cutLines: 0 };
  const client = pathEntry(await loadManifest(deps.store, runId), pathId).client;
  const parsed = await parseProbes(deps, runId, pathId, spec, cut, client);
  if (parsed.total > 0) await deps.query.registerPartition(pathId, runId);
  const stopped = await stoppedNote(deps, await clientPrefix(deps, runId, pathId));
  const kept = parsed.provenance.filter((p) => p.samples > 0).map((p) => p.probe);
  await updateManifest(deps.store, runId, (m) => {
    const p = pathEntry(m, pathId);
    recordProvenance(p, parsed);
    // A retried task must not say it twice.
    const say = (text: string): void => {
      if (!p.notes.includes(text)) p.notes.push(text);
    };
    // A later salvage (the cleanup's late sweep) replaces an earlier one's count.
    p.notes = p.notes.filter(
      (n) =>
        !/^kept \d+ samples of .* written before the probe command failed/.test(n) &&
        n !== 'the probe command failed before any probe wrote a sample',
    );
    say(
      kept.length
        ? `kept ${parsed.total} samples of ${kept.join(', ')} written before the probe command failed` +
            (cut.cutLines ? ` (${cut.cutLines} line(s) cut off by the kill dropped)` : '')
        : 'the probe command failed before any probe wrote a sample',
    );
    for (const f of parsed.failures) say(`salvage could not parse ${f}`);
    if (stopped) say(stopped);
  });
  deps.log.info('output salvaged after a failed probe command', { runId, pathId, samples: parsed.total, kept });
  return { samples: parsed.total };
}
