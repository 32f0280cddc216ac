/**
 * The run summary (`reports/run=<id>/summary.json`; docs/data.md): per path its status, steps,
 * provenance and results (percentiles with intervals, tails, trial spreads, modes), and for the
 * run the comparisons between paths, distributions, throughput series, regressions and trend,
 * and a mesh run's pair matrix. Built by functions/pipeline/summary.ts; rendered by report/.
 *
 * Floats are read with `jsonNumber`: a NaN or infinity a statistic came to was stored as null.
 * The summary and its paths keep keys this version does not know (loose): `pathbench report`
 * re-renders summaries that deployed stacks of other versions wrote.
 */
import { z } from 'zod';
import { httpTrialSchema } from '../probes/http/http-trials.js';
import { PROBE_KINDS } from '../probes/index.js';
import { probeOverheadSchema } from './agent-report.js';
import { keys } from './keys.js';
import { stepStatusSchema } from './path-manifest.js';
import { azPairSchema, meshFactsSchema, regressionSettingsSchema } from './resolved-plan.js';
import { runManifestSchema, runStatusSchema } from './run-manifest.js';
import { type DocumentStore, jsonNumber, parseDocument, readStored } from './stored-document.js';

const interval = z.tuple([jsonNumber, jsonNumber]);
const figure = z.number().nullable();

/** A result's counts and percentiles (the same over unflagged intervals only, in `unflagged`). */
const figuresShape = {
  n: z.number(),
  loss: jsonNumber,
  p50: figure,
  p95: figure,
  p99: figure,
  p999: figure,
  max: figure,
};

export const resultRowSchema = z.object({
  probe: z.string(),
  metric: z.string(),
  unit: z.string(),
  ...figuresShape,
  flags: z.array(z.string()),
  /** The same figures over unflagged intervals only (present when some interval carries a flag). */
  unflagged: z.object(figuresShape).optional(),
  /** Distribution-free 95 % order-statistic interval [lo, hi] of each percentile (core/confidence.ts). */
  ci95: z.object({ p50: interval, p95: interval, p99: interval }).optional(),
  /** How many samples lie beyond each percentile (n − its nearest rank); below 10 the figure is flagged thin-tail. */
  tail: z.object({ p50: z.number(), p95: z.number(), p99: z.number(), p999: z.number() }).optional(),
  /** Trial-to-trial spread when the probe ran several trials: (max − min) / min of the per-trial p50 and p99, in %. */
  trials: z.object({ count: z.number(), p50_spread_pct: jsonNumber, p99_spread_pct: jsonNumber }).optional(),
  /** http: successful requests per second (all trials' successes over their summed wall time). */
  rps: jsonNumber.optional(),
  /** http: per-trial figures (rps, throughput, p50, TIME_WAIT, tcp_tw_reuse), from the manifest. */
  httpTrials: z.array(httpTrialSchema).optional(),
  /** Latency metrics: the distribution's modes (location in the unit, share 0–1), core/shape.ts. */
  modes: z.array(z.object({ at: jsonNumber, share: jsonNumber })).optional(),
  /** Multimodal latency metrics: the mean (in the unit), and true when it lies in a valley between two modes. */
  mean: jsonNumber.optional(),
  meanInValley: z.boolean().optional(),
  /**
   * tcp-connect and pingpong timed by the kernel: the client's own part of the round trip
   * (host_us, app clock − kernel), n samples, nearest-rank p50 and p99 in µs, and the stamps'
   * source (queries/host_part.sql). The figure itself is then the network's.
   */
  host: z.object({ n: z.number(), p50_us: figure, p99_us: figure, ts_source: z.string() }).optional(),
  /**
   * pingpong with the server's clock readings: n samples, nearest-rank p50 of each direction
   * (signed µs, each on its own end's clock) and the largest bound on the two clocks'
   * disagreement (0: one kernel; queries/one_way.sql). Reports show a direction as a number only
   * when the bound is small against it (report/report-rows.ts oneWayNote).
   */
  oneWay: z.object({ n: z.number(), fwd_p50_us: figure, rev_p50_us: figure, clock_error_us: z.number() }).optional(),
});
export type ResultRow = z.output<typeof resultRowSchema>;

/** One percentile of a comparison: path − baseline, in % of the baseline, its 95 % interval and verdict. */
export const diffCellSchema = z.object({
  diff: jsonNumber,
  pct: jsonNumber,
  ci95: interval,
  /**
   * `no verdict` where the figures cannot say (`why`): an interval of zero width (too few samples
   * around the percentile), a thin tail, or a p50 from fewer than FEW_SAMPLES_P50 samples.
   */
  verdict: z.enum(['faster', 'slower', 'no clear difference', 'no verdict']),
  why: z.string().optional(),
});
export type DiffCell = z.output<typeof diffCellSchema>;

