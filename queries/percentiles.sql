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
-- order. p is an integer per-mille k (500, 950, 990, 999), so the rank ceil(k * n / 1000) is
-- (k * n + 999) div 1000 -- integer arithmetic only, never a double p. Integer division is
-- where the engines differ: Trino's "/" truncates BIGINT / INTEGER, DuckDB's "/" returns a
-- DOUBLE (and DuckDB's CAST of a DOUBLE to BIGINT rounds, it does not floor). Subtracting the
-- remainder first, (k*n + 999) - ((k*n + 999) % 1000), makes the dividend an exact multiple of
-- 1000 (both operands are non-negative, so % agrees too); the quotient is then exact on both
-- engines (a DuckDB double holds integers exactly below 2^53) and the CAST gives both the same
-- BIGINT. Counts are CAST to BIGINT because DuckDB's SUM of BIGINT is a 128-bit HUGEINT.
--
-- How the rank is found: instead of numbering every row (ROW_NUMBER over all samples), rows
-- are first collapsed to one row per distinct value with its counts, and a running SUM of the
-- counts in value order gives each distinct value the last rank it covers. The value at rank r
-- is then the smallest value (with a successful sample) whose running count reaches r --
-- exactly sorted[r - 1], ties included. The window sorts distinct values instead of all rows,
-- and one pass serves both subsets, without copying rows for 'unflagged'.
WITH base AS (
  SELECT path, probe, kind, metric, unit, value, ok, flag
  FROM samples
  WHERE run = ?
),
by_value AS (
  SELECT
    path,
    probe,
    metric,
    unit,
    value,
    MIN(kind) AS kind,
    COUNT(*) AS total_all,
    COUNT(CASE WHEN flag IS NULL THEN 1 END) AS total_unflagged,
    COUNT(flag) AS flagged,
    COUNT(CASE WHEN ok = true AND value IS NOT NULL THEN 1 END) AS good_all,
    COUNT(CASE WHEN ok = true AND value IS NOT NULL AND flag IS NULL THEN 1 END) AS good_unflagged
  FROM base
  GROUP BY path, probe, metric, unit, value
),
cumulative AS (
  SELECT
    path, probe, metric, unit, value, kind, total_all, total_unflagged, flagged, good_all, good_unflagged,
    CAST(SUM(good_all) OVER (
      PARTITION BY path, probe, metric, unit ORDER BY value ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS BIGINT) AS cum_all,
    CAST(SUM(good_unflagged) OVER (
      PARTITION BY path, probe, metric, unit ORDER BY value ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS BIGINT) AS cum_unflagged,
    CAST(SUM(good_all) OVER (PARTITION BY path, probe, metric, unit) AS BIGINT) AS n_all,
    CAST(SUM(good_unflagged) OVER (PARTITION BY path, probe, metric, unit) AS BIGINT) AS n_unflagged
  FROM by_value
),
ranks AS (
  SELECT
    path, probe, metric, unit, value, kind, total_all, total_unflagged, flagged, good_all, good_unflagged,
    cum_all, cum_unflagged, n_all, n_unflagged,
    CAST((500 * n_all + 999 - ((500 * n_all + 999) % 1000)) / 1000 AS BIGINT) AS r50_all,
    CAST((950 * n_all + 999 - ((950 * n_all + 999) % 1000)) / 1000 AS BIGINT) AS r95_all,
    CAST((990 * n_all + 999 - ((990 * n_all + 999) % 1000)) / 1000 AS BIGINT) AS r99_all,
    CAST((999 * n_all + 999 - ((999 * n_all + 999) % 1000)) / 1000 AS BIGINT) AS r999_all,
    CAST((500 * n_unflagged + 999 - ((500 * n_unflagged + 999) % 1000)) / 1000 AS BIGINT) AS r50_unflagged,
    CAST((950 * n_unflagged + 999 - ((950 * n_unflagged + 999) % 1000)) / 1000 AS BIGINT) AS r95_unflagged,
    CAST((990 * n_unflagged + 999 - ((990 * n_unflagged + 999) % 1000)) / 1000 AS BIGINT) AS r99_unflagged,
    CAST((999 * n_unflagged + 999 - ((999 * n_unflagged + 999) % 1000)) / 1000 AS BIGINT) AS r999_unflagged
  FROM cumulative
),
per_group AS (
  -- good_* > 0 keeps values that only failed samples had (and the NULL value) out of the
  -- percentiles; with n = 0 no value qualifies and the figure is NULL.
  SELECT
    path,
    probe,
    MIN(kind) AS kind,
    metric,
    unit,
    CAST(SUM(flagged) AS BIGINT) AS flagged,
    MAX(n_all) AS n_all,
    CAST(SUM(total_all) AS BIGINT) AS total_all,
    MAX(n_unflagged) AS n_unflagged,
    CAST(SUM(total_unflagged) AS BIGINT) AS total_unflagged,
    MIN(CASE WHEN good_all > 0 AND cum_all >= r50_all THEN value END) AS p50_all,
    MIN(CASE WHEN good_all > 0 AND cum_all >= r95_all THEN value END) AS p95_all,
    MIN(CASE WHEN good_all > 0 AND cum_all >= r99_all THEN value END) AS p99_all,
    MIN(CASE WHEN good_all > 0 AND cum_all >= r999_all THEN value END) AS p999_all,
    MAX(CASE WHEN good_all > 0 THEN value END) AS max_all,
    MIN(CASE WHEN good_unflagged > 0 AND cum_unflagged >= r50_unflagged THEN value END) AS p50_unflagged,
    MIN(CASE WHEN good_unflagged > 0 AND cum_unflagged >= r95_unflagged THEN value END) AS p95_unflagged,
    MIN(CASE WHEN good_unflagged > 0 AND cum_unflagged >= r99_unflagged THEN value END) AS p99_unflagged,
    MIN(CASE WHEN good_unflagged > 0 AND cum_unflagged >= r999_unflagged THEN value END) AS p999_unflagged,
    MAX(CASE WHEN good_unflagged > 0 THEN value END) AS max_unflagged
  FROM ranks
  GROUP BY path, probe, metric, unit
),
subsets AS (
  SELECT
    path, probe, kind, metric, unit, 'all' AS subset, n_all AS n, total_all AS total,
    p50_all AS p50, p95_all AS p95, p99_all AS p99, p999_all AS p999, max_all AS max_value
  FROM per_group
  UNION ALL
  SELECT
    path, probe, kind, metric, unit, 'unflagged' AS subset, n_unflagged AS n, total_unflagged AS total,
    p50_unflagged, p95_unflagged, p99_unflagged, p999_unflagged, max_unflagged
  FROM per_group
  WHERE flagged > 0
)
SELECT
  path,
  probe,
  kind,
  metric,
  unit,
  subset,
  n,
  total - n AS failed,
  total,
  CASE WHEN total = 0 THEN NULL ELSE CAST(total - n AS DOUBLE) / CAST(total AS DOUBLE) END AS loss,
  p50,
  p95,
  p99,
  p999,
  max_value AS max
FROM subsets
ORDER BY path, probe, metric, subset, unit
