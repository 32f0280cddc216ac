/**
 * The shared vocabulary of pathbench: plan, probe, sample record, manifest and summary shapes.
 * docs/architecture.md describes these contracts; every module imports its types from here.
 */
import { z } from 'zod';
import type { HttpTrial } from '../probes/http/http-trials.js';
import { PROBE_KINDS, type ProbeKind, type ProbeSpec, probeSpecSchema } from '../probes/index.js';
import { port, probeName } from '../probes/probe-fields.js';
import type { ClientNetwork } from './client-network.js';
import { isValidHost, quoted, safeId } from './fields.js';

export type RouteVia =
  | { vpcPeeringConnectionId: string }
  | { transitGatewayId: string }
  | { gatewayId: string }
  | { natGatewayId: string }
  | { networkInterfaceId: string }
  | { vpcEndpointId: string }
  /** Local lab only: a next-hop name inside the lab router ("peering", "tgw"). */
  | { labNextHop: string };

export interface RouteEntry {
  region: string;
  routeTableId: string;
  destination: string;
  via: RouteVia;
}

/**
 * The client a path probes from, resolved. `instanceId` is the client's id in raw keys
 * (`client=<id>`, keys.clientRawPrefix) and in messages: the EC2 instance id, or for a task
 * client (`kind: 'ecs-task'`) its service name — any task of the service may take the probe.
 */
export const clientRefSchema = z.object({
  instanceId: z.string().min(1),
  region: z.string().min(1),
  /** Absent for an EC2 instance (kept so manifests and items of earlier runs read unchanged). */
  kind: z.enum(['ec2-instance', 'ecs-task']).optional(),
  cluster: z.string().min(1).optional(),
  service: z.string().min(1).optional(),
  queueUrl: z.string().min(1).optional(),
});
export type ClientRef = z.infer<typeof clientRefSchema>;
export type ClientKind = 'ec2-instance' | 'ecs-task';

export const skippedProbeSchema = z.strictObject({
  name: probeName,
  reason: z.string(),
  /** The skipped probe's kind, when known (the agent lists it under that kind in agent.json). */
  kind: z.enum(PROBE_KINDS).optional(),
});
export type SkippedProbe = z.output<typeof skippedProbeSchema>;

/** One end of an AZ pair: the region and the AZ id (AZ ids name the same AZ in every account; AZ names do not). */
export interface AzEnd {
  region: string;
  azId: string;
}

/** A path between two AZs (plans from `pathbench plan az-matrix`): carried into the manifest and the summary. */
export interface AzPair {
  from: AzEnd;
  to: AzEnd;
}

/** A path after defaults were merged in: everything the pipeline needs, nothing optional left. */
export interface ResolvedPath {
  id: string;
  label: string;
  client: ClientRef;
  target: { host: string; port: number };
  routes: RouteEntry[];
  probes: ProbeSpec[];
  /** Probes named in the plan's skipProbes (by name or kind), with the reason. */
  skipped: SkippedProbe[];
  reboot: boolean;
  creditWaitSeconds: number;
  /** A mesh pair's facts (`plan mesh`): regions, great-circle distance, round. */
  mesh?: MeshFacts;
  /** The AZ pair the path measures, when the plan says (AZ-pair plans). */
  az?: AzPair;
}

/** A mesh pair: client region `from`, target region `to`, their great-circle distance and the pair's round. */
export interface MeshFacts {
  from: string;
  to: string;
  distanceKm: number;
  round: number;
}

/** One mesh pair's figures in a summary (functions/pipeline/mesh-summary.ts). */
export interface MeshPair extends MeshFacts {
  path: string;
  latencyMs: number | null;
  /** Which metric the latency is (e.g. connect_rtt_ms). */
  latencyMetric?: string;
  throughputBps: number | null;
  /** W / RTT at this pair's latency, bits per second. */
  windowBoundBps: number | null;
}

/** y = slope · x + intercept, with Pearson r over n points. */
export interface LineFit {
  slope: number;
  intercept: number;
  r: number;
  n: number;
}

export interface MeshSummary {
  pairs: MeshPair[];
  regions: string[];
  /** latency (ms) = slope · distance (km) + intercept. */
  latencyVsDistance: LineFit | null;
  /** throughput (bit/s) = slope · (1 / RTT in s) + intercept; r is of throughput against 1/RTT. */
  throughputVsInverseRtt: LineFit | null;
  windowBytes: number;
}

/** One comparison of a plan's `compare`: `path` − `baseline`, per percentile (summary.comparisons). */
export interface PathPair {
  path: string;
  baseline: string;
}