/** path − baseline for one probe and metric (summary.comparisons); units as in the results. */
export const comparisonSchema = z.object({
  path: z.string(),
  baseline: z.string(),
  probe: z.string(),
  metric: z.string(),
  unit: z.string(),
  p50: diffCellSchema,
  p95: diffCellSchema,
  p99: diffCellSchema,
});
export type Comparison = z.output<typeof comparisonSchema>;

/** One percentile of a within-path ratio: probe ÷ baseline probe, its 95 % interval and verdict. */
export const ratioCellSchema = z.object({
  ratio: jsonNumber,
  ci95: interval,
  /** As a comparison's: `slower` when the probe's figure is worse than the baseline probe's; `no verdict` says why. */
  verdict: diffCellSchema.shape.verdict,
  why: z.string().optional(),
});
export type RatioCell = z.output<typeof ratioCellSchema>;

/** probe ÷ baselineProbe, two cells of one path's probe matrix (summary.ratios; the plan's `ratios`). */
export const ratioSchema = z.object({
  path: z.string(),
  probe: z.string(),
  baselineProbe: z.string(),
  metric: z.string(),
  unit: z.string(),
  p50: ratioCellSchema,
  p95: ratioCellSchema,
  p99: ratioCellSchema,
});
export type Ratio = z.output<typeof ratioSchema>;

/**
 * One row of the selection table (summary.selection, seed 000 §8): a path's method, its latency
 * (p50/p99 with intervals, from its first latency probe in the order ping, sockperf, pingpong,
 * tcp-connect, http), throughput, loss and MTU, and what the method costs (core/cost.ts).
 */
export const selectionRowSchema = z.object({
  path: z.string(),
  method: z.string(),
  label: z.string(),
  latency: z
    .object({
      probe: z.string(),
      metric: z.string(),
      unit: z.string(),
      p50: figure,
      p99: figure,
      p50_ci95: interval.optional(),
      p99_ci95: interval.optional(),
      /** Share of the probe's attempts that failed (0–1). */
      loss: jsonNumber,
    })
    .nullable(),
  /** The highest p50 throughput of the path's iperf3 probes, bit/s. */
  throughputBps: figure,
  /** The path MTU the mtu probe found, bytes. */
  mtuBytes: figure,
  /** The method's fixed bill (per hour × 730), USD; null where the price table has no figure. */
  fixedUsdPerMonth: figure,
  /** Transfer ($/GB of the path's link) plus the method's processing, USD per GB. */
  usdPerGb: figure,
  /** The link the transfer price is for (core/cost.ts pathLink). */
  link: z.string().optional(),
});
export type SelectionRow = z.output<typeof selectionRowSchema>;

/** One latency distribution: log-spaced histogram bins and nearest-rank CDF points (queries/histogram.sql, cdf.sql). */
export const distributionSchema = z.object({
  path: z.string(),
  probe: z.string(),
  metric: z.string(),
  unit: z.string(),
  bins: z.array(z.object({ lo: jsonNumber, hi: jsonNumber, count: z.number() })),
  cdf: z.array(z.object({ p: jsonNumber, value: jsonNumber })),
});
export type Distribution = z.output<typeof distributionSchema>;

/** One iperf3 trial's throughput per interval (queries/series.sql); t in seconds from the trial's start. */
export const seriesSchema = z.object({
  path: z.string(),
  probe: z.string(),
  trial: z.number(),
  metric: z.string(),
  unit: z.string(),
  points: z.array(z.object({ seq: z.number(), t: jsonNumber, value: jsonNumber, flag: z.string().optional() })),
});
export type Series = z.output<typeof seriesSchema>;

export const judgedPercentileSchema = z.enum(['p50', 'p99']);

