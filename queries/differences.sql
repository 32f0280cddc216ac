-- Differences between the paths of a run, per percentile: for every ordered pair of paths
-- (path, baseline; a path is also paired with itself) that measured the same probe, metric and
-- unit, the exact nearest-rank p50, p95 and p99 of both, path - baseline, and that difference in
-- % of the baseline (NULL where the baseline's figure is 0). Pick the pairs you want with WHERE.
-- Parameter 1: run id. Portable between Athena (Trino) and DuckDB; keep it that way.
--
-- The point figures only: their 95 % intervals and verdicts are computed by the summary
-- (functions/pipeline/comparisons.ts, summary.json "comparisons"), which reports the same diff
-- and pct. Percentiles as in queries/percentiles.sql (subset 'all', successful samples only):
-- rank = ceil(k * n / 1000) for per-mille k in integer arithmetic, (k*n + 999 - ((k*n + 999) % 1000))
-- / 1000, over a running count of distinct values. pct = 100 * diff / baseline, in that order,
-- in DOUBLE arithmetic (the same rounding as JavaScript's).
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
    CAST(SUM(good) OVER (
      PARTITION BY path, probe, metric, unit ORDER BY value ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS BIGINT) AS cum,
    CAST(SUM(good) OVER (PARTITION BY path, probe, metric, unit) AS BIGINT) AS n
  FROM by_value
),
ranks AS (
  SELECT
    path, probe, metric, unit, value, cum, n,
    CAST((500 * n + 999 - ((500 * n + 999) % 1000)) / 1000 AS BIGINT) AS r50,
    CAST((950 * n + 999 - ((950 * n + 999) % 1000)) / 1000 AS BIGINT) AS r95,
    CAST((990 * n + 999 - ((990 * n + 999) % 1000)) / 1000 AS BIGINT) AS r99
  FROM cumulative
),
per_group AS (
  SELECT
    path,
    probe,
    metric,
    unit,
    MAX(n) AS n,
    MIN(CASE WHEN cum >= r50 THEN value END) AS p50,
    MIN(CASE WHEN cum >= r95 THEN value END) AS p95,
    MIN(CASE WHEN cum >= r99 THEN value END) AS p99
  FROM ranks
  GROUP BY path, probe, metric, unit
)
SELECT
  a.path,
  b.path AS baseline,
  a.probe,
  a.metric,
  a.unit,
  a.n,
  b.n AS baseline_n,
  a.p50,
  b.p50 AS baseline_p50,
  a.p50 - b.p50 AS p50_diff,
  CASE WHEN b.p50 = 0 THEN NULL ELSE CAST(100 AS DOUBLE) * (a.p50 - b.p50) / b.p50 END AS p50_pct,
  a.p95,
  b.p95 AS baseline_p95,
  a.p95 - b.p95 AS p95_diff,
  CASE WHEN b.p95 = 0 THEN NULL ELSE CAST(100 AS DOUBLE) * (a.p95 - b.p95) / b.p95 END AS p95_pct,
  a.p99,
  b.p99 AS baseline_p99,
  a.p99 - b.p99 AS p99_diff,
  CASE WHEN b.p99 = 0 THEN NULL ELSE CAST(100 AS DOUBLE) * (a.p99 - b.p99) / b.p99 END AS p99_pct
FROM per_group a
JOIN per_group b ON a.probe = b.probe AND a.metric = b.metric AND a.unit = b.unit
ORDER BY a.path, b.path, a.probe, a.metric, a.unit
