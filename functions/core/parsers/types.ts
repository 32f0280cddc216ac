/**
 * What every raw-output parser implements: tool-native text in, normalized sample records out
 * (DESIGN.md record contract). Pure: no I/O. Throws ParseError with a one-line reason when the
 * input is not that tool's output.
 */
import type { SampleRecord } from '../model.js';

export interface ParseMeta {
  runId: string;
  pathId: string;
  probe: string;
  trial: number;
}

export type Parser = (raw: string, meta: ParseMeta) => SampleRecord[];
