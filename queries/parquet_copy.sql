-- The Parquet copy of one (path, run) partition: its JSONL rows (samples_jsonl) with the rank
-- columns queries/percentiles.sql reads, in samples.ddl.sql's column order less the partition
-- columns (they come from the copy's key). Written by the engine, never by JavaScript: DuckDB
-- wraps this text in COPY (…) TO '<dir>/parquet/path=<p>/run=<id>/samples.parquet' (FORMAT
-- PARQUET) (local/duckdb-query.ts), Athena in UNLOAD (…) TO 's3://<bucket>/parquet/path=<p>/
-- run=<id>/' WITH (format = 'PARQUET') (functions/adapters/aws/athena-query.ts). ${path} and
-- ${run} are filled in by code (pattern-checked ids).
--
-- Per (probe, metric, unit) group of the partition (the GROUP BY of percentiles.sql):
--   value_rank            row_number() of a successful value (ok true, value not null) in
--                         ascending order among the group's successful values; NULL otherwise.
--                         Ties take consecutive positions in some order: the value at each
--                         position is the same whichever order.
--   value_count           the group's successful values, on every row
--   unflagged_rank/_count the same among the unflagged (flag IS NULL) successful values, only in
--                         a group with a flagged row (NULL in every row of the others)
--   group_rows            the group's rows, failed ones included; group_unflagged_rows unflagged
--   *_permille_lo / _hi   the per-mille interval (lo, hi] position r of n covers:
--                         floor(1000 (r - 1) / n), floor(1000 r / n). The remainder is taken off
--                         before dividing, so Trino's integer division and DuckDB's double
--                         division give the same exact integer.
--
-- Speed (docs/benchmarks.md, collect): the cost is sorting the partition's wide rows, so they
-- are sorted once. Every window below has the same PARTITION BY and ORDER BY (or only the
-- PARTITION BY), which an engine serves from one sort: within its group a row's place is by
-- NOT success then value, so the successful values come first, in ascending order. There
--   value_rank      is the row's row_number() (a successful row is preceded only by successful
--                   rows),
--   unflagged_rank  the running count of unflagged rows up to and including it (the rows before
--                   it are all successful, so this counts the unflagged successful values at or
--                   below it: its place among them, ties in the sort's order),
-- and the counts are aggregates over the whole group. An earlier text took the counts from a
-- GROUP BY joined back and ranked the unflagged rows in a second sort: 1.7× as slow.
WITH partition_rows AS (
  SELECT
    run_id, path_id, probe, kind, trial, seq, t_start, t_end, metric, value, unit, ok, error, clock, flag, ts_source, host_us, one_way_fwd_us, one_way_rev_us, clock_error_us,
    COALESCE(ok = true AND value IS NOT NULL, false) AS success
  FROM samples_jsonl
  WHERE path = '${path}' AND run = '${run}'
),
windowed AS (
  SELECT
    run_id, path_id, probe, kind, trial, seq, t_start, t_end, metric, value, unit, ok, error, clock, flag, ts_source, host_us, one_way_fwd_us, one_way_rev_us, clock_error_us, success,
    row_number() OVER (PARTITION BY probe, metric, unit ORDER BY NOT success, value) AS place,
    count(CASE WHEN flag IS NULL THEN 1 END) OVER (
      PARTITION BY probe, metric, unit ORDER BY NOT success, value ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS unflagged_place,
    count(*) OVER (PARTITION BY probe, metric, unit) AS group_rows,
    count(CASE WHEN flag IS NULL THEN 1 END) OVER (PARTITION BY probe, metric, unit) AS group_unflagged_rows,
    count(CASE WHEN success THEN 1 END) OVER (PARTITION BY probe, metric, unit) AS value_count,
    count(CASE WHEN success AND flag IS NULL THEN 1 END) OVER (PARTITION BY probe, metric, unit) AS success_unflagged,
    count(flag) OVER (PARTITION BY probe, metric, unit) AS flagged_rows
  FROM partition_rows
),
ranked AS (
  SELECT
    run_id, path_id, probe, kind, trial, seq, t_start, t_end, metric, value, unit, ok, error, clock, flag, ts_source, host_us, one_way_fwd_us, one_way_rev_us, clock_error_us,
    CAST(CASE WHEN success THEN place END AS BIGINT) AS value_rank,
    CAST(value_count AS BIGINT) AS value_count,
    CAST(CASE WHEN success AND flag IS NULL AND flagged_rows > 0 THEN unflagged_place END AS BIGINT) AS unflagged_rank,
    CAST(CASE WHEN flagged_rows > 0 THEN success_unflagged END AS BIGINT) AS unflagged_count,
    CAST(group_rows AS BIGINT) AS group_rows,
    CAST(group_unflagged_rows AS BIGINT) AS group_unflagged_rows
  FROM windowed
)
SELECT
  run_id, path_id, probe, kind, trial, seq, t_start, t_end, metric, value, unit, ok, error, clock, flag, ts_source, host_us, one_way_fwd_us, one_way_rev_us, clock_error_us,
  value_rank, value_count, unflagged_rank, unflagged_count, group_rows, group_unflagged_rows,
  CAST((1000 * (value_rank - 1) - (1000 * (value_rank - 1)) % value_count) / value_count AS BIGINT) AS value_permille_lo,
  CAST((1000 * value_rank - (1000 * value_rank) % value_count) / value_count AS BIGINT) AS value_permille_hi,
  CAST((1000 * (unflagged_rank - 1) - (1000 * (unflagged_rank - 1)) % unflagged_count) / unflagged_count AS BIGINT) AS unflagged_permille_lo,
  CAST((1000 * unflagged_rank - (1000 * unflagged_rank) % unflagged_count) / unflagged_count AS BIGINT) AS unflagged_permille_hi
FROM ranked
