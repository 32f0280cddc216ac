-- Why samples failed: the most common errors of a run, across all paths. Parameter 1: run id.
-- The summary step runs it only when no sample of any path succeeded, to name the likely cause.
-- Portable between Athena (Trino) and DuckDB.
SELECT
  COALESCE(error, 'unknown') AS error,
  COUNT(*) AS samples,
  COUNT(DISTINCT path) AS paths
FROM samples
WHERE run = ?
  AND (ok IS NULL OR NOT ok)
GROUP BY COALESCE(error, 'unknown')
ORDER BY samples DESC
LIMIT 5
