-- The raw samples as written by CollectOutput: one JSON sample record per line under
-- samples/path=<p>/run=<id>/ (the contract, docs/data.md). Same columns as samples.ddl.sql
-- (test/queries/sql.test.ts holds them equal); the queries read the Parquet table instead.
-- ${database} and ${jsonlLocation} are filled in by code; keep one column per line.
CREATE EXTERNAL TABLE IF NOT EXISTS ${database}.samples_jsonl (
  run_id string,
  path_id string,
  probe string,
  kind string,
  trial int,
  seq bigint,
  t_start double,
  t_end double,
  metric string,
  value double,
  unit string,
  ok boolean,
  error string,
  clock string,
  flag string,
  ts_source string,
  host_us double,
  one_way_fwd_us double,
  one_way_rev_us double,
  clock_error_us double
)
PARTITIONED BY (path string, run string)
ROW FORMAT SERDE 'org.openx.data.jsonserde.JsonSerDe'
LOCATION '${jsonlLocation}'
