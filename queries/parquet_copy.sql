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
-- Speed (docs/benchmarks.md, collect): a window over the wide rows is the cost, so the group
-- counts come from a GROUP BY joined back, and only the rows of groups with a flagged row (the
-- throughput intervals, few) pay for the second sort of the unflagged rank. DuckDB materializes
-- the partition's rows once (a CTE read twice); Trino reads them twice.
WITH partition_rows AS (
  SELECT
    run_id, path_id, probe, kind, trial, seq, t_start, t_end, metric, value, unit, ok, error, clock, flag,
    COALESCE(ok = true AND value IS NOT NULL, false) AS success
  FROM samples_jsonl
  WHERE path = '${path}' AND run = '${run}'
),
group_counts AS (
  SELECT
    probe AS g_probe, metric AS g_metric, unit AS g_unit,
    CAST(count(*) AS BIGINT) AS group_rows,
    CAST(count(CASE WHEN flag IS NULL THEN 1 END) AS BIGINT) AS group_unflagged_rows,
    CAST(count(CASE WHEN success THEN 1 END) AS BIGINT) AS value_count,
    CAST(count(CASE WHEN success AND flag IS NULL THEN 1 END) AS BIGINT) AS success_unflagged,
    count(flag) > 0 AS flagged_group
  FROM partition_rows
  GROUP BY probe, metric, unit
),
counted AS (
  SELECT r.*, g.group_rows, g.group_unflagged_rows, g.value_count, g.success_unflagged, g.flagged_group
  FROM partition_rows r
  JOIN group_counts g
    ON g.g_probe IS NOT DISTINCT FROM r.probe AND g.g_metric IS NOT DISTINCT FROM r.metric AND g.g_unit IS NOT DISTINCT FROM r.unit
),
ranked AS (
  SELECT
    run_id, path_id, probe, kind, trial, seq, t_start, t_end, metric, value, unit, ok, error, clock, flag,
    CAST(CASE WHEN success THEN row_number() OVER (PARTITION BY probe, metric, unit, success ORDER BY value) END AS BIGINT) AS value_rank,
    value_count,
    CAST(NULL AS BIGINT) AS unflagged_rank,
    CAST(NULL AS BIGINT) AS unflagged_count,
    group_rows, group_unflagged_rows
  FROM counted
  WHERE NOT flagged_group
  UNION ALL
  SELECT
    run_id, path_id, probe, kind, trial, seq, t_start, t_end, metric, value, unit, ok, error, clock, flag,
    CAST(CASE WHEN success THEN row_number() OVER (PARTITION BY probe, metric, unit, success ORDER BY value) END AS BIGINT) AS value_rank,
    value_count,
    CAST(CASE WHEN success AND flag IS NULL THEN row_number() OVER (PARTITION BY probe, metric, unit, success AND flag IS NULL ORDER BY value) END AS BIGINT) AS unflagged_rank,
    success_unflagged AS unflagged_count,
    group_rows, group_unflagged_rows
  FROM counted
  WHERE flagged_group
)
SELECT
  run_id, path_id, probe, kind, trial, seq, t_start, t_end, metric, value, unit, ok, error, clock, flag,
  value_rank, value_count, unflagged_rank, unflagged_count, group_rows, group_unflagged_rows,
  CAST((1000 * (value_rank - 1) - (1000 * (value_rank - 1)) % value_count) / value_count AS BIGINT) AS value_permille_lo,
  CAST((1000 * value_rank - (1000 * value_rank) % value_count) / value_count AS BIGINT) AS value_permille_hi,
  CAST((1000 * (unflagged_rank - 1) - (1000 * (unflagged_rank - 1)) % unflagged_count) / unflagged_count AS BIGINT) AS unflagged_permille_lo,
  CAST((1000 * unflagged_rank - (1000 * unflagged_rank) % unflagged_count) / unflagged_count AS BIGINT) AS unflagged_permille_hi
FROM ranked
