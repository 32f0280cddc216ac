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
-- (functions/core/sample-ranks.ts) and computed by window functions for rows that have no copy
-- yet (local/duckdb-query.ts). value_rank is 1 + how many successful values of the group are
-- smaller (ties share it) and value_count how many there are; unflagged_rank / unflagged_count
-- the same among the unflagged successful values. Every value at or below the one at rank r
-- has value_rank <= r and every larger one a value_rank > r, so the value at rank r is
-- MAX(value) over the rows with value_rank <= r: one pass over the group, no sort, no array.
--
-- "rank <= ceil(k * n / 1000)" is written "1000 * rank < k * n + 1000" (for an integer rank,
-- r <= ceil(x) exactly when r - 1 < x): BIGINT arithmetic only, so no division, where the
-- engines differ (Trino's "/" truncates integers, DuckDB's returns a DOUBLE). Counts are CAST
-- to BIGINT because DuckDB's SUM of BIGINT is a 128-bit HUGEINT.
--
-- The rank columns are checked before they are used: every row of the group must carry the
-- count the query counts itself, and every successful row a rank. Where they do not (a Parquet
-- file written before the columns existed, or changed behind the writer's back) the subset's
-- percentiles and max are NULL rather than wrong; `pathbench columnar` rewrites such files.
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
      (min_count_all = n_all AND max_count_all = n_all AND ranks_all = n_all) AS ranked_all,
      (min_count_unflagged = n_unflagged AND max_count_unflagged = n_unflagged AND ranks_unflagged = n_unflagged) AS ranked_unflagged
    FROM (
      SELECT
        path, probe, metric, unit,
        MIN(kind) AS kind,
        CAST(COUNT(*) AS BIGINT) AS total_all,
        CAST(COUNT(CASE WHEN flag IS NULL THEN 1 END) AS BIGINT) AS total_unflagged,
        CAST(COUNT(flag) AS BIGINT) AS flagged,
        CAST(COUNT(CASE WHEN ok = true AND value IS NOT NULL THEN 1 END) AS BIGINT) AS n_all,
        CAST(COUNT(CASE WHEN ok = true AND value IS NOT NULL AND flag IS NULL THEN 1 END) AS BIGINT) AS n_unflagged,
        MIN(value_count) AS min_count_all,
        MAX(value_count) AS max_count_all,
        CAST(COUNT(CASE WHEN ok = true AND value IS NOT NULL THEN value_rank END) AS BIGINT) AS ranks_all,
        MIN(unflagged_count) AS min_count_unflagged,
        MAX(unflagged_count) AS max_count_unflagged,
        CAST(COUNT(CASE WHEN ok = true AND value IS NOT NULL AND flag IS NULL THEN unflagged_rank END) AS BIGINT) AS ranks_unflagged,
        MAX(CASE WHEN ok = true AND value IS NOT NULL AND 1000 * value_rank < 500 * value_count + 1000 THEN value END) AS p50_all,
        MAX(CASE WHEN ok = true AND value IS NOT NULL AND 1000 * value_rank < 950 * value_count + 1000 THEN value END) AS p95_all,
        MAX(CASE WHEN ok = true AND value IS NOT NULL AND 1000 * value_rank < 990 * value_count + 1000 THEN value END) AS p99_all,
        MAX(CASE WHEN ok = true AND value IS NOT NULL AND 1000 * value_rank < 999 * value_count + 1000 THEN value END) AS p999_all,
        MAX(CASE WHEN ok = true AND value IS NOT NULL THEN value END) AS max_all,
        MAX(CASE WHEN ok = true AND value IS NOT NULL AND flag IS NULL AND 1000 * unflagged_rank < 500 * unflagged_count + 1000 THEN value END) AS p50_unflagged,
        MAX(CASE WHEN ok = true AND value IS NOT NULL AND flag IS NULL AND 1000 * unflagged_rank < 950 * unflagged_count + 1000 THEN value END) AS p95_unflagged,
        MAX(CASE WHEN ok = true AND value IS NOT NULL AND flag IS NULL AND 1000 * unflagged_rank < 990 * unflagged_count + 1000 THEN value END) AS p99_unflagged,
        MAX(CASE WHEN ok = true AND value IS NOT NULL AND flag IS NULL AND 1000 * unflagged_rank < 999 * unflagged_count + 1000 THEN value END) AS p999_unflagged,
        MAX(CASE WHEN ok = true AND value IS NOT NULL AND flag IS NULL THEN value END) AS max_unflagged
      FROM samples
      WHERE run = ?
      GROUP BY path, probe, metric, unit
    ) grouped
  ) checked
  CROSS JOIN (VALUES ('all'), ('unflagged')) AS subsets (subset)
  WHERE subset = 'all' OR flagged > 0
) per_subset
ORDER BY path, probe, metric, subset, unit
