-- The values around each percentile, for the 95 % intervals of core/confidence.ts: for
-- every (path, probe, metric, unit) of a run and p50, p95, p99, each distinct value whose ranks
-- reach into the window rank +- half_width around the nearest rank, with the ranks it covers
-- (first_rank .. last_rank, 1-based, ascending order, ties included). The value at any rank r of
-- the window is the row with first_rank <= r <= last_rank: exactly sorted[r - 1].
-- Parameter 1: run id. Portable between Athena (Trino) and DuckDB; keep it that way.
--
-- Successful samples only (ok is true and value is not null), as in queries/percentiles.sql,
-- whose integer-rank method this follows: the nearest rank is ceil(k * n / 1000) for per-mille k,
-- written (k*n + 999 - ((k*n + 999) % 1000)) / 1000 so Trino's and DuckDB's division agree.
-- half_width = ceil(sqrt(9 * n * k * (1000 - k) / 10^6)) + 3 ranks: three binomial standard
-- deviations plus three. The integer product is exact in a DOUBLE (below 2^53 for n up to ~10^10)
-- and IEEE division, sqrt and ceil are correctly rounded on both engines, so the window is the
-- same integer everywhere; core/confidence.ts computes it the same way and its ranks
-- (the exact binomial interval and the spread used for differences) stay inside it
-- (test/core/confidence.test.ts). About 6 * sqrt(n * p * (1 - p)) rows per group and
-- percentile at most: a few hundred for 10,000 samples.
WITH base AS (
  SELECT path, probe, metric, unit, value
  FROM samples
  WHERE run = ?
    AND ok = true
    AND value IS NOT NULL
),
by_value AS (
  SELECT path, probe, metric, unit, value, COUNT(*) AS good
  FROM base
  GROUP BY path, probe, metric, unit, value
),
cumulative AS (
  SELECT
    path, probe, metric, unit, value,
    CAST(good AS BIGINT) AS good,
    CAST(SUM(good) OVER (
      PARTITION BY path, probe, metric, unit ORDER BY value ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS BIGINT) AS cum,
    CAST(SUM(good) OVER (PARTITION BY path, probe, metric, unit) AS BIGINT) AS n
  FROM by_value
),
levels AS (
  SELECT CAST(per_mille AS BIGINT) AS per_mille
  FROM (VALUES (500), (950), (990)) AS l (per_mille)
),
windows AS (
  SELECT
    c.path, c.probe, c.metric, c.unit, c.value, c.good, c.cum, c.n, l.per_mille,
    CAST((l.per_mille * c.n + 999 - ((l.per_mille * c.n + 999) % 1000)) / 1000 AS BIGINT) AS at_rank,
    CAST(CEIL(SQRT(
      CAST(9 * c.n * l.per_mille * (1000 - l.per_mille) AS DOUBLE) / CAST(1000000 AS DOUBLE)
    )) AS BIGINT) + 3 AS half_width
  FROM cumulative c
  CROSS JOIN levels l
)
SELECT
  path,
  probe,
  metric,
  unit,
  per_mille,
  n,
  at_rank,
  half_width,
  value,
  cum - good + 1 AS first_rank,
  cum AS last_rank
FROM windows
WHERE cum >= at_rank - half_width
  AND cum - good + 1 <= at_rank + half_width
ORDER BY path, probe, metric, unit, per_mille, value
