-- iperf3 throughput per interval, per trial, for one run: one row per successful interval.
-- Parameter 1: run id. Portable between Athena (Trino) and DuckDB.
-- t = seconds from the trial's first interval start to the end of this interval; flag is the
-- interval's flag (e.g. "credit-exhausted" after a burst-credit cliff), NULL when none.
SELECT
  path,
  probe,
  trial,
  metric,
  unit,
  seq,
  (t_end - MIN(t_start) OVER (PARTITION BY path, probe, trial, metric, unit)) / 1000 AS t,
  value,
  flag
FROM samples
WHERE run = ?
  AND kind = 'iperf3'
  AND metric = 'throughput_bps'
  AND ok = true
  AND value IS NOT NULL
ORDER BY path, probe, trial, metric, unit, seq
