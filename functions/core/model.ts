/**
 * The shared vocabulary of pathbench: plan, probe, sample record, manifest and summary shapes.
 * docs/architecture.md describes these contracts; every module imports its types from here.
 */
import { z } from 'zod';

/** Safe identifier: used in S3 keys, SQL values and file names. */
export const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

export const PROBE_KINDS = ['tcp-connect', 'iperf3', 'http', 'sockperf', 'mtu'] as const;
export type ProbeKind = (typeof PROBE_KINDS)[number];

export interface TcpConnectProbe {
  kind: 'tcp-connect';
  /** Unique within a path; defaults to the kind (with -2, -3 … for repeats of a kind). */
  name: string;
  count: number;
  intervalMs: number;
  timeoutMs: number;
  /** Overrides the path's target port for this probe. */
  port?: number;
}

export interface Iperf3Probe {
  kind: 'iperf3';
  name: string;
  mode: 'tcp' | 'udp';
  streams: number;
  durationSeconds: number;
  repeats: number;
  intervalSeconds: number;
  /** UDP target bitrate, iperf3 syntax ("1G", "500M"). Never unbounded by default. */
  bitrate?: string;
  port?: number;
}

export interface HttpProbe {
  kind: 'http';
  name: string;
  count: number;
  concurrency: number;
  keepAlive: boolean;
  payloadBytes: number;
  trials: number;
  timeoutMs: number;
  port?: number;
}

export interface SockperfProbe {
  kind: 'sockperf';
  name: string;
  mode: 'tcp' | 'udp';
  durationSeconds: number;
  port?: number;
}

export interface MtuProbe {
  kind: 'mtu';
  name: string;
  min: number;
  max: number;
  timeoutMs: number;
}

export type ProbeSpec = TcpConnectProbe | Iperf3Probe | HttpProbe | SockperfProbe | MtuProbe;

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

export const clientRefSchema = z.object({ instanceId: z.string().min(1), region: z.string().min(1) });
export type ClientRef = z.infer<typeof clientRefSchema>;

export interface SkippedProbe {
  name: string;
  reason: string;
  /** The skipped probe's kind, when known (the agent lists it under that kind in agent.json). */
  kind?: ProbeKind;
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
}

export interface ResolvedPlan {
  name: string;
  paths: ResolvedPath[];
}

export type PlanResult = { ok: true; plan: ResolvedPlan } | { ok: false; problems: string[] };

/** One normalized measurement (the sample record contract, docs/data.md). Times are epoch milliseconds. */
export interface SampleRecord {
  run_id: string;
  path_id: string;
  probe: string;
  kind: ProbeKind;
  trial: number;
  seq: number;
  t_start: number;
  t_end: number;
  metric: string;
  value: number | null;
  unit: string;
  ok: boolean;
  error?: string;
  /** Which clock the value came from, e.g. "app-hrtime", "kernel-tcpi_rtt", "tool". */
  clock?: string;
  /** Free-form small facts (stream count, mode, interval index …). */
  [extra: string]: unknown;
}

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
}

export interface PathManifest {
  id: string;
  label: string;
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
  restore?: { status: 'ok' | 'failed'; at: string; errors: string[] };
  /** Run-level remarks, e.g. "execution ABORTED" written by the cleanup after an aborted run. */
  notes?: string[];
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
}

export interface SummaryPath {
  id: string;
  label: string;
  status: PathManifest['status'];
  failedStep?: string;
  error?: string;
  steps: { name: string; status: StepStatus; ms: number }[];
  results: ResultRow[];
  [extra: string]: unknown;
}

export interface Summary {
  runId: string;
  status: RunManifest['status'];
  planName?: string;
  startedAt?: string;
  endedAt?: string;
  paths: SummaryPath[];
  [extra: string]: unknown;
}

/** What the agent executes for one path (specs/run=<runId>/path=<id>/spec.json). */
export interface AgentSpec {
  runId: string;
  pathId: string;
  target: { host: string; port: number };
  probes: ProbeSpec[];
  skipped: SkippedProbe[];
}

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
