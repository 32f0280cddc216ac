-- The samples table the queries read: the Parquet copy of each (path, run) partition's JSONL
-- (queries/parquet_copy.sql, written by the engine), one row per sample record (SampleRecord in
-- core/model.ts, docs/data.md). The raw JSONL has the same columns in samples_jsonl
-- (samples_jsonl.ddl.sql).
-- Single source of truth for the columns: infra builds both Glue tables from this file, the
-- Parquet copy follows its column order, and the local DuckDB views read their column
-- types from it (queries/sql.ts samplesColumns()).
-- Both tables have the same columns: the Parquet copy is the records only (parquet_copy.sql).
-- ${database} and ${location} are filled in by code; keep one column per line.
CREATE EXTERNAL TABLE IF NOT EXISTS ${database}.samples (
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
STORED AS PARQUET
LOCATION '${location}'