export interface ResolvedPlan {
  name: string;
  paths: ResolvedPath[];
  /** The comparisons to report: the plan's `compare`, or every other path vs the first; absent when there are none. */
  compare?: PathPair[];
  /** The plan's own cost ceiling in USD (core/cost.ts). */
  budgetUsd?: number;
  /** The plan's own thresholds for regression detection (functions/pipeline/regressions.ts). */
  regression?: RegressionSettings;
}

/**
 * What a plan may set of the regression rule: the smallest change called a regression, as a
 * share of the baseline (`minRelative`) and, for time metrics, in milliseconds (`minAbsoluteMs`:
 * the run-to-run noise floor of the plan's hosts).
 */
export interface RegressionSettings {
  minRelative?: number;
  minAbsoluteMs?: number;
}

export type PlanResult = { ok: true; plan: ResolvedPlan } | { ok: false; problems: string[] };

export type StepStatus = 'running' | 'succeeded' | 'failed' | 'skipped';

export interface StepRecord {
  name: string;
  status: StepStatus;
  startedAt: string;
  endedAt?: string;
  ms?: number;
  note?: string;
}

export interface ProbeProvenance {
  probe: string;
  kind?: ProbeKind;
  trials: number;
  rawKeys: string[];
  sampleKeys: string[];
  samples: number;
  status: 'ok' | 'failed' | 'skipped' | 'parse-failed';
  reason?: string;
  /** Tools the agent used and their versions, or why a preferred one was unavailable. */
  tools?: Record<string, string>;
  /** Burst-credit cliffs found in this probe's throughput series. */
  credit?: { trial: number; firstLowIndex: number; before: number; after: number }[];
  /** Trials whose throughput sat at the client's baseline bandwidth from the start (flag `at-baseline`). */
  atBaseline?: { trial: number; median: number; baselineBps: number; intervals: number }[];
  /** The clocks this probe's values came from (the distinct SampleRecord.clock of its samples). */
  clocks?: string[];
  /** http: each trial's own figures (rate, throughput, TIME_WAIT, tcp_tw_reuse), probes/http/http-trials.ts. */
  httpTrials?: HttpTrial[];
  /** http: the warnings the trials earned (`time-wait-pressure`, `nic-bound`), each with its reason. */
  warnings?: { flag: string; text: string }[];
  /** Lines (iperf3: intervals) rejected over all raw files of the probe; absent when none. */
  rejected?: number;
  /** Per raw file: what parsing it came to (probes/parsing/parser-types.ts ParseStats). */
  files?: RawFileParse[];
}

/** One raw file's parse, in the manifest: lines read, samples kept, lines rejected and why, truncation. */
export interface RawFileParse {
  key: string;
  trial: number;
  lines: number;
  samples: number;
  rejected: number;
  firstRejection?: string;
  truncated?: boolean;
  truncation?: string;
}

export interface PathManifest {
  id: string;
  label: string;
  /** The mesh pair's facts, when the path is one (the resolved path's `mesh`). */
  mesh?: MeshFacts;
  status: 'pending' | 'running' | 'succeeded' | 'failed';
  startedAt?: string;
  endedAt?: string;
  failedStep?: string;
  error?: string;
  steps: StepRecord[];
  /** What the agent reported about where and how it ran. */
  provenance?: Record<string, unknown>;
  probes: ProbeProvenance[];
  notes: string[];
  /** The probe command sent for this path (so a retried SendProbe resumes instead of resending). */
  probeCommand?: ProbeCommandState;
  /** The agent's own cost per latency probe kind, self-calibrated on loopback before this path. */
  probe_overhead_us?: Partial<Record<ProbeKind, ProbeOverhead>>;
  /** The client's type, AZ id and baseline / peak bandwidth, asked of the Fleet at BeginPath. */
  client?: ClientNetwork;
  /** How the probe reached the client: SSM on an EC2 instance, or a task of an ECS service via its queue. */
  clientKind?: ClientKind;
  /** A task client: which task took the probe (its ARN and id, as the task reported them). */
  task?: { taskArn?: string; taskId?: string; cluster?: string; service?: string };
  /** The AZ pair the plan says this path measures (AZ-pair plans). */
  az?: AzPair;
}

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
export type ProbeCommandState = z.infer<typeof probeCommandStateSchema>;

/** Probe self-calibration figures (issue: measure the network, not the probe). */
export interface ProbeOverhead {
  p50_us: number;
  p99_us: number;
  n: number;
  method: string;
  app_p50_us?: number;
  app_p99_us?: number;
}

export interface RouteChange {
  region: string;
  routeTableId: string;
  destination: string;
  /** The target before this run touched the route ("none" when it did not exist). */
  original: RouteTarget;
  current: RouteTarget;
}

