-- The Parquet copy of one (path, run) partition: its JSONL rows (samples_jsonl) with the rank
-- columns queries/percentiles.sql reads, in samples.ddl.sql's column order less the partition
-- columns (they come from the copy's key). Written by the engine, never by JavaScript: DuckDB
-- wraps this text in COPY (…) TO '<dir>/parquet/path=<p>/run=<id>/samples.parquet' (FORMAT
-- PARQUET) (local/duckdb-query.ts), Athena in UNLOAD (…) TO 's3://<bucket>/parquet/path=<p>/
-- run=<id>/' WITH (format = 'PARQUET') (functions/adapters/aws/athena-query.ts). ${path} and
-- ${run} are filled in by code (pattern-checked ids).
--
-- Per (probe, metric, unit) group of the partition (the GROUP BY of percentiles.sql), with n the
-- group's successful values (ok true, value not null). The successful rows holding one value
-- (its ties) take positions first … last in ascending order, last = the values at or below it:
--   value_rank            last, on each of those rows; NULL on a failed row
--   value_count           n, on every row
--   value_permille_lo/_hi the per-mille interval (lo, hi] positions first … last cover:
--                         floor(1000 (first - 1) / n), floor(1000 last / n). The remainder is
--                         taken off before dividing, so Trino's integer division and DuckDB's
--                         double division give the same exact integer.
--   unflagged_*           the same among the unflagged (flag IS NULL) successful values, on
--                         those rows, only in a group with a flagged row (else NULL everywhere)
--   group_rows            the group's rows, failed ones included; group_unflagged_rows unflagged
-- So the nearest rank ceil(k n / 1000) of a per-mille k is held by the rows whose interval holds
-- k (lo < k <= hi), and they all hold the one value at that rank.
--
-- Speed (docs/benchmarks.md, collect): no sort of the partition's rows. One pass counts each
-- distinct value of each group (tallies); a window over those few rows, not over the samples,
-- adds up the counts below each value (ranges); the rows then take their value's figures by an
-- equality join. The text before this one ranked every row by window functions over the
-- samples, which sorts the wide rows: 1.7× as long on DuckDB (1 M samples, 28,658 distinct
-- values, best of three in one session: 2.26 s against 1.32 s). The JSONL is read twice, so
-- Athena scans it twice. Group keys are compared through COALESCE, so a row whose probe, metric
-- or unit is missing joins its group (the writers never give both NULL and '' in one group).
WITH tallies AS (
  SELECT
    COALESCE(probe, '') AS probe_key, COALESCE(metric, '') AS metric_key, COALESCE(unit, '') AS unit_key,
    COALESCE(ok = true AND value IS NOT NULL, false) AS success,
    CASE WHEN ok = true AND value IS NOT NULL THEN value ELSE 0 END AS value_key,
    count(*) AS tied,
    count(CASE WHEN flag IS NULL THEN 1 END) AS tied_unflagged,
    count(flag) AS tied_flagged
  FROM samples_jsonl
  WHERE path = '${path}' AND run = '${run}'
  GROUP BY
    COALESCE(probe, ''), COALESCE(metric, ''), COALESCE(unit, ''),
    COALESCE(ok = true AND value IS NOT NULL, false),
    CASE WHEN ok = true AND value IS NOT NULL THEN value ELSE 0 END
),
ranges AS (
  SELECT
    probe_key, metric_key, unit_key, success, value_key, tied, tied_unflagged,
    CAST(sum(tied) OVER (
      PARTITION BY probe_key, metric_key, unit_key ORDER BY NOT success, value_key ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS BIGINT) AS last_place,
    CAST(sum(tied_unflagged) OVER (
      PARTITION BY probe_key, metric_key, unit_key ORDER BY NOT success, value_key ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS BIGINT) AS last_unflagged_place,
    CAST(sum(CASE WHEN success THEN tied ELSE 0 END) OVER (PARTITION BY probe_key, metric_key, unit_key) AS BIGINT) AS value_count,
    CAST(sum(CASE WHEN success THEN tied_unflagged ELSE 0 END) OVER (PARTITION BY probe_key, metric_key, unit_key) AS BIGINT) AS success_unflagged,
    CAST(sum(tied) OVER (PARTITION BY probe_key, metric_key, unit_key) AS BIGINT) AS group_rows,
    CAST(sum(tied_unflagged) OVER (PARTITION BY probe_key, metric_key, unit_key) AS BIGINT) AS group_unflagged_rows,
    CAST(sum(tied_flagged) OVER (PARTITION BY probe_key, metric_key, unit_key) AS BIGINT) AS flagged_rows
  FROM tallies
),
figures AS (
  SELECT
    probe_key, metric_key, unit_key, success, value_key, value_count, group_rows, group_unflagged_rows,
    CASE WHEN success THEN last_place END AS value_rank,
    CASE WHEN success THEN
      (1000 * (last_place - tied) - (1000 * (last_place - tied)) % value_count) / value_count
    END AS value_permille_lo,
    CASE WHEN success THEN (1000 * last_place - (1000 * last_place) % value_count) / value_count END AS value_permille_hi,
    CASE WHEN flagged_rows > 0 THEN success_unflagged END AS unflagged_count,
    CASE WHEN success AND flagged_rows > 0 AND tied_unflagged > 0 THEN last_unflagged_place END AS unflagged_rank,
    CASE WHEN success AND flagged_rows > 0 AND tied_unflagged > 0 THEN
      (1000 * (last_unflagged_place - tied_unflagged) - (1000 * (last_unflagged_place - tied_unflagged)) % success_unflagged)
        / success_unflagged
    END AS unflagged_permille_lo,
    CASE WHEN success AND flagged_rows > 0 AND tied_unflagged > 0 THEN
      (1000 * last_unflagged_place - (1000 * last_unflagged_place) % success_unflagged) / success_unflagged
    END AS unflagged_permille_hi
  FROM ranges
)
SELECT
  s.run_id, s.path_id, s.probe, s.kind, s.trial, s.seq, s.t_start, s.t_end, s.metric, s.value, s.unit, s.ok, s.error, s.clock, s.flag, s.ts_source, s.host_us, s.one_way_fwd_us, s.one_way_rev_us, s.clock_error_us,
  f.value_rank,
  f.value_count,
  CASE WHEN s.flag IS NULL THEN f.unflagged_rank END AS unflagged_rank,
  f.unflagged_count,
  f.group_rows,
  f.group_unflagged_rows,
  CAST(f.value_permille_lo AS BIGINT) AS value_permille_lo,
  CAST(f.value_permille_hi AS BIGINT) AS value_permille_hi,
  CAST(CASE WHEN s.flag IS NULL THEN f.unflagged_permille_lo END AS BIGINT) AS unflagged_permille_lo,
  CAST(CASE WHEN s.flag IS NULL THEN f.unflagged_permille_hi END AS BIGINT) AS unflagged_permille_hi
FROM samples_jsonl s
JOIN figures f
  ON COALESCE(s.probe, '') = f.probe_key
  AND COALESCE(s.metric, '') = f.metric_key
  AND COALESCE(s.unit, '') = f.unit_key
  AND COALESCE(s.ok = true AND s.value IS NOT NULL, false) = f.success
  AND CASE WHEN s.ok = true AND s.value IS NOT NULL THEN s.value ELSE 0 END = f.value_key
WHERE s.path = '${path}' AND s.run = '${run}'
