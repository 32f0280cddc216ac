-- The trend over all runs: nearest-rank p50 and p99 per (run, path, probe, metric, unit), the
-- figures the summary step judges (functions/pipeline/regressions.ts), one row per run and group.
-- The same text runs on Athena (Trino) and DuckDB; keep it that way.
-- No parameter: every run (filter the rows, or add a WHERE on path / run for partition pruning).
--
-- Samples do not carry the plan's name: a plan's runs are the run ids of its trend points
-- (trends/plan=<name>/, docs/data.md), which `pathbench trend` uses; this query serves the
-- ad-hoc look across every run. Only successful samples count (ok, value not null), as in
-- percentiles.sql's 'all' subset; `flagged` counts those that carry a flag (burst-credit cliff,
-- at-baseline), which the judge leaves out of every baseline. started: the earliest t_start
-- (epoch ms) of the group, to order runs in time. The rank is ceil(k * n / 1000) in integer
-- arithmetic, exact on both engines (see percentiles.sql for why it is written this way).
WITH base AS (
  SELECT run, path, probe, metric, unit, value, flag, t_start
  FROM samples
  WHERE ok = true AND value IS NOT NULL
),
by_value AS (
  SELECT
    run, path, probe, metric, unit, value,
    COUNT(*) AS good,
    COUNT(flag) AS flagged,
    MIN(t_start) AS first_t
  FROM base
  GROUP BY run, path, probe, metric, unit, value
),
cumulative AS (
  SELECT
    run, path, probe, metric, unit, value, good, flagged, first_t,
    CAST(SUM(good) OVER (
      PARTITION BY run, path, probe, metric, unit ORDER BY value ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS BIGINT) AS cum,
    CAST(SUM(good) OVER (PARTITION BY run, path, probe, metric, unit) AS BIGINT) AS n
  FROM by_value
),
ranks AS (
  SELECT
    run, path, probe, metric, unit, value, flagged, first_t, cum, n,
    CAST((500 * n + 999 - ((500 * n + 999) % 1000)) / 1000 AS BIGINT) AS r50,
    CAST((990 * n + 999 - ((990 * n + 999) % 1000)) / 1000 AS BIGINT) AS r99
  FROM cumulative
)
SELECT
  run,
  path,
  probe,
  metric,
  unit,
  MAX(n) AS n,
  CAST(SUM(flagged) AS BIGINT) AS flagged,
  MIN(first_t) AS started,
  MIN(CASE WHEN cum >= r50 THEN value END) AS p50,
  MIN(CASE WHEN cum >= r99 THEN value END) AS p99
FROM ranks
GROUP BY run, path, probe, metric, unit
ORDER BY path, probe, metric, unit, started, run