/** A route target as a single "kind:id" string, e.g. "vpcPeeringConnectionId:pcx-1", or "none". */
export type RouteTarget = string;

export interface RunManifest {
  runId: string;
  planName: string;
  driver: 'local' | 'aws';
  status: 'running' | 'succeeded' | 'partial' | 'failed';
  startedAt: string;
  endedAt?: string;
  paths: PathManifest[];
  routeChanges: RouteChange[];
  /** notes: e.g. an original put back blackholed, as it was before the run. */
  restore?: { status: 'ok' | 'failed'; at: string; errors: string[]; notes?: string[] };
  /** Run-level remarks, e.g. "execution ABORTED" written by the cleanup after an aborted run. */
  notes?: string[];
  /** The resolved plan's comparisons (path − baseline), for the summary. */
  compare?: PathPair[];
  /** The cost estimate ValidatePlan made, the budget it was held to, and whether it was overridden. */
  cost?: CostRecord;
  /** The plan's regression settings, for the summary step's judgement. */
  regression?: RegressionSettings;
}

/** The manifest's record of the cost guard (core/cost.ts). */
export interface CostRecord {
  estimateUsd: number;
  transferUsd: number;
  instanceUsd: number;
  transferBytes: number;
  /** The budget applied, and where it came from (the plan's budgetUsd or the stack default). */
  budgetUsd?: number;
  budgetSource?: 'plan' | 'stack';
  overBudget: boolean;
  /** The caller passed the explicit override (allowOverBudget) and the run went ahead over budget. */
  overridden: boolean;
  pricesAsOf: string;
  assumptions: string[];
}

export interface ResultRow {
  probe: string;
  metric: string;
  unit: string;
  n: number;
  loss: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
  p999: number | null;
  max: number | null;
  flags: string[];
  /** The same figures over unflagged intervals only (present when some interval carries a flag). */
  unflagged?: Pick<ResultRow, 'n' | 'loss' | 'p50' | 'p95' | 'p99' | 'p999' | 'max'>;
  /** Distribution-free 95 % order-statistic interval [lo, hi] of each percentile (core/confidence.ts). */
  ci95?: { p50: [number, number]; p95: [number, number]; p99: [number, number] };
  /** How many samples lie beyond each percentile (n − its nearest rank); below 10 the figure is flagged thin-tail. */
  tail?: { p50: number; p95: number; p99: number; p999: number };
  /** Trial-to-trial spread when the probe ran several trials: (max − min) / min of the per-trial p50 and p99, in %. */
  trials?: { count: number; p50_spread_pct: number; p99_spread_pct: number };
  /** http: successful requests per second (all trials' successes over their summed wall time). */
  rps?: number;
  /** http: per-trial figures (rps, throughput, p50, TIME_WAIT, tcp_tw_reuse), from the manifest. */
  httpTrials?: HttpTrial[];
  /** Latency metrics: the distribution's modes (location in the unit, share 0–1), core/shape.ts. */
  modes?: { at: number; share: number }[];
  /** Multimodal latency metrics: the mean (in the unit), and true when it lies in a valley between two modes. */
  mean?: number;
  meanInValley?: boolean;
}

/** One percentile of a comparison: path − baseline, in % of the baseline, its 95 % interval and verdict. */
export interface DiffCell {
  diff: number;
  pct: number;
  ci95: [number, number];
  verdict: 'faster' | 'slower' | 'no clear difference';
}

/** path − baseline for one probe and metric (summary.comparisons); units as in the results. */
export interface Comparison {
  path: string;
  baseline: string;
  probe: string;
  metric: string;
  unit: string;
  p50: DiffCell;
  p95: DiffCell;
  p99: DiffCell;
}

/** One latency distribution: log-spaced histogram bins and nearest-rank CDF points (queries/histogram.sql, cdf.sql). */
export interface Distribution {
  path: string;
  probe: string;
  metric: string;
  unit: string;
  bins: { lo: number; hi: number; count: number }[];
  cdf: { p: number; value: number }[];
}

/** One iperf3 trial's throughput per interval (queries/series.sql); t in seconds from the trial's start. */
export interface Series {
  path: string;
  probe: string;
  trial: number;
  metric: string;
  unit: string;
  points: { seq: number; t: number; value: number; flag?: string }[];
}

/** A percentile of this run outside its plan's baseline band (functions/pipeline/regressions.ts). */
export interface Regression {
  path: string;
  probe: string;
  metric: string;
  unit: string;
  percentile: 'p50' | 'p99';
  /** This run's figure and its 95 % interval. */
  value: number;
  ci95: [number, number];
  /** Median of the baseline runs' figures, and the band [lo, hi] a clean run falls in. */
  baseline: number;
  band: [number, number];
  runsInBaseline: number;
  /** value − baseline in % of the baseline. */
  change_pct: number;
  direction: 'regression' | 'improvement';
}

