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
-- How the rank is found: one pass groups the run's rows by (path, probe, metric, unit) and by
-- whether the row carries a flag, so every row lands in exactly one part; per part the
-- successful values are collected in ascending order by one ordered aggregate,
-- array_agg(value ORDER BY value) -- both engines have it, with 1-based subscripts. A second
-- GROUP BY (over a handful of rows) puts a group's parts side by side (arbitrary() of the one
-- part each FILTER selects; GROUP BY treats a NULL key as GROUP BY did before). A group without
-- flags has one part, already sorted: it is both the 'all' and the unflagged array. Only a group
-- with both parts sorts again, its parts' arrays concatenated (array_sort), for its 'all' row:
-- each successful value is sorted once, twice in a group that carries a flag. Every figure is a
-- subscript at its integer rank: sorted[rank], max = sorted[n]; ties need no care, sorted[r] is
-- the value at rank r. Subqueries rather than WITH: DuckDB materializes each CTE, which would
-- copy the arrays at every step. Memory is the DOUBLE arrays (8 bytes a value) and the ordered
-- aggregate's sort buffer; docs/benchmarks.md has the times against numpy and the forms this
-- replaced (array_sort(array_agg(value)) per group and per subset).
SELECT path, probe, kind, metric, unit, subset, n, total - n AS failed, total,
  CASE WHEN total = 0 THEN NULL ELSE CAST(total - n AS DOUBLE) / CAST(total AS DOUBLE) END AS loss,
  -- CASE WHEN n > 0: with no successful sample the figure is NULL (and Trino rejects index 0).
  CASE WHEN n > 0 THEN sorted[r50] END AS p50,
  CASE WHEN n > 0 THEN sorted[r95] END AS p95,
  CASE WHEN n > 0 THEN sorted[r99] END AS p99,
  CASE WHEN n > 0 THEN sorted[r999] END AS p999,
  CASE WHEN n > 0 THEN sorted[n] END AS max
FROM (
  SELECT
    path, probe, kind, metric, unit, subset, n, total, sorted,
    CAST((500 * n + 999 - ((500 * n + 999) % 1000)) / 1000 AS BIGINT) AS r50,
    CAST((950 * n + 999 - ((950 * n + 999) % 1000)) / 1000 AS BIGINT) AS r95,
    CAST((990 * n + 999 - ((990 * n + 999) % 1000)) / 1000 AS BIGINT) AS r99,
    CAST((999 * n + 999 - ((999 * n + 999) % 1000)) / 1000 AS BIGINT) AS r999
  FROM (
    -- one 'all' row per group, and an 'unflagged' row where the group has a flag
    SELECT
      path, probe, kind, metric, unit, subset,
      CASE WHEN subset = 'all' THEN n_all ELSE n_unflagged END AS n,
      CASE WHEN subset = 'all' THEN total_all ELSE total_unflagged END AS total,
      -- a part with no successful value has a NULL array (and "||" with NULL differs between the engines)
      CASE
        WHEN subset = 'unflagged' OR n_all = n_unflagged THEN v_unflagged
        WHEN n_unflagged = 0 THEN v_flagged
        ELSE array_sort(v_unflagged || v_flagged)
      END AS sorted
    FROM (
      SELECT
        path, probe, metric, unit,
        MIN(kind) AS kind,
        CAST(SUM(total) AS BIGINT) AS total_all,
        CAST(SUM(CASE WHEN unflagged THEN total ELSE 0 END) AS BIGINT) AS total_unflagged,
        CAST(SUM(CASE WHEN unflagged THEN 0 ELSE total END) AS BIGINT) AS flagged,
        CAST(SUM(n) AS BIGINT) AS n_all,
        CAST(SUM(CASE WHEN unflagged THEN n ELSE 0 END) AS BIGINT) AS n_unflagged,
        arbitrary(v) FILTER (WHERE unflagged) AS v_unflagged,
        arbitrary(v) FILTER (WHERE NOT unflagged) AS v_flagged
      FROM (
        SELECT
          path, probe, metric, unit, unflagged,
          MIN(kind) AS kind,
          CAST(COUNT(*) AS BIGINT) AS total,
          CAST(COUNT(CASE WHEN ok = true AND value IS NOT NULL THEN 1 END) AS BIGINT) AS n,
          array_agg(value ORDER BY value) FILTER (WHERE ok = true AND value IS NOT NULL) AS v
        FROM (
          SELECT path, probe, metric, unit, kind, value, ok, flag IS NULL AS unflagged
          FROM samples
          WHERE run = ?
        ) run_rows
        GROUP BY path, probe, metric, unit, unflagged
      ) parts
      GROUP BY path, probe, metric, unit
    ) grouped
    CROSS JOIN (VALUES ('all'), ('unflagged')) AS subsets (subset)
    WHERE subset = 'all' OR flagged > 0
  ) per_subset
) ranked
ORDER BY path, probe, metric, subset, unit
