/**
 * SummaryPath.provenance from a path's manifest entry: the client's type and bandwidth (the
 * entry's `client`, recorded by BeginPath), the agent's version and kernel
 * (agent.json, kept by CollectOutput under `provenance.agent`), tool versions and the clock of
 * each probe's figures (the probes' provenance).
 */
import type { PathManifest } from '../../core/path-manifest.js';
import type { PathProvenance } from '../../core/run-summary.js';

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** The provenance a reader needs next to a path's figures; undefined when the manifest knows nothing. */
export function pathProvenance(mp: PathManifest): PathProvenance | undefined {
  // The client's facts are BeginPath's (Fleet.network); the agent's, agent.json's (CollectOutput).
  const client = mp.client;
  const agent = mp.provenance?.agent;
  const tools: Record<string, string> = {};
  const clocks: Record<string, string> = {};
  for (const p of mp.probes) {
    Object.assign(tools, p.tools ?? {});
    if (p.clocks?.length) clocks[p.probe] = p.clocks.join('+');
  }
  const out: PathProvenance = {
    instanceType: str(client?.instanceType),
    azId: str(client?.azId),
    baselineBps: num(client?.baselineBps),
    peakBps: num(client?.peakBps),
    agentVersion: str(agent?.agentVersion),
    kernel: str(agent?.kernel),
    ...(Object.keys(tools).length ? { tools } : {}),
    ...(Object.keys(clocks).length ? { clocks } : {}),
  };
  for (const k of Object.keys(out) as (keyof PathProvenance)[]) if (out[k] === undefined) delete out[k];
  return Object.keys(out).length ? out : undefined;
}
