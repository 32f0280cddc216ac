/**
 * What every raw-output parser implements: tool-native text in, normalized sample records out
 * (the sample record contract: SampleRecord in ../model.ts, docs/data.md). Pure: no I/O. Throws
 * ParseError with a one-line reason when the input is not that tool's output.
 */
import type { SampleRecord } from '../model.js';

export interface ParseMeta {
  runId: string;
  pathId: string;
  probe: string;
  trial: number;
  /**
   * Text of the runner's sidecar `<trial>.meta.json` next to the raw file, when there is one
   * (exit code, stderr, wall-clock start/end, failure reason). Optional: parsers work without it,
   * but use it for what the tool's own output lacks (sockperf's epoch anchor, a failure's time).
   */
  sidecar?: string;
}

export type Parser = (raw: string, meta: ParseMeta) => SampleRecord[];
