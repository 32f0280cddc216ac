-- A mesh run's pair figures: per path (one directed region pair) the nearest-rank p50 latency
-- and p50 throughput, the window bound W / RTT at that latency, and over all pairs of the run
-- the least-squares fit of throughput against 1 / RTT and Pearson r of the two.
-- Parameter 1: run id. The same text runs on Athena (Trino) and DuckDB; keep it that way.
--
-- Latency: rtt_ms (a ping probe) when the pair has it, else connect_rtt_ms (tcp-connect).
-- Throughput: throughput_bps (iperf3 intervals). Only successful samples count (ok, value not
-- null). The rank is ceil(500 * n / 1000) in integer arithmetic, exact on both engines (see
-- percentiles.sql for why it is written this way). W = 6 MiB = 50331648 bits, Linux's default
-- tcp_rmem max (the largest receive window autotuning reaches): one stream carries at most W
-- per RTT. inverse_rtt_hz = 1000 / latency_p50_ms; throughput = slope * inverse_rtt_hz +
-- intercept is the fitted curve (corr, regr_slope and regr_intercept are in both engines). The
-- pair's regions and great-circle distance are in the run's manifest (paths[].mesh), which the
-- summary joins (functions/pipeline/mesh-summary.ts); latency against distance is fitted there.
WITH good AS (
  SELECT path, metric, value
  FROM samples
  WHERE run = ? AND ok = true AND value IS NOT NULL
    AND metric IN ('rtt_ms', 'connect_rtt_ms', 'throughput_bps')
),
grouped AS (
  SELECT path, metric, CAST(COUNT(*) AS BIGINT) AS n, array_sort(array_agg(value)) AS v
  FROM good
  GROUP BY path, metric
),
medians AS (
  SELECT path, metric, n, v[CAST((500 * n + 999 - ((500 * n + 999) % 1000)) / 1000 AS BIGINT)] AS p50
  FROM grouped
),
pairs AS (
  SELECT
    path,
    COALESCE(MAX(CASE WHEN metric = 'rtt_ms' THEN p50 END), MAX(CASE WHEN metric = 'connect_rtt_ms' THEN p50 END))
      AS latency_p50_ms,
    MAX(CASE WHEN metric = 'throughput_bps' THEN p50 END) AS throughput_p50_bps
  FROM medians
  GROUP BY path
),
inverse AS (
  SELECT path, latency_p50_ms, throughput_p50_bps, 1000 / NULLIF(latency_p50_ms, 0) AS inverse_rtt_hz
  FROM pairs
)
SELECT
  path,
  latency_p50_ms,
  throughput_p50_bps,
  50331648 * inverse_rtt_hz AS window_bound_bps,
  corr(throughput_p50_bps, inverse_rtt_hz) OVER () AS r_throughput_inverse_rtt,
  regr_slope(throughput_p50_bps, inverse_rtt_hz) OVER () AS fit_slope,
  regr_intercept(throughput_p50_bps, inverse_rtt_hz) OVER () AS fit_intercept_bps
FROM inverse
ORDER BY path
