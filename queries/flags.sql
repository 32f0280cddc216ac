-- Flags raised on a run's intervals (e.g. "credit-exhausted" after a burst-credit cliff):
-- for each path, probe, trial and flag, the first interval that carried it and how many did.
-- Parameter 1: run id. Portable between Athena (Trino) and DuckDB.
SELECT
  path,
  probe,
  trial,
  flag,
  MIN(seq) AS first_seq,
  COUNT(*) AS intervals
FROM samples
WHERE run = ?
  AND flag IS NOT NULL
GROUP BY path, probe, trial, flag
ORDER BY path, probe, trial, flag
