/** What a path's manifest entry learns from parsing its raw files (parse-probes.ts). */
import type { ProbeOverhead } from '../../core/agent-report.js';
import { formatAtBaselineNote } from '../../core/credit.js';
import { formatThrottledNote } from '../../core/nic-allowance.js';
import type { PathManifest, ProbeProvenance } from '../../core/path-manifest.js';
import { PROBES, type ProbeKind } from '../../probes/index.js';
import type { Parsed } from './parse-probes.js';

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
export function recordProvenance(p: PathManifest, { provenance, report, reportProblem }: Parsed): void {
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
  // A trial the NIC throttled is flagged in the samples; the note says which allowance.
  for (const pr of provenance) for (const t of pr.throttled ?? []) say(formatThrottledNote(pr.probe, t));
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
