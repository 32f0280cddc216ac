-- What each run was: one JSON record per run at tables/runs/<run id>.json, written by
-- SummarizeRun from the run's manifest and plan (functions/pipeline/run-tables.ts). Times are
-- ISO-8601 strings (from_iso8601_timestamp in Athena, CAST(… AS TIMESTAMP) in DuckDB).
-- ${database} and ${location} are filled in by code; keep one column per line.
CREATE EXTERNAL TABLE IF NOT EXISTS ${database}.runs (
  run_id string,
  plan_name string,
  driver string,
  started_by string,
  status string,
  started_at string,
  ended_at string,
  paths int,
  failed_paths int,
  instance_types string,
  regions string,
  agent_version string,
  estimate_usd double
)
ROW FORMAT SERDE 'org.openx.data.jsonserde.JsonSerDe'
LOCATION '${location}'