/** A percentile of this run outside its plan's baseline band (functions/pipeline/regressions.ts). */
export const regressionSchema = z.object({
  path: z.string(),
  probe: z.string(),
  metric: z.string(),
  unit: z.string(),
  percentile: judgedPercentileSchema,
  /** This run's figure and its 95 % interval. */
  value: jsonNumber,
  ci95: interval,
  /** Median of the baseline runs' figures, and the band [lo, hi] a clean run falls in. */
  baseline: jsonNumber,
  band: interval,
  runsInBaseline: z.number(),
  /** value − baseline in % of the baseline. */
  change_pct: jsonNumber,
  direction: z.enum(['regression', 'improvement']),
  /** The whole run's shift this figure was judged after (every path moved by it), in %; absent: none taken out. */
  runShift_pct: jsonNumber.optional(),
  /**
   * The reference path this figure was judged against, measured in the same probe (the plan's
   * `regression.paired`): the band is then where the figure would lie had it moved only as the
   * reference did this run, and change_pct is the change of the difference from the reference.
   */
  pairedWith: z.string().optional(),
});
export type Regression = z.output<typeof regressionSchema>;

/** One percentile across the plan's recent runs and this one, oldest first (summary.trend; the report's trend chart). */
export const trendSeriesSchema = z.object({
  path: z.string(),
  probe: z.string(),
  metric: z.string(),
  unit: z.string(),
  percentile: judgedPercentileSchema,
  points: z.array(
    z.object({ runId: z.string(), startedAt: z.string().optional(), value: figure, excluded: z.string().optional() }),
  ),
  /** The baseline band this run was judged against, when there were enough clean runs. */
  band: interval.optional(),
});
export type TrendSeries = z.output<typeof trendSeriesSchema>;

/** SummaryPath.provenance, from the manifest (functions/pipeline/provenance.ts). */
export const pathProvenanceSchema = z.object({
  instanceType: z.string().optional(),
  azId: z.string().optional(),
  baselineBps: z.number().optional(),
  peakBps: z.number().optional(),
  agentVersion: z.string().optional(),
  kernel: z.string().optional(),
  /** Tool name → version (or why it was unavailable), over the path's probes. */
  tools: z.record(z.string(), z.string()).optional(),
  /** Probe name → the clock(s) its figures came from, joined with "+". */
  clocks: z.record(z.string(), z.string()).optional(),
});
export type PathProvenance = z.output<typeof pathProvenanceSchema>;

/**
 * What the namespace lab did to a path during its probes (local lab runs only): the round trip
 * it was to emulate, and the one it achieved by its delay helper's clock — the median TCP
 * handshake through the delay namespace plus the client's own link, or, where the helper holds
 * one direction only, the median applied delay plus the bare topology.
 */
export const labTruthSchema = z.object({
  targetRttMs: z.number(),
  achievedRttMs: jsonNumber,
  /**
   * The helper's part of it and its 10th–90th percentile range: of the handshakes where they made
   * achievedRttMs, else the median applied delay summed over the directions.
   */
  appliedRttMs: jsonNumber.optional(),
  appliedP10P90Ms: interval.optional(),
  /** The rest of it: the topology's own cost (veths, stacks), achieved − applied. */
  bareRttMs: jsonNumber.optional(),
  /** Packets of the path the helper released in the window. */
  packets: z.number().optional(),
  /** achievedRttMs strays from targetRttMs by more than the lab's tolerance: a lab error, not a measurement. */
  labError: z.boolean().optional(),
});
export type LabTruth = z.output<typeof labTruthSchema>;

export const summaryPathSchema = z.looseObject({
  id: z.string(),
  label: z.string(),
  status: z.enum(['pending', 'running', 'succeeded', 'failed']),
  failedStep: z.string().optional(),
  error: z.string().optional(),
  steps: z.array(z.object({ name: z.string(), status: stepStatusSchema, ms: z.number() })),
  results: z.array(resultRowSchema),
  /** Where and how the path was measured: client type and bandwidth, agent, tool versions, clock per probe. */
  provenance: pathProvenanceSchema.optional(),
  /** The AZ pair the plan says this path measures (AZ-pair plans; the report's AZ-pair table). */
  az: azPairSchema.optional(),
  /** The probe's own cost per latency kind, self-calibrated on the client (the manifest's). */
  probe_overhead_us: z.partialRecord(z.enum(PROBE_KINDS), probeOverheadSchema).optional(),
  /** Probes the plan skipped, with its reason. */
  skipped: z.array(z.object({ probe: z.string(), reason: z.string().optional() })).optional(),
  /** The path's notes from the manifest (degraded tools, rejected lines, salvage …). */
  notes: z.array(z.string()).optional(),
  /** Lab runs: the round trip the lab was to emulate and the one it applied (lab/lab-truth.ts). */
  lab: labTruthSchema.optional(),
});
export type SummaryPath = z.output<typeof summaryPathSchema>;

