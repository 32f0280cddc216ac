-- Throughput intervals with a boolean "after the burst-credit cliff" column, for analysts.
-- CREATE OR REPLACE VIEW rather than CREATE VIEW IF NOT EXISTS: Trino (Athena) has no
-- IF NOT EXISTS for views, and both engines accept OR REPLACE, so this one text runs on both.
-- The stack creates it as a Glue view (infra/constructs/data-lake.ts), with these columns
-- (test/queries/views.test.ts holds them to DuckDB's DESCRIBE of the view):
-- columns: path string, run string, probe string, kind string, trial int, seq bigint, t_start double, t_end double, value double, unit string, ok boolean, flag string, credit_exhausted boolean
CREATE OR REPLACE VIEW credit_flagged_intervals AS
SELECT
  path,
  run,
  probe,
  kind,
  trial,
  seq,
  t_start,
  t_end,
  value,
  unit,
  ok,
  flag,
  COALESCE(flag = 'credit-exhausted', false) AS credit_exhausted
FROM samples
WHERE metric = 'throughput_bps'
