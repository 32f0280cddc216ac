/**
 * The sample record: one normalized measurement, what every parser emits and the samples table
 * holds (docs/data.md, "Sample record"; the columns in queries/samples.ddl.sql).
 */

/** One normalized measurement (the sample record contract, docs/data.md). Times are epoch milliseconds. */
export interface SampleRecord {
  run_id: string;
  path_id: string;
  probe: string;
  /** The probe kind (probes/index.ts PROBE_KINDS). */
  kind: string;
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