/** One mesh pair's figures in a summary (functions/pipeline/mesh-summary.ts). */
export const meshPairSchema = meshFactsSchema.extend({
  path: z.string(),
  latencyMs: figure,
  /** Which metric the latency is (e.g. connect_rtt_ms). */
  latencyMetric: z.string().optional(),
  throughputBps: figure,
  /** W / RTT at this pair's latency, bits per second. */
  windowBoundBps: figure,
});
export type MeshPair = z.output<typeof meshPairSchema>;

/** y = slope · x + intercept, with Pearson r over n points. */
export const lineFitSchema = z.object({ slope: jsonNumber, intercept: jsonNumber, r: jsonNumber, n: z.number() });
export type LineFit = z.output<typeof lineFitSchema>;

export const meshSummarySchema = z.object({
  pairs: z.array(meshPairSchema),
  regions: z.array(z.string()),
  /** latency (ms) = slope · distance (km) + intercept. */
  latencyVsDistance: lineFitSchema.nullable(),
  /** throughput (bit/s) = slope · (1 / RTT in s) + intercept; r is of throughput against 1/RTT. */
  throughputVsInverseRtt: lineFitSchema.nullable(),
  windowBytes: z.number(),
});
export type MeshSummary = z.output<typeof meshSummarySchema>;

export const summarySchema = z.looseObject({
  runId: z.string(),
  status: runStatusSchema,
  planName: z.string().optional(),
  startedAt: z.string().optional(),
  endedAt: z.string().optional(),
  paths: z.array(summaryPathSchema),
  /** Differences between paths per percentile, with intervals and verdicts (functions/pipeline/comparisons.ts). */
  comparisons: z.array(comparisonSchema).optional(),
  /** Ratios between two probes of one path, per percentile, with intervals and verdicts (the plan's `ratios`). */
  ratios: z.array(ratioSchema).optional(),
  /** Per path: method, latency, throughput, loss, MTU and the method's cost (functions/pipeline/selection.ts). */
  selection: z.array(selectionRowSchema).optional(),
  /** The order the paths ran in, when the plan set one (`order`): the rule and this run's index. */
  order: z.object({ mode: z.string(), index: z.number(), paths: z.array(z.string()) }).optional(),
  /** Per path, probe and latency metric: histogram and CDF (functions/pipeline/distributions.ts). */
  distributions: z.array(distributionSchema).optional(),
  /** Per iperf3 trial: throughput per interval (functions/pipeline/distributions.ts). */
  series: z.array(seriesSchema).optional(),
  /** Percentiles outside the baseline band of the plan's previous clean runs (functions/pipeline/regressions.ts). */
  regressions: z.array(regressionSchema).optional(),
  /** Where every path of the run moved together (the client or its host, not a path): said once per figure. */
  runShifts: z
    .array(
      z.object({
        probe: z.string(),
        metric: z.string(),
        unit: z.string(),
        percentile: judgedPercentileSchema,
        shift_pct: jsonNumber,
        /** The shifts the plan's earlier runs showed: a run outside it moved as a whole. */
        usual_pct: interval,
        /**
         * `additive`: the same amount on every path (`shift`, in the metric's unit; shift_pct is
         * then its share of the median path); absent: one share of every path.
         */
        model: z.literal('additive').optional(),
        shift: jsonNumber.optional(),
        paths: z.number(),
        /** The reference path it was read from, when the plan names one (else the paths' median). */
        reference: z.string().optional(),
      }),
    )
    .optional(),
  /** The plan's own regression settings, when it has any (the judgement above used them). */
  regressionSettings: regressionSettingsSchema.optional(),
  /** The judged percentiles across the plan's recent runs, for the trend chart. */
  trend: z.array(trendSeriesSchema).optional(),
  /** A mesh run's pair matrix, fits and window bound (functions/pipeline/mesh-summary.ts). */
  mesh: meshSummarySchema.optional(),
  /** How the run's changed routes were put back (the manifest's `restore`). */
  routesRestored: runManifestSchema.shape.restore,
  /** Run-level notes, e.g. why nothing was measured. */
  notes: z.array(z.string()).optional(),
});
export type Summary = z.output<typeof summarySchema>;

/** A summary's text (e.g. fetched from S3 directly), parsed and checked. */
export function parseSummary(runId: string, text: string): Summary {
  return parseDocument(keys.report(runId, 'json'), text, summarySchema, 'run summary');
}

/** The run's summary; undefined when it has none (not summarized yet). */
export function readSummary(store: DocumentStore, runId: string): Promise<Summary | undefined> {
  return readStored(store, keys.report(runId, 'json'), summarySchema, 'run summary');
}
