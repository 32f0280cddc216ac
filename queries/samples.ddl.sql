-- The samples table: one normalized measurement per line (SampleRecord in functions/core/model.ts, docs/data.md).
-- Single source of truth for the columns: infra builds the Glue table from this file and the
-- local DuckDB view reads its column types from it (functions/sql.ts samplesColumns()).
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
  flag string
)
PARTITIONED BY (path string, run string)
ROW FORMAT SERDE 'org.openx.data.jsonserde.JsonSerDe'
LOCATION '${location}'
