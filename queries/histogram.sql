-- Log-spaced histogram of every group of one run, one row per (path, probe, metric, unit, bin).
-- Parameter 1: run id. The same text runs on Athena (Trino) and DuckDB; keep it that way.
--
-- Bins are fixed fractions of a decade (core/shape.ts, BINS_PER_DECADE = 40): bin i
-- holds the successful values v > 0 with floor(40 * log10(v)) = i, i.e. [10^(i/40), 10^((i+1)/40)),
-- about 5.9 % wide, the same edges for every path. Values <= 0 (and failed samples) are left
-- out; only occupied bins are returned (the summary fills the empty ones in between).
-- Per row: the bin index, its edges lo/hi, its count; and per group (repeated on each of its
-- rows) n = the binned samples and mean = the mean of all successful values of the group
-- (for the "mean lies in a valley" note). Counts are CAST to BIGINT (DuckDB's SUM is HUGEINT).
WITH base AS (
  SELECT path, probe, metric, unit, value
  FROM samples
  WHERE run = ?
    AND ok = true
    AND value IS NOT NULL
),
groups AS (
  SELECT
    path,
    probe,
    metric,
    unit,
    AVG(value) AS mean,
    CAST(COUNT(CASE WHEN value > 0 THEN 1 END) AS BIGINT) AS n
  FROM base
  GROUP BY path, probe, metric, unit
),
binned AS (
  SELECT path, probe, metric, unit, CAST(FLOOR(40 * LOG10(value)) AS BIGINT) AS bin
  FROM base
  WHERE value > 0
),
counted AS (
  SELECT path, probe, metric, unit, bin, CAST(COUNT(*) AS BIGINT) AS count
  FROM binned
  GROUP BY path, probe, metric, unit, bin
)
SELECT
  c.path,
  c.probe,
  c.metric,
  c.unit,
  c.bin,
  POWER(10, CAST(c.bin AS DOUBLE) / 40) AS lo,
  POWER(10, CAST(c.bin + 1 AS DOUBLE) / 40) AS hi,
  c.count,
  g.n,
  g.mean
FROM counted c
JOIN groups g
  ON g.path = c.path AND g.probe = c.probe AND g.metric = c.metric AND g.unit = c.unit
ORDER BY c.path, c.probe, c.metric, c.unit, c.bin
