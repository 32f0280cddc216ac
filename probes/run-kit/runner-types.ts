/**
 * What every probe runner in the agent implements. A runner executes one probe against the
 * path's target and writes tool-native raw files under ctx.outDir/<probe name>/<trial>.<ext>.
 * It never throws for a measurement failure: failures are recorded in the raw output (and in
 * the outcome); it throws only for programming errors.
 */
import type { ProbeSpec } from '../index.js';
import type { NicReader } from './nic.js';

export interface ProbeContext {
  target: { host: string; port: number };
  /** Directory the raw files go into (created). */
  outDir: string;
  log: (message: string, data?: Record<string, unknown>) => void;
  /** The NIC's allowance counters, read around each trial into its sidecar (`nic`); none: not read. */
  nic?: NicReader;
}

export interface ProbeOutcome {
  status: 'ok' | 'failed';
  /** Raw files written, relative to outDir, e.g. "iperf3-tcp/1.json". */
  files: string[];
  trials: number;
  reason?: string;
  /** Tool name and version, e.g. { iperf3: "3.12" }. */
  tools?: Record<string, string>;
}

export type ProbeRunner<P extends ProbeSpec = ProbeSpec> = (probe: P, ctx: ProbeContext) => Promise<ProbeOutcome>;
