-- Exact values at given ranks, for the 95 % intervals of functions/core/confidence.ts: for every
-- (path, probe, metric, unit) of a run whose successful samples number n, the value at each
-- wanted 1-based rank for that n (ascending order, ties included: exactly sorted[rank - 1]).
-- Portable between Athena (Trino) and DuckDB; keep it that way.
--
-- Parameter 1: run id. Then one (n, rank) pair per row of the VALUES list: as written it asks for
-- one pair (an analyst's question: "the 297th of 300 values"); the summary repeats the row once
-- per pair it needs (functions/pipeline/comparisons.ts), so one query serves every group of a run.
-- The ranks are computed in JavaScript (binomial order statistics) and arrive as integers.
--
-- Successful samples only (ok is true and value is not null), as in queries/percentiles.sql, whose
-- integer-rank method this follows: rows are collapsed to one per distinct value with its count,
-- a running SUM in value order gives each distinct value the last rank it covers, and the value
-- at rank r is the smallest value whose running count reaches r. Counts are CAST to BIGINT
-- because DuckDB's SUM of BIGINT is a 128-bit HUGEINT.
WITH base AS (
  SELECT path, probe, metric, unit, value
  FROM samples
  WHERE run = ?
    AND ok = true
    AND value IS NOT NULL
),
wanted AS (
  SELECT DISTINCT CAST(w.n AS BIGINT) AS n, CAST(w.wanted_rank AS BIGINT) AS wanted_rank
  FROM (VALUES (?, ?)) AS w (n, wanted_rank)
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
)
SELECT
  c.path,
  c.probe,
  c.metric,
  c.unit,
  c.n,
  w.wanted_rank AS at_rank,
  MIN(c.value) AS value
FROM cumulative c
JOIN wanted w ON w.n = c.n AND c.cum >= w.wanted_rank
GROUP BY c.path, c.probe, c.metric, c.unit, c.n, w.wanted_rank
ORDER BY c.path, c.probe, c.metric, c.unit, at_rank
