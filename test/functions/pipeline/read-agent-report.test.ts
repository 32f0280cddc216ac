import { describe, expect, it } from 'vitest';
import { readAgentReport } from '../../../functions/pipeline/read-agent-report.js';

describe('readAgentReport', () => {
  it('reads a whole report, keeps the complete probe entries of a cut one, and says why it could not', () => {
    const full = JSON.stringify({
      agentVersion: 't',
      probes: [
        { probe: 'a', kind: 'tcp-connect', status: 'ok' },
        { probe: 'b', kind: 'tcp-connect', status: 'failed', reason: 'refused' },
      ],
    });
    expect(readAgentReport(full).report?.probes.map((p) => p.probe)).toEqual(['a', 'b']);
    expect(readAgentReport(full).problem).toBeUndefined();
    const cut = readAgentReport(full.slice(0, full.indexOf('"probe":"b"') + 5));
    expect(cut.problem).toBe('agent.json is truncated');
    expect(cut.report?.probes.map((p) => p.probe)).toEqual(['a']);
    expect(readAgentReport('{"agentVer').problem).toMatch(/agent\.json is unreadable/);
    expect(readAgentReport('[1]').problem).toBe('agent.json is not a JSON object');
    expect(readAgentReport('{"probes": 3}')).toMatchObject({
      problem: 'agent.json has no probes list',
      report: { probes: [] },
    });
    expect(readAgentReport(undefined)).toEqual({});
  });

  it('keeps the facts and the entries that match when a field has the wrong type, and names the field', () => {
    const text = JSON.stringify({
      agentVersion: 't',
      kernel: '6.1',
      futureFact: 'kept',
      probes: [
        { probe: 'a', kind: 'tcp-connect', status: 'ok', trials: 1, files: ['a/1.jsonl'] },
        { probe: 'b', kind: 'tcp-connect', status: 'finished' },
      ],
    });
    const { report, problem } = readAgentReport(text);
    expect(problem).toBe(
      'agent.json does not match the agent report (probes[1].status: expected "ok" or "failed" or "skipped", got "finished")',
    );
    expect(report).toEqual({
      agentVersion: 't',
      kernel: '6.1',
      futureFact: 'kept',
      probes: [{ probe: 'a', kind: 'tcp-connect', status: 'ok', trials: 1, files: ['a/1.jsonl'] }],
    });
    // A report an earlier agent wrote, without the facts added since, reads whole.
    expect(readAgentReport(JSON.stringify({ probes: [{ probe: 'a', kind: 'mtu', status: 'skipped' }] }))).toEqual({
      report: { probes: [{ probe: 'a', kind: 'mtu', status: 'skipped' }] },
    });
  });
});
