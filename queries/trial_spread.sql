-- Trial-to-trial spread: for every (path, probe, metric, unit) of a run measured in two or more
-- trials, the exact nearest-rank p50 and p99 of each trial's successful samples, their lowest and
-- highest, and the spread = 100 * (highest - lowest) / lowest in % (NULL when the lowest is not
-- positive). Seed 002's p99 moved 17 % between trials of 3,000 requests and 4 % at 10,000.
-- Parameter 1: run id. Portable between Athena (Trino) and DuckDB; keep it that way.
-- Percentiles per trial as in queries/percentiles.sql (integer ranks over a running count of
-- distinct values); only trials with at least one successful sample count.
WITH base AS (
  SELECT path, probe, metric, unit, trial, value
  FROM samples
  WHERE run = ?
    AND ok = true
    AND value IS NOT NULL
),
by_value AS (
  SELECT path, probe, metric, unit, trial, value, COUNT(*) AS good
  FROM base
  GROUP BY path, probe, metric, unit, trial, value
),
cumulative AS (
  SELECT
    path, probe, metric, unit, trial, value,
    CAST(SUM(good) OVER (
      PARTITION BY path, probe, metric, unit, trial ORDER BY value ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS BIGINT) AS cum,
    CAST(SUM(good) OVER (PARTITION BY path, probe, metric, unit, trial) AS BIGINT) AS n
  FROM by_value
),
ranks AS (
  SELECT
    path, probe, metric, unit, trial, value, cum, n,
    CAST((500 * n + 999 - ((500 * n + 999) % 1000)) / 1000 AS BIGINT) AS r50,
    CAST((990 * n + 999 - ((990 * n + 999) % 1000)) / 1000 AS BIGINT) AS r99
  FROM cumulative
),
per_trial AS (
  SELECT
    path,
    probe,
    metric,
    unit,
    trial,
    MIN(CASE WHEN cum >= r50 THEN value END) AS p50,
    MIN(CASE WHEN cum >= r99 THEN value END) AS p99
  FROM ranks
  GROUP BY path, probe, metric, unit, trial
)
SELECT
  path,
  probe,
  metric,
  unit,
  CAST(COUNT(*) AS BIGINT) AS trials,
  MIN(p50) AS p50_min,
  MAX(p50) AS p50_max,
  CASE WHEN MIN(p50) > 0 THEN CAST(100 AS DOUBLE) * (MAX(p50) - MIN(p50)) / MIN(p50) END AS p50_spread_pct,
  MIN(p99) AS p99_min,
  MAX(p99) AS p99_max,
  CASE WHEN MIN(p99) > 0 THEN CAST(100 AS DOUBLE) * (MAX(p99) - MIN(p99)) / MIN(p99) END AS p99_spread_pct
FROM per_trial
GROUP BY path, probe, metric, unit
HAVING COUNT(*) >= 2
ORDER BY path, probe, metric, unit
