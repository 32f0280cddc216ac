import { type AgentReport, agentProbeSchema, agentReportSchema } from '../../core/agent-report.js';
import { errorMessage } from '../../core/errors.js';
import { fallbackMessage, isRecord, issueProblems, problemLines } from '../../core/zod-problems.js';
import { closeTruncatedJson } from '../../probes/parsing/json-repair.js';

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