/** One percentile across the plan's recent runs and this one, oldest first (summary.trend; the report's trend chart). */
export interface TrendSeries {
  path: string;
  probe: string;
  metric: string;
  unit: string;
  percentile: 'p50' | 'p99';
  points: { runId: string; startedAt?: string; value: number | null; excluded?: string }[];
  /** The baseline band this run was judged against, when there were enough clean runs. */
  band?: [number, number];
}

export interface SummaryPath {
  id: string;
  label: string;
  status: PathManifest['status'];
  failedStep?: string;
  error?: string;
  steps: { name: string; status: StepStatus; ms: number }[];
  results: ResultRow[];
  /** Where and how the path was measured: client type and bandwidth, agent, tool versions, clock per probe. */
  provenance?: PathProvenance;
  /** The AZ pair the plan says this path measures (AZ-pair plans; the report's AZ-pair table). */
  az?: AzPair;
  [extra: string]: unknown;
}

/** SummaryPath.provenance, from the manifest (functions/pipeline/provenance.ts). */
export interface PathProvenance {
  instanceType?: string;
  azId?: string;
  baselineBps?: number;
  peakBps?: number;
  agentVersion?: string;
  kernel?: string;
  /** Tool name → version (or why it was unavailable), over the path's probes. */
  tools?: Record<string, string>;
  /** Probe name → the clock(s) its figures came from, joined with "+". */
  clocks?: Record<string, string>;
}

export interface Summary {
  runId: string;
  status: RunManifest['status'];
  planName?: string;
  startedAt?: string;
  endedAt?: string;
  paths: SummaryPath[];
  /** Differences between paths per percentile, with intervals and verdicts (functions/pipeline/comparisons.ts). */
  comparisons?: Comparison[];
  /** Per path, probe and latency metric: histogram and CDF (functions/pipeline/distributions.ts). */
  distributions?: Distribution[];
  /** Per iperf3 trial: throughput per interval (functions/pipeline/distributions.ts). */
  series?: Series[];
  /** Percentiles outside the baseline band of the plan's previous clean runs (functions/pipeline/regressions.ts). */
  regressions?: Regression[];
  /** The plan's own regression settings, when it has any (the judgement above used them). */
  regressionSettings?: RegressionSettings;
  /** The judged percentiles across the plan's recent runs, for the trend chart. */
  trend?: TrendSeries[];
  /** A mesh run's pair matrix, fits and window bound (functions/pipeline/mesh-summary.ts). */
  mesh?: MeshSummary;
  [extra: string]: unknown;
}

/** A path's target: the host (a hostname or an IP literal; it reaches tool command lines) and port. */
export const targetSchema = z.strictObject({
  host: z.string().refine(isValidHost, {
    error: (iss) => `expected a hostname or an IPv4/IPv6 address, got ${quoted(iss.input)}`,
  }),
  port,
});

/** What the agent executes for one path (specs/run=<runId>/path=<id>/spec.json). */
export const agentSpecSchema = z.strictObject({
  runId: safeId,
  pathId: safeId,
  target: targetSchema,
  probes: z.array(probeSpecSchema).superRefine((probes, ctx) => {
    // Probe names are the agent's output directories: one each.
    const first = new Map<string, number>();
    probes.forEach((p, i) => {
      const prev = first.get(p.name);
      if (prev === undefined) first.set(p.name, i);
      else
        ctx.addIssue({
          code: 'custom',
          path: [i, 'name'],
          input: p.name,
          message: `duplicate probe name ${quoted(p.name)} (also probes[${prev}])`,
        });
    });
  }),
  skipped: z.array(skippedProbeSchema).default([]),
});
export type AgentSpec = z.output<typeof agentSpecSchema>;

/** What the agent writes next to the raw files as agent.json: provenance of the measurement. */
export interface AgentReport {
  agentVersion: string;
  host: string;
  kernel: string;
  platform: string;
  node: string;
  startedAt: string;
  endedAt: string;
  /** Self-calibration per probe kind, measured on loopback with the same probe settings. */
  calibration?: Partial<Record<ProbeKind, ProbeOverhead | { error: string }>>;
  probes: {
    probe: string;
    kind: ProbeKind;
    status: 'ok' | 'failed' | 'skipped';
    reason?: string;
    trials: number;
    files: string[];
    startedAt: string;
    endedAt: string;
    tools?: Record<string, string>;
  }[];
  [extra: string]: unknown;
}
