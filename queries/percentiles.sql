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
-- order. p is an integer per-mille k (500, 950, 990, 999), never a double p, and the rank
-- ceil(k n / 1000) is computed in integer arithmetic, (k n + 999 - ((k n + 999) % 1000)) / 1000:
-- the remainder is taken off before dividing, so Trino's truncating and DuckDB's double
-- division give the same exact integer.
--
-- How the value at that rank is found, without a sort of the samples: one pass over the run's
-- columns counts each distinct value of each group (tallies: a hash aggregate; latencies repeat
-- at their resolution, 28,658 distinct values in 1 M sockperf samples); a window over those
-- few rows adds up the counts at or below each value (cum, and cum_unflagged among the
-- unflagged); the value at rank r is the least whose running count reaches r, exactly
-- sorted[r - 1], ties included. Failed rows are tallied under good_value NULL, after every
-- value (NULLS LAST), so they count in total but never in a running count. cdf.sql,
-- trend.sql and trial_spread.sql rank the same way. The Parquet copy holds the
-- records only (parquet_copy.sql): nothing is precomputed at write time, so the copy costs
-- what writing the rows costs (docs/benchmarks.md, collect), and this query reads five of its
-- columns. Counts are CAST to BIGINT because DuckDB's SUM of BIGINT is a 128-bit HUGEINT; one
-- GROUP BY reads samples once (Athena bills each scan).
WITH tallies AS (
  SELECT
    path, probe, metric, unit,
    CASE WHEN ok = true AND value IS NOT NULL THEN value END AS good_value,
    MIN(kind) AS kind,
    COUNT(*) AS tied,
    COUNT(CASE WHEN flag IS NULL THEN 1 END) AS tied_unflagged
  FROM samples
  WHERE run = ?
  GROUP BY path, probe, metric, unit, CASE WHEN ok = true AND value IS NOT NULL THEN value END
),
cumulative AS (
  SELECT
    path, probe, metric, unit, kind, good_value, tied, tied_unflagged,
    CAST(SUM(CASE WHEN good_value IS NOT NULL THEN tied ELSE 0 END) OVER (
      PARTITION BY path, probe, metric, unit ORDER BY good_value ASC NULLS LAST ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS BIGINT) AS cum,
    CAST(SUM(CASE WHEN good_value IS NOT NULL THEN tied_unflagged ELSE 0 END) OVER (
      PARTITION BY path, probe, metric, unit ORDER BY good_value ASC NULLS LAST ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS BIGINT) AS cum_unflagged,
    CAST(SUM(CASE WHEN good_value IS NOT NULL THEN tied ELSE 0 END) OVER (PARTITION BY path, probe, metric, unit) AS BIGINT) AS n_all,
    CAST(SUM(CASE WHEN good_value IS NOT NULL THEN tied_unflagged ELSE 0 END) OVER (PARTITION BY path, probe, metric, unit) AS BIGINT) AS n_unflagged
  FROM tallies
),
ranked AS (
  SELECT
    cumulative.*,
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
grouped AS (
  SELECT
    path, probe, metric, unit,
    MIN(kind) AS kind,
    CAST(SUM(tied) AS BIGINT) AS total_all,
    CAST(SUM(tied_unflagged) AS BIGINT) AS total_unflagged,
    MAX(n_all) AS n_all,
    MAX(n_unflagged) AS n_unflagged,
    MIN(CASE WHEN good_value IS NOT NULL AND cum >= r50_all THEN good_value END) AS p50_all,
    MIN(CASE WHEN good_value IS NOT NULL AND cum >= r95_all THEN good_value END) AS p95_all,
    MIN(CASE WHEN good_value IS NOT NULL AND cum >= r99_all THEN good_value END) AS p99_all,
    MIN(CASE WHEN good_value IS NOT NULL AND cum >= r999_all THEN good_value END) AS p999_all,
    MAX(good_value) AS max_all,
    MIN(CASE WHEN tied_unflagged > 0 AND good_value IS NOT NULL AND cum_unflagged >= r50_unflagged THEN good_value END) AS p50_unflagged,
    MIN(CASE WHEN tied_unflagged > 0 AND good_value IS NOT NULL AND cum_unflagged >= r95_unflagged THEN good_value END) AS p95_unflagged,
    MIN(CASE WHEN tied_unflagged > 0 AND good_value IS NOT NULL AND cum_unflagged >= r99_unflagged THEN good_value END) AS p99_unflagged,
    MIN(CASE WHEN tied_unflagged > 0 AND good_value IS NOT NULL AND cum_unflagged >= r999_unflagged THEN good_value END) AS p999_unflagged,
    MAX(CASE WHEN tied_unflagged > 0 THEN good_value END) AS max_unflagged
  FROM ranked
  GROUP BY path, probe, metric, unit
)
SELECT path, probe, kind, metric, unit, subset, n, total - n AS failed, total,
  CASE WHEN total = 0 THEN NULL ELSE CAST(total - n AS DOUBLE) / CAST(total AS DOUBLE) END AS loss,
  CASE WHEN subset = 'all' THEN p50_all ELSE p50_unflagged END AS p50,
  CASE WHEN subset = 'all' THEN p95_all ELSE p95_unflagged END AS p95,
  CASE WHEN subset = 'all' THEN p99_all ELSE p99_unflagged END AS p99,
  CASE WHEN subset = 'all' THEN p999_all ELSE p999_unflagged END AS p999,
  CASE WHEN subset = 'all' THEN max_all ELSE max_unflagged END AS max
FROM (
  SELECT grouped.*, subset,
    CASE WHEN subset = 'all' THEN n_all ELSE n_unflagged END AS n,
    CASE WHEN subset = 'all' THEN total_all ELSE total_unflagged END AS total
  FROM grouped
  CROSS JOIN (VALUES ('all'), ('unflagged')) AS subsets (subset)
  WHERE subset = 'all' OR total_all > total_unflagged
) per_subset
ORDER BY path, probe, metric, subset, unit
