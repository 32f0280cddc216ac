-- The client's own part of each round trip per (path, probe, metric, unit) of one run: host_us
-- (docs/data.md), which tcp-connect and pingpong records carry when the kernel timed them
-- (ts_source kernel-sw): app clock minus the kernel's figure. Parameter 1: run id. The same
-- text runs on Athena (Trino) and DuckDB.
--
-- n is the successful samples that carry host_us; p50 and p99 are nearest-rank (the value at
-- position ceil(k n / 1000)): the rows that carry host_us are ranked by a window, and the row at
-- position r covers the per-mille interval (floor(1000 (r - 1) / n), floor(1000 r / n)], which holds
-- k for exactly one r. ts_source is the group's (one per probe: MIN of one value).
WITH host AS (
  SELECT
    path, probe, metric, unit, ts_source, host_us,
    row_number() OVER (PARTITION BY path, probe, metric, unit ORDER BY host_us) AS r,
    count(*) OVER (PARTITION BY path, probe, metric, unit) AS n
  FROM samples
  WHERE run = ? AND ok = true AND host_us IS NOT NULL
),
placed AS (
  SELECT
    path, probe, metric, unit, ts_source, host_us, n,
    (1000 * (r - 1) - (1000 * (r - 1)) % n) / n AS permille_lo,
    (1000 * r - (1000 * r) % n) / n AS permille_hi
  FROM host
)
SELECT
  path, probe, metric, unit,
  CAST(MAX(n) AS BIGINT) AS n,
  MAX(CASE WHEN permille_lo < 500 AND permille_hi >= 500 THEN host_us END) AS p50,
  MAX(CASE WHEN permille_lo < 990 AND permille_hi >= 990 THEN host_us END) AS p99,
  MIN(ts_source) AS ts_source
FROM placed
GROUP BY path, probe, metric, unit
ORDER BY path, probe, metric, unit
