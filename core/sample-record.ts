/**
 * The sample record: one normalized measurement, what every parser emits and the samples table
 * holds (docs/data.md, "Sample record"; the columns in queries/samples.ddl.sql). Stored one per
 * line in `samples/path=<p>/run=<id>/<probe>-<trial>.jsonl`; the Parquet copy reads those lines
 * back checking each column against the DDL (functions/pipeline/parquet-copy.ts), a check per
 * field that a million lines afford where a schema parse per line would not.
 */
import { z } from 'zod';

/** One normalized measurement (the sample record contract, docs/data.md). Times are epoch milliseconds. */
export const sampleRecordSchema = z.looseObject({
  run_id: z.string(),
  path_id: z.string(),
  probe: z.string(),
  /** The probe kind (probes/index.ts PROBE_KINDS). */
  kind: z.string(),
  trial: z.number(),
  seq: z.number(),
  t_start: z.number(),
  t_end: z.number(),
  metric: z.string(),
  value: z.number().nullable(),
  unit: z.string(),
  ok: z.boolean(),
  error: z.string().optional(),
  /** Which clock the value came from, e.g. "app-hrtime", "kernel-tcpi_rtt", "tool". */
  clock: z.string().optional(),
  // Further keys are free-form small facts (stream count, mode, interval index …): kept, not dropped.
});
export type SampleRecord = z.output<typeof sampleRecordSchema>;
