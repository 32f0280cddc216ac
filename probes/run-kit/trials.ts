/**
 * A probe's trials one after another (sockperf, pingpong), folded into one outcome: ok while any
 * trial succeeded, failed (with the first reason) when all did; a failed trial is named.
 */
import type { ProbeOutcome } from './runner-types.js';

/** One trial: its raw files and, when it failed, why. */
export interface TrialResult {
  files: string[];
  reason?: string;
  /** The other trials would fail the same way (tool missing, no address): they are not run. */
  fatal?: boolean;
  /** The tool's version (or binary) as this trial saw it, for the outcome's `tools`. */
  version?: string;
}

export async function runTrials(
  trials: number,
  tool: string,
  one: (trial: number) => Promise<TrialResult>,
): Promise<ProbeOutcome> {
  const files: string[] = [];
  const failures: string[] = [];
  let version: string | undefined;
  for (let trial = 1; trial <= trials; trial++) {
    const out = await one(trial);
    files.push(...out.files);
    version ??= out.version;
    if (out.reason) failures.push(`trial ${trial}: ${out.reason}`);
    if (out.fatal) {
      for (let t = trial + 1; t <= trials; t++) failures.push(`trial ${t}: not run`);
      break;
    }
  }
  const allFailed = failures.length >= trials;
  const firstReason = failures[0]?.replace(/^trial \d+: /, '');
  return {
    status: allFailed ? 'failed' : 'ok',
    files,
    trials,
    ...(failures.length
      ? { reason: allFailed ? firstReason : `${failures.length} of ${trials} trials failed: ${failures.join('; ')}` }
      : {}),
    ...(version ? { tools: { [tool]: version } } : {}),
  };
}
