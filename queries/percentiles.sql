-- Exact nearest-rank percentiles for one run, one row per (path, probe, metric, unit, subset).
-- Parameter 1: run id. The same text runs on Athena (Trino) and DuckDB; keep it that way.
--
-- subset: 'all' covers every sample of the group; 'unflagged' covers only rows whose flag IS
-- NULL and is emitted only for groups where at least one row carries a flag (e.g. throughput
-- intervals after a burst-credit cliff), so the "before the cliff" figures sit next to the rest.
-- A sample is successful when ok is true and value is not null (a record missing ok counts as
-- failed). n = successful samples, total = all samples of the subset, failed = total - n,
-- loss = failed / total as a DOUBLE fraction (NULL when total = 0). Percentiles and max use
-- successful samples only and are NULL when n = 0.
--
-- Nearest rank: the p-th percentile is the value at 1-based position ceil(p * n) in ascending
-- order. p is an integer per-mille k (500, 950, 990, 999), never a double p.
--
-- How the value at that rank is found, without a sort: the samples table carries rank columns
-- (docs/data.md, "Rank columns"), written with each partition's Parquet copy
-- (queries/parquet_copy.sql) and computed by window functions for rows that have no copy
-- yet (local/duckdb-query.ts). The successful rows holding one value (its ties) take positions
-- first ... last among the group's n successful values in ascending order; value_permille_lo /
-- _hi on each of them is the per-mille interval (lo, hi] those positions cover:
-- lo = floor(1000 (first - 1) / n), hi = floor(1000 last / n). Position r is the nearest rank
-- ceil(k n / 1000) exactly when floor(1000 (r - 1) / n) < k <= floor(1000 r / n) (the intervals
-- of positions 1 ... n tile (0, 1000]), and hi = 1000 only on the max. So the value at a
-- figure's rank is the value of the rows whose interval holds k: integer comparisons with
-- constants, no division (where Trino and DuckDB differ) and no multiplication per row. The
-- unflagged_* columns are the same among the unflagged values (set only in a group with a
-- flagged row); value_count, unflagged_count, group_rows and group_unflagged_rows the group's
-- counts, on every row.
--
-- The WHERE keeps only those rows, a handful per group (more where a value has many ties), so
-- the GROUP BY sees almost nothing: rows at one of the five ranks of either subset, and every
-- row of a group without successful values or without rank columns (value_count 0 or NULL),
-- so that every group appears. Every figure's k is at least 500 (p50 is the lowest), so
-- "hi >= 500" sets half the rows aside first. The counts come from the stored group columns (ok
-- and flag are not read at all); in a Parquet copy written before those columns existed (every
-- row of it passes the WHERE) only total is counted from the rows, and n, loss and the figures
-- read NULL.
--
-- The rank columns are checked before they are used: each figure's rank must be held by rows of
-- one value (the least equal to the greatest), or the subset's percentiles and max are NULL
-- rather than wrong (held by no row or by rows of two values: a copy written before the columns
-- existed, or changed behind the writer's back); `pathbench parquet` rewrites such copies.
-- Counts are CAST to BIGINT because DuckDB's SUM of BIGINT is a 128-bit HUGEINT, and one GROUP
-- BY reads samples once (Athena bills each scan).
SELECT path, probe, kind, metric, unit, subset, n, total - n AS failed, total,
  CASE WHEN total = 0 THEN NULL ELSE CAST(total - n AS DOUBLE) / CAST(total AS DOUBLE) END AS loss,
  CASE WHEN subset = 'all' THEN p50_all ELSE p50_unflagged END AS p50,
  CASE WHEN subset = 'all' THEN p95_all ELSE p95_unflagged END AS p95,
  CASE WHEN subset = 'all' THEN p99_all ELSE p99_unflagged END AS p99,
  CASE WHEN subset = 'all' THEN p999_all ELSE p999_unflagged END AS p999,
  CASE WHEN subset = 'all' THEN max_all ELSE max_unflagged END AS max
FROM (
  SELECT
    path, probe, kind, metric, unit, flagged,
    CASE WHEN subset = 'all' THEN n_all ELSE n_unflagged END AS n,
    CASE WHEN subset = 'all' THEN total_all ELSE total_unflagged END AS total,
    CASE WHEN ranked_all THEN p50_all END AS p50_all,
    CASE WHEN ranked_all THEN p95_all END AS p95_all,
    CASE WHEN ranked_all THEN p99_all END AS p99_all,
    CASE WHEN ranked_all THEN p999_all END AS p999_all,
    CASE WHEN ranked_all THEN max_all END AS max_all,
    CASE WHEN ranked_unflagged THEN p50_unflagged END AS p50_unflagged,
    CASE WHEN ranked_unflagged THEN p95_unflagged END AS p95_unflagged,
    CASE WHEN ranked_unflagged THEN p99_unflagged END AS p99_unflagged,
    CASE WHEN ranked_unflagged THEN p999_unflagged END AS p999_unflagged,
    CASE WHEN ranked_unflagged THEN max_unflagged END AS max_unflagged,
    subset
  FROM (
    SELECT
      grouped.*,
      total_all - total_unflagged AS flagged,
      (p50_all = least_p50_all AND p95_all = least_p95_all AND p99_all = least_p99_all AND p999_all = least_p999_all AND max_all = least_max_all) AS ranked_all,
      (p50_unflagged = least_p50_unflagged AND p95_unflagged = least_p95_unflagged AND p99_unflagged = least_p99_unflagged AND p999_unflagged = least_p999_unflagged AND max_unflagged = least_max_unflagged) AS ranked_unflagged
    FROM (
      SELECT
        path, probe, metric, unit,
        MIN(kind) AS kind,
        CAST(COALESCE(MAX(group_rows), COUNT(*)) AS BIGINT) AS total_all,
        CAST(MAX(group_unflagged_rows) AS BIGINT) AS total_unflagged,
        CAST(MAX(value_count) AS BIGINT) AS n_all,
        CAST(MAX(unflagged_count) AS BIGINT) AS n_unflagged,
        MAX(CASE WHEN value_permille_lo < 500 AND value_permille_hi >= 500 THEN value END) AS p50_all,
        MIN(CASE WHEN value_permille_lo < 500 AND value_permille_hi >= 500 THEN value END) AS least_p50_all,
        MAX(CASE WHEN value_permille_lo < 950 AND value_permille_hi >= 950 THEN value END) AS p95_all,
        MIN(CASE WHEN value_permille_lo < 950 AND value_permille_hi >= 950 THEN value END) AS least_p95_all,
        MAX(CASE WHEN value_permille_lo < 990 AND value_permille_hi >= 990 THEN value END) AS p99_all,
        MIN(CASE WHEN value_permille_lo < 990 AND value_permille_hi >= 990 THEN value END) AS least_p99_all,
        MAX(CASE WHEN value_permille_lo < 999 AND value_permille_hi >= 999 THEN value END) AS p999_all,
        MIN(CASE WHEN value_permille_lo < 999 AND value_permille_hi >= 999 THEN value END) AS least_p999_all,
        MAX(CASE WHEN value_permille_hi = 1000 THEN value END) AS max_all,
        MIN(CASE WHEN value_permille_hi = 1000 THEN value END) AS least_max_all,
        MAX(CASE WHEN unflagged_permille_lo < 500 AND unflagged_permille_hi >= 500 THEN value END) AS p50_unflagged,
        MIN(CASE WHEN unflagged_permille_lo < 500 AND unflagged_permille_hi >= 500 THEN value END) AS least_p50_unflagged,
        MAX(CASE WHEN unflagged_permille_lo < 950 AND unflagged_permille_hi >= 950 THEN value END) AS p95_unflagged,
        MIN(CASE WHEN unflagged_permille_lo < 950 AND unflagged_permille_hi >= 950 THEN value END) AS least_p95_unflagged,
        MAX(CASE WHEN unflagged_permille_lo < 990 AND unflagged_permille_hi >= 990 THEN value END) AS p99_unflagged,
        MIN(CASE WHEN unflagged_permille_lo < 990 AND unflagged_permille_hi >= 990 THEN value END) AS least_p99_unflagged,
        MAX(CASE WHEN unflagged_permille_lo < 999 AND unflagged_permille_hi >= 999 THEN value END) AS p999_unflagged,
        MIN(CASE WHEN unflagged_permille_lo < 999 AND unflagged_permille_hi >= 999 THEN value END) AS least_p999_unflagged,
        MAX(CASE WHEN unflagged_permille_hi = 1000 THEN value END) AS max_unflagged,
        MIN(CASE WHEN unflagged_permille_hi = 1000 THEN value END) AS least_max_unflagged
      FROM samples
      WHERE run = ? AND (
        value_count IS NULL OR value_count = 0
        OR (value_permille_hi >= 500 AND ((value_permille_lo < 500 AND value_permille_hi >= 500) OR (value_permille_lo < 950 AND value_permille_hi >= 950) OR (value_permille_lo < 990 AND value_permille_hi >= 990) OR (value_permille_lo < 999 AND value_permille_hi >= 999) OR (value_permille_hi = 1000)))
        OR (unflagged_permille_hi >= 500 AND ((unflagged_permille_lo < 500 AND unflagged_permille_hi >= 500) OR (unflagged_permille_lo < 950 AND unflagged_permille_hi >= 950) OR (unflagged_permille_lo < 990 AND unflagged_permille_hi >= 990) OR (unflagged_permille_lo < 999 AND unflagged_permille_hi >= 999) OR (unflagged_permille_hi = 1000)))
      )
      GROUP BY path, probe, metric, unit
    ) grouped
  ) checked
  CROSS JOIN (VALUES ('all'), ('unflagged')) AS subsets (subset)
  WHERE subset = 'all' OR flagged > 0
) per_subset
ORDER BY path, probe, metric, subset, unit
