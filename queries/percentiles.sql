-- Exact nearest-rank percentiles for one run, one row per (path, probe, metric, unit, subset).
-- Parameter 1: run id. The same text runs on Athena (Trino) and DuckDB; keep it that way.
--
-- subset: 'all' covers every sample of the group; 'unflagged' covers only rows whose flag IS
-- NULL and is emitted only for groups where at least one row carries a flag (e.g. throughput
-- intervals after a burst-credit cliff), so the "before the cliff" figures sit next to the rest.
-- A sample is successful when ok is true and value is not null (a record missing ok counts as
-- failed). n = successful samples, total = all samples of the subset, failed = total - n,
-- loss = failed / total as a DOUBLE fraction (NULL when total = 0). Percentiles and max use
-- successful samples only and are NULL when n = 0.
--
-- Nearest rank: the p-th percentile is the value at 1-based position ceil(p * n) in ascending
-- order. p is an integer per-mille k (500, 950, 990, 999), so the rank ceil(k * n / 1000) is
-- (k * n + 999) div 1000 -- integer arithmetic only, never a double p. Integer division is
-- where the engines differ: Trino's "/" truncates BIGINT / INTEGER, DuckDB's "/" returns a
-- DOUBLE (and DuckDB's CAST of a DOUBLE to BIGINT rounds, it does not floor). Subtracting the
-- remainder first, (k*n + 999) - ((k*n + 999) % 1000), makes the dividend an exact multiple of
-- 1000 (both operands are non-negative, so % agrees too); the quotient is then exact on both
-- engines (a DuckDB double holds integers exactly below 2^53) and the CAST gives both the same
-- BIGINT. Counts are CAST to BIGINT because DuckDB's SUM of BIGINT is a 128-bit HUGEINT.
--
-- How the rank is found: one GROUP BY per (path, probe, metric, unit) collects the group's
-- successful values in ascending order with one ordered aggregate, array_agg(value ORDER BY
-- value) AS v_all -- both engines have it, with 1-based subscripts, and DuckDB sorts the groups on
-- all its threads. The unflagged successful values are also collected, unsorted, and sorted
-- (array_sort, AS v_unflagged) only in a group in which a row carries a flag (CASE WHEN
-- COUNT(flag) > 0): no other group sorts twice. Every figure is a subscript at its integer rank,
-- v[rank], and max = v[n]; ties need no care, v[r] is the value at rank r. The figures are
-- scalars before the two subsets are unfolded (CROSS JOIN with 'all' / 'unflagged'), so no array
-- is copied after the GROUP BY. Subqueries rather than WITH: Trino inlines a WITH query at every
-- reference (a second scan of samples on Athena) and DuckDB materializes it. Memory is the DOUBLE
-- arrays (8 bytes a value, twice for an unflagged value) and the ordered aggregate's sort buffer;
-- docs/benchmarks.md has the times against numpy and the forms this replaced.
SELECT path, probe, kind, metric, unit, subset, n, total - n AS failed, total,
  CASE WHEN total = 0 THEN NULL ELSE CAST(total - n AS DOUBLE) / CAST(total AS DOUBLE) END AS loss,
  CASE WHEN subset = 'all' THEN p50_all ELSE p50_unflagged END AS p50,
  CASE WHEN subset = 'all' THEN p95_all ELSE p95_unflagged END AS p95,
  CASE WHEN subset = 'all' THEN p99_all ELSE p99_unflagged END AS p99,
  CASE WHEN subset = 'all' THEN p999_all ELSE p999_unflagged END AS p999,
  CASE WHEN subset = 'all' THEN max_all ELSE max_unflagged END AS max
FROM (
  SELECT
    figures.*,
    CASE WHEN subset = 'all' THEN n_all ELSE n_unflagged END AS n,
    CASE WHEN subset = 'all' THEN total_all ELSE total_unflagged END AS total,
    subset
  FROM (
    -- CASE WHEN n > 0: with no successful sample the figure is NULL (and Trino rejects index 0).
    SELECT
      path, probe, kind, metric, unit, total_all, total_unflagged, flagged, n_all, n_unflagged,
      CASE WHEN n_all > 0 THEN v_all[r50_all] END AS p50_all,
      CASE WHEN n_all > 0 THEN v_all[r95_all] END AS p95_all,
      CASE WHEN n_all > 0 THEN v_all[r99_all] END AS p99_all,
      CASE WHEN n_all > 0 THEN v_all[r999_all] END AS p999_all,
      CASE WHEN n_unflagged > 0 THEN v_unflagged[r50_unflagged] END AS p50_unflagged,
      CASE WHEN n_unflagged > 0 THEN v_unflagged[r95_unflagged] END AS p95_unflagged,
      CASE WHEN n_unflagged > 0 THEN v_unflagged[r99_unflagged] END AS p99_unflagged,
      CASE WHEN n_unflagged > 0 THEN v_unflagged[r999_unflagged] END AS p999_unflagged,
      CASE WHEN n_all > 0 THEN v_all[n_all] END AS max_all,
      CASE WHEN n_unflagged > 0 THEN v_unflagged[n_unflagged] END AS max_unflagged
    FROM (
      SELECT
        path, probe, kind, metric, unit, total_all, total_unflagged, flagged, n_all, n_unflagged, v_all, v_unflagged,
        CAST((500 * n_all + 999 - ((500 * n_all + 999) % 1000)) / 1000 AS BIGINT) AS r50_all,
        CAST((950 * n_all + 999 - ((950 * n_all + 999) % 1000)) / 1000 AS BIGINT) AS r95_all,
        CAST((990 * n_all + 999 - ((990 * n_all + 999) % 1000)) / 1000 AS BIGINT) AS r99_all,
        CAST((999 * n_all + 999 - ((999 * n_all + 999) % 1000)) / 1000 AS BIGINT) AS r999_all,
        CAST((500 * n_unflagged + 999 - ((500 * n_unflagged + 999) % 1000)) / 1000 AS BIGINT) AS r50_unflagged,
        CAST((950 * n_unflagged + 999 - ((950 * n_unflagged + 999) % 1000)) / 1000 AS BIGINT) AS r95_unflagged,
        CAST((990 * n_unflagged + 999 - ((990 * n_unflagged + 999) % 1000)) / 1000 AS BIGINT) AS r99_unflagged,
        CAST((999 * n_unflagged + 999 - ((999 * n_unflagged + 999) % 1000)) / 1000 AS BIGINT) AS r999_unflagged
      FROM (
        SELECT
          path, probe, metric, unit,
          MIN(kind) AS kind,
          CAST(COUNT(*) AS BIGINT) AS total_all,
          CAST(COUNT(CASE WHEN flag IS NULL THEN 1 END) AS BIGINT) AS total_unflagged,
          CAST(COUNT(flag) AS BIGINT) AS flagged,
          CAST(COUNT(CASE WHEN ok = true AND value IS NOT NULL THEN 1 END) AS BIGINT) AS n_all,
          CAST(COUNT(CASE WHEN ok = true AND value IS NOT NULL AND flag IS NULL THEN 1 END) AS BIGINT) AS n_unflagged,
          array_agg(value ORDER BY value) FILTER (WHERE ok = true AND value IS NOT NULL) AS v_all,
          CASE WHEN COUNT(flag) > 0
            THEN array_sort(array_agg(value) FILTER (WHERE ok = true AND value IS NOT NULL AND flag IS NULL)) END AS v_unflagged
        FROM samples
        WHERE run = ?
        GROUP BY path, probe, metric, unit
      ) grouped
    ) ranked
  ) figures
  CROSS JOIN (VALUES ('all'), ('unflagged')) AS subsets (subset)
  WHERE subset = 'all' OR flagged > 0
) per_subset
ORDER BY path, probe, metric, subset, unit
