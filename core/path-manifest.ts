/**
 * One path's entry in the run manifest (core/run-manifest.ts): its status, steps, the probe
 * command in flight, and the provenance of every probe (raw and sample keys, tools, clocks,
 * parse counts, credit and baseline flags).
 */
import { z } from 'zod';
import { httpTrialSchema } from '../probes/http/http-trials.js';
import { PROBE_KINDS } from '../probes/index.js';
import { agentReportSchema, probeOverheadSchema } from './agent-report.js';
import { clientNetworkSchema } from './client-network.js';
import { azPairSchema, meshFactsSchema } from './resolved-plan.js';
import { jsonNumber } from './stored-document.js';

export const stepStatusSchema = z.enum(['running', 'succeeded', 'failed', 'skipped']);
export type StepStatus = z.output<typeof stepStatusSchema>;

export const stepRecordSchema = z.object({
  name: z.string(),
  status: stepStatusSchema,
  startedAt: z.string(),
  endedAt: z.string().optional(),
  ms: z.number().optional(),
  note: z.string().optional(),
});
export type StepRecord = z.output<typeof stepRecordSchema>;

/** One raw file's parse, in the manifest: lines read, samples kept, lines rejected and why, truncation. */
export const rawFileParseSchema = z.object({
  key: z.string(),
  trial: z.number(),
  lines: z.number(),
  samples: z.number(),
  rejected: z.number(),
  firstRejection: z.string().optional(),
  truncated: z.boolean().optional(),
  truncation: z.string().optional(),
});
export type RawFileParse = z.output<typeof rawFileParseSchema>;

export const probeProvenanceSchema = z.object({
  probe: z.string(),
  kind: z.enum(PROBE_KINDS).optional(),
  trials: z.number(),
  rawKeys: z.array(z.string()),
  sampleKeys: z.array(z.string()),
  samples: z.number(),
  status: z.enum(['ok', 'failed', 'skipped', 'parse-failed']),
  reason: z.string().optional(),
  /** Tools the agent used and their versions, or why a preferred one was unavailable. */
  tools: z.record(z.string(), z.string()).optional(),
  /** Burst-credit cliffs found in this probe's throughput series. */
  credit: z
    .array(z.object({ trial: z.number(), firstLowIndex: z.number(), before: jsonNumber, after: jsonNumber }))
    .optional(),
  /** Trials whose throughput sat at the client's baseline bandwidth from the start (flag `at-baseline`). */
  atBaseline: z
    .array(z.object({ trial: z.number(), median: jsonNumber, baselineBps: z.number(), intervals: z.number() }))
    .optional(),
  /**
   * Trials during which the NIC's allowance counters grew (core/nic-allowance.ts): their samples
   * carry `throttled:<allowance>`; `grew` is each allowance's counter growth over the trial.
   */
  throttled: z
    .array(
      z.object({
        trial: z.number(),
        source: z.enum(['ena', 'tbf']),
        dev: z.string(),
        grew: z.record(z.string(), z.number()),
      }),
    )
    .optional(),
  /** The clocks this probe's values came from (the distinct SampleRecord.clock of its samples). */
  clocks: z.array(z.string()).optional(),
  /** http: each trial's own figures (rate, throughput, TIME_WAIT, tcp_tw_reuse), probes/http/http-trials.ts. */
  httpTrials: z.array(httpTrialSchema).optional(),
  /** http: the warnings the trials earned (`time-wait-pressure`, `nic-bound`), each with its reason. */
  warnings: z.array(z.object({ flag: z.string(), text: z.string() })).optional(),
  /** Lines (iperf3: intervals) rejected over all raw files of the probe; absent when none. */
  rejected: z.number().optional(),
  /** Per raw file: what parsing it came to (probes/parsing/parser-types.ts ParseStats). */
  files: z.array(rawFileParseSchema).optional(),
});
export type ProbeProvenance = z.output<typeof probeProvenanceSchema>;

/** The state machine's view of a sent probe command (SendProbe → PollProbe loop). */
export const probeCommandStateSchema = z.object({
  commandId: z.string().min(1),
  attempt: z.number().int().min(0),
  sentAt: z.string(),
  /** When the probe should be done; polls get denser as it approaches. */
  expectedSeconds: z.number().min(0),
  /** Hard limit: past it the command is cancelled and the path fails. */
  deadline: z.string(),
  waitSeconds: z.number().int().min(0),
  done: z.boolean(),
  /** When a poll first saw the command TimedOut or Cancelled (its stop upload may still be running). */
  stoppedAt: z.string().optional(),
});
export type ProbeCommandState = z.output<typeof probeCommandStateSchema>;

/**
 * Where the path was measured from: the client instance as the Fleet described it when it was
 * ready (BeginPath), and the agent's facts from agent.json without its probe list (CollectOutput).
 */
export const manifestProvenanceSchema = z.looseObject({
  client: z
    .object({ instanceId: z.string(), azId: z.string().optional(), instanceType: z.string().optional() })
    .optional(),
  agent: agentReportSchema.omit({ probes: true }).optional(),
});
export type ManifestProvenance = z.output<typeof manifestProvenanceSchema>;

export const pathManifestSchema = z.object({
  id: z.string(),
  label: z.string(),
  /** The mesh pair's facts, when the path is one (the resolved path's `mesh`). */
  mesh: meshFactsSchema.optional(),
  status: z.enum(['pending', 'running', 'succeeded', 'failed']),
  startedAt: z.string().optional(),
  endedAt: z.string().optional(),
  failedStep: z.string().optional(),
  error: z.string().optional(),
  steps: z.array(stepRecordSchema),
  /** What the agent reported about where and how it ran. */
  provenance: manifestProvenanceSchema.optional(),
  probes: z.array(probeProvenanceSchema),
  notes: z.array(z.string()),
  /** The probe command sent for this path (so a retried SendProbe resumes instead of resending). */
  probeCommand: probeCommandStateSchema.optional(),
  /** The agent's own cost per latency probe kind, self-calibrated on loopback before this path. */
  probe_overhead_us: z.partialRecord(z.enum(PROBE_KINDS), probeOverheadSchema).optional(),
  /** The client's type, AZ id and baseline / peak bandwidth, asked of the Fleet at BeginPath. */
  client: clientNetworkSchema.optional(),
  /** How the probe reached the client: SSM on an EC2 instance, or a task of an ECS service via its queue. */
  clientKind: z.enum(['ec2-instance', 'ecs-task']).optional(),
  /** A task client: which task took the probe (its ARN and id, as the task reported them). */
  task: z
    .object({
      taskArn: z.string().optional(),
      taskId: z.string().optional(),
      cluster: z.string().optional(),
      service: z.string().optional(),
    })
    .optional(),
  /** The AZ pair the plan says this path measures (AZ-pair plans). */
  az: azPairSchema.optional(),
});
export type PathManifest = z.output<typeof pathManifestSchema>;
