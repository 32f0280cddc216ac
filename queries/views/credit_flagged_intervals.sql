-- Throughput intervals with a boolean "after the burst-credit cliff" column, for analysts.
-- CREATE OR REPLACE VIEW rather than CREATE VIEW IF NOT EXISTS: Trino (Athena) has no
-- IF NOT EXISTS for views, and both engines accept OR REPLACE, so this one text runs on both.
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
