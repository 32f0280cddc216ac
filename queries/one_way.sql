-- One-way delays per (path, probe, metric, unit) of one run: pingpong's one_way_fwd_us (server
-- receive − client send) and one_way_rev_us (client receive − server send), each on its own end's
-- clock, which its records carry when both ends' clocks are bounded, with clock_error_us the bound
-- on the clocks' disagreement (docs/data.md). Parameter 1: run id. The same text runs on Athena
-- (Trino) and DuckDB.
--
-- n is the successful samples that carry the delays; p50 of each direction is nearest-rank (the
-- value at position ceil(k n / 1000)), each direction ranked by its own window, the row at
-- position r covering the per-mille interval (floor(1000 (r - 1) / n), floor(1000 r / n)].
-- clock_error_us is the largest bound of the group: every figure is within it.
WITH one_way AS (
  SELECT
    path, probe, metric, unit, one_way_fwd_us, one_way_rev_us, clock_error_us,
    row_number() OVER (PARTITION BY path, probe, metric, unit ORDER BY one_way_fwd_us) AS rf,
    row_number() OVER (PARTITION BY path, probe, metric, unit ORDER BY one_way_rev_us) AS rr,
    count(*) OVER (PARTITION BY path, probe, metric, unit) AS n
  FROM samples
  WHERE run = ? AND ok = true AND clock_error_us IS NOT NULL
    AND one_way_fwd_us IS NOT NULL AND one_way_rev_us IS NOT NULL
),
placed AS (
  SELECT
    path, probe, metric, unit, one_way_fwd_us, one_way_rev_us, clock_error_us, n,
    (1000 * (rf - 1) - (1000 * (rf - 1)) % n) / n AS fwd_permille_lo,
    (1000 * rf - (1000 * rf) % n) / n AS fwd_permille_hi,
    (1000 * (rr - 1) - (1000 * (rr - 1)) % n) / n AS rev_permille_lo,
    (1000 * rr - (1000 * rr) % n) / n AS rev_permille_hi
  FROM one_way
)
SELECT
  path, probe, metric, unit,
  CAST(MAX(n) AS BIGINT) AS n,
  MAX(CASE WHEN fwd_permille_lo < 500 AND fwd_permille_hi >= 500 THEN one_way_fwd_us END) AS fwd_p50,
  MAX(CASE WHEN rev_permille_lo < 500 AND rev_permille_hi >= 500 THEN one_way_rev_us END) AS rev_p50,
  MAX(clock_error_us) AS clock_error_us
FROM placed
GROUP BY path, probe, metric, unit
ORDER BY path, probe, metric, unit
