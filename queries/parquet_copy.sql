-- The Parquet copy of one (path, run) partition: its JSONL rows (samples_jsonl), in
-- samples.ddl.sql's column order less the partition columns (they come from the copy's key).
-- Written by the engine, never by JavaScript: DuckDB wraps this text in COPY (…) TO
-- '<dir>/parquet/path=<p>/run=<id>/samples.parquet' (FORMAT PARQUET) (local/duckdb-query.ts),
-- Athena in UNLOAD (…) TO 's3://<bucket>/parquet/path=<p>/run=<id>/' WITH (format = 'PARQUET')
-- (queries/unload.ts). ${path} and ${run} are filled in by code (pattern-checked ids).
--
-- The records only, in no particular order (no query depends on the copy's row order): the
-- copy costs what reading the JSONL and writing the rows cost, one scan (docs/benchmarks.md,
-- collect). queries/percentiles.sql finds exact nearest ranks from a count of each distinct
-- value at query time. The text before this one also wrote ten rank columns, computed per
-- group at write time from a second read of the JSONL and a join of every row: 1.7× the time
-- of this copy at 1 M samples, and it put the copy's cost at 3.5–4.9× DuckDB's quantile_disc
-- over the same JSONL, where reading the rows and writing them alone is about 2.2×.
SELECT
  run_id, path_id, probe, kind, trial, seq, t_start, t_end, metric, value, unit, ok, error, clock, flag, ts_source, host_us, one_way_fwd_us, one_way_rev_us, clock_error_us
FROM samples_jsonl
WHERE path = '${path}' AND run = '${run}'
