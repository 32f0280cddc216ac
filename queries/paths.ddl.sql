-- What each path of each run was: one JSON record per path at tables/paths/<run id>.jsonl,
-- written by SummarizeRun from the run's manifest and plan (functions/pipeline/run-tables.ts).
-- Join with samples on path_id = samples.path AND run_id = samples.run.
-- ${database} and ${location} are filled in by code; keep one column per line.
CREATE EXTERNAL TABLE IF NOT EXISTS ${database}.paths (
  run_id string,
  path_id string,
  label string,
  status string,
  failed_step string,
  error string,
  method string,
  route_targets string,
  client_instance string,
  client_kind string,
  instance_type string,
  client_region string,
  client_az_id string,
  target_host string,
  target_region string,
  target_az_id string,
  from_region string,
  to_region string,
  distance_km double,
  started_at string,
  ended_at string
)
ROW FORMAT SERDE 'org.openx.data.jsonserde.JsonSerDe'
LOCATION '${location}'
