/**
 * The agent bundle is never used stale: missing, unrecorded or changed inputs rebuild it
 * (agent/bundle.ts). Inputs are "changed" here by editing the stamp's recorded hash, which
 * is what a changed source file looks like to the check, without touching the sources.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AGENT_BUNDLE, ensureAgentBundle, staleReason } from '../../agent/bundle.js';

const STAMP = `${AGENT_BUNDLE}.inputs.json`;

describe('ensureAgentBundle', () => {
  it('builds a missing bundle, then keeps using it while its inputs are unchanged', () => {
    rmSync(AGENT_BUNDLE, { force: true });
    expect(staleReason()).toBe('not built yet');
    const built = ensureAgentBundle();
    expect(built.built).toBe('not built yet');
    expect(existsSync(AGENT_BUNDLE)).toBe(true);
    expect(staleReason()).toBeUndefined();
    expect(ensureAgentBundle().built).toBeUndefined();
  });

  it('records every source of the bundle, the C helper sources included', () => {
    ensureAgentBundle();
    const inputs = Object.keys((JSON.parse(readFileSync(STAMP, 'utf8')) as { inputs: object }).inputs);
    expect(inputs).toEqual(
      expect.arrayContaining(['agent/agent-main.ts', 'probes/native/tcping.c', 'core/agent-spec.ts', 'package.json']),
    );
    expect(inputs.some((f) => f.includes('node_modules'))).toBe(false);
  });

  it('rebuilds when a source changed since the build', () => {
    ensureAgentBundle();
    const stamp = JSON.parse(readFileSync(STAMP, 'utf8')) as { inputs: Record<string, string> };
    stamp.inputs['agent/run.ts'] = '0'.repeat(64);
    writeFileSync(STAMP, JSON.stringify(stamp));
    expect(staleReason()).toBe('agent/run.ts changed');
    expect(ensureAgentBundle().built).toBe('agent/run.ts changed');
    expect(staleReason()).toBeUndefined();
  });

  it('rebuilds when nothing records what the bundle was built from', () => {
    ensureAgentBundle();
    rmSync(STAMP);
    expect(staleReason()).toBe('no record of its inputs');
    expect(ensureAgentBundle().built).toBe('no record of its inputs');
  });
});
