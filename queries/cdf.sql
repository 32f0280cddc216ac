-- CDF points of every group of one run: the exact nearest-rank value at p = 0.01, 0.02 ... 1.00,
-- plus p = 0.999 when the group has n >= 1000 successful samples. One row per (path, probe,
-- metric, unit, p). Parameter 1: run id. The same text runs on Athena (Trino) and DuckDB.
--
-- p is an integer per-mille k (10, 20 ... 1000, 999) and the rank ceil(k * n / 1000) is computed
-- with integer arithmetic exactly as in queries/percentiles.sql (see its header): the remainder
-- is subtracted before dividing, so Trino's truncating and DuckDB's double division agree.
-- The levels are generated from two digit tables (portable; no sequence()/range()). Rows are
-- collapsed to one per distinct value with a running count; the value at rank r is the distinct
-- value whose ranks (cum - c, cum] contain r -- exactly sorted[r - 1], ties included.
-- Only successful samples (ok = true, value not null) count; p is returned as per_mille and
-- as the double k / 1000.
WITH base AS (
  SELECT path, probe, metric, unit, value
  FROM samples
  WHERE run = ?
    AND ok = true
    AND value IS NOT NULL
),
by_value AS (
  SELECT path, probe, metric, unit, value, CAST(COUNT(*) AS BIGINT) AS c
  FROM base
  GROUP BY path, probe, metric, unit, value
),
cumulative AS (
  SELECT
    path, probe, metric, unit, value, c,
    CAST(SUM(c) OVER (
      PARTITION BY path, probe, metric, unit ORDER BY value ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ) AS BIGINT) AS cum,
    CAST(SUM(c) OVER (PARTITION BY path, probe, metric, unit) AS BIGINT) AS n
  FROM by_value
),
digits AS (
  SELECT d FROM (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9)) AS t (d)
),
levels AS (
  SELECT 100 * tens.d + 10 * ones.d + 10 AS k FROM digits tens CROSS JOIN digits ones
  UNION ALL
  SELECT 999 AS k
),
ranks AS (
  SELECT
    g.path, g.probe, g.metric, g.unit, g.n, l.k,
    CAST((l.k * g.n + 999 - ((l.k * g.n + 999) % 1000)) / 1000 AS BIGINT) AS r
  FROM (SELECT DISTINCT path, probe, metric, unit, n FROM cumulative) g
  CROSS JOIN levels l
  WHERE l.k <> 999 OR g.n >= 1000
)
SELECT
  r.path,
  r.probe,
  r.metric,
  r.unit,
  r.n,
  r.k AS per_mille,
  CAST(r.k AS DOUBLE) / 1000 AS p,
  v.value
FROM ranks r
JOIN cumulative v
  ON v.path = r.path AND v.probe = r.probe AND v.metric = r.metric AND v.unit = r.unit
  AND v.cum - v.c < r.r AND r.r <= v.cum
ORDER BY r.path, r.probe, r.metric, r.unit, r.k
