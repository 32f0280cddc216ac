/**
 * The agent report: what the agent writes next to the raw files as `agent.json` (provenance of
 * the measurement; docs/probes.md), uploaded under the path client's raw prefix. CollectOutput
 * reads it as far as it can (functions/pipeline/read-agent-report.ts): the agent rewrites it after every
 * probe, a killed agent leaves one marked `partial`, and an upload can cut it short.
 */
import { z } from 'zod';
import { PROBE_KINDS } from '../probes/index.js';
import { targetSchema } from './resolved-plan.js';
import { jsonNumber } from './stored-document.js';

/** Probe self-calibration figures: the probe's own cost, measured on loopback (agent/calibrate.ts). */
export const probeOverheadSchema = z.object({
  p50_us: jsonNumber,
  p99_us: jsonNumber,
  n: z.number(),
  method: z.string(),
  app_p50_us: jsonNumber.optional(),
  app_p99_us: jsonNumber.optional(),
});
export type ProbeOverhead = z.output<typeof probeOverheadSchema>;

/**
 * One probe as the agent ran it. This agent writes every field; an entry is trusted for its
 * name, kind and status, the rest may be missing from a report an earlier agent wrote.
 */
export const agentProbeSchema = z.object({
  probe: z.string(),
  kind: z.enum(PROBE_KINDS),
  status: z.enum(['ok', 'failed', 'skipped']),
  reason: z.string().optional(),
  trials: z.number().optional(),
  files: z.array(z.string()).optional(),
  startedAt: z.string().optional(),
  endedAt: z.string().optional(),
  /** Tools the probe used and their versions, or why a preferred one was unavailable. */
  tools: z.record(z.string(), z.string()).optional(),
});
export type AgentProbe = z.output<typeof agentProbeSchema>;

/**
 * agent.json. The facts about where and how the agent ran are kept whole in the manifest
 * (`provenance.agent`), so a key this version does not know is kept too (loose, not dropped).
 */
export const agentReportSchema = z.looseObject({
  agentVersion: z.string().optional(),
  host: z.string().optional(),
  kernel: z.string().optional(),
  platform: z.string().optional(),
  node: z.string().optional(),
  runId: z.string().optional(),
  pathId: z.string().optional(),
  target: targetSchema.optional(),
  startedAt: z.string().optional(),
  endedAt: z.string().optional(),
  /** Self-calibration per probe kind, measured on loopback with the same probe settings. */
  calibration: z
    .partialRecord(z.enum(PROBE_KINDS), z.union([probeOverheadSchema, z.object({ error: z.string() })]))
    .optional(),
  probes: z.array(agentProbeSchema),
  /** Skipped probes whose kind the agent could not tell (it lists the others under `probes`). */
  skippedUnknownKind: z.array(z.object({ name: z.string(), reason: z.string() })).optional(),
  /**
   * Where the agent read the NIC's allowance counters around each trial (core/nic-allowance.ts):
   * the source and device, or why there were none (then no trial can carry `throttled:…`).
   */
  nic: z
    .union([z.object({ source: z.enum(['ena', 'tbf']), dev: z.string() }), z.object({ unavailable: z.string() })])
    .optional(),
  /** Written while the probes ran (after each): the agent did not get to its final report. */
  partial: z.boolean().optional(),
});
export type AgentReport = z.output<typeof agentReportSchema>;
