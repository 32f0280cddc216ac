/** The summary of an AWS run, downloaded from the data bucket: `pathbench report RUN_ID --aws`. */
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { errorMessage } from '../../core/errors.js';
import { checkRunId, keys } from '../../core/keys.js';
import { type RunManifest, readRunFields, runFailureLines } from '../../core/run-manifest.js';
import { parseSummary, type Summary } from '../../core/run-summary.js';
import { S3ObjectStore } from '../../functions/adapters/aws/s3-store.js';
import { AwsCliError } from './aws-errors.js';
import { type ClientsFor, makeClients } from './clients.js';
import { type CommonFlags, resolveStackConfig } from './stack-config.js';

/** The run summary from S3; undefined while it does not exist yet. */
export async function fetchSummary(s3: S3Client, bucket: string, runId: string): Promise<Summary | undefined> {
  try {
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: keys.report(runId, 'json') }));
    const text = await out.Body?.transformToString();
    return text === undefined ? undefined : parseSummary(runId, text);
  } catch (e) {
    if (e instanceof Error && (e.name === 'NoSuchKey' || e.name === 'NotFound')) return undefined;
    throw e;
  }
}

/**
 * What a failed run's manifest in S3 says went wrong after its paths (runFailureLines: the
 * summary's error, routes not restored); none when it has no manifest. Best effort: a manifest
 * that cannot be read (no s3:GetObject, damaged) is one line saying so, never an error.
 */
export async function fetchFailureLines(s3: S3Client, bucket: string, runId: string): Promise<string[]> {
  try {
    const fields = await readRunFields(new S3ObjectStore(s3, bucket), runId);
    return fields ? runFailureLines(fields) : [];
  } catch (e) {
    return [`(the run's manifest could not be read: ${errorMessage(e)})`];
  }
}

/** Why an AWS run has no stored summary, from what its manifest says (undefined: none read). */
export function noSummaryText(
  runId: string,
  bucket: string,
  fields: Pick<RunManifest, 'status' | 'startedAt' | 'endedAt' | 'summaryFailure'> | undefined,
): string {
  const where = `s3://${bucket}`;
  if (!fields)
    return `no summary for run ${runId} in ${where}: no manifest either (no such run, or refused before it began)`;
  if (fields.summaryFailure)
    return (
      `run ${runId} has no summary: its summary step failed at ${fields.summaryFailure.at}: ${fields.summaryFailure.error}. ` +
      `Its samples are stored (measurements ${fields.status}); query them with \`pathbench sql --aws\``
    );
  if (!fields.endedAt)
    return `no summary for run ${runId} in ${where} yet: it started at ${fields.startedAt} and has not ended (\`pathbench status ${runId}\`)`;
  return `run ${runId} ended ${fields.status} at ${fields.endedAt} with no summary in ${where} (\`pathbench status ${runId}\` says how its execution ended)`;
}

/** The summary as text: the run, then each path with its results. */
export function summaryText(s: Summary): string {
  const lines = [`run ${s.runId}: ${s.status}`];
  for (const p of s.paths) {
    lines.push(`  ${p.id} ${p.label}: ${p.status}${p.failedStep ? ` at ${p.failedStep} (${p.error ?? ''})` : ''}`);
    for (const r of p.results) {
      lines.push(`    ${r.probe} ${r.metric} n=${r.n} p50=${r.p50} p95=${r.p95} p99=${r.p99} ${r.unit}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Print the summary of an AWS run (text, or the JSON with `json`). */
export async function reportAws(
  runId: string,
  flags: CommonFlags & { json?: boolean },
  env: Record<string, string | undefined>,
  out: (text: string) => void,
  clientsFor: ClientsFor = makeClients,
): Promise<number> {
  const cfg = await resolveStackConfig(flags, env, clientsFor);
  const s3 = clientsFor(cfg.region).s3;
  const summary = await fetchSummary(s3, cfg.bucket, checkRunId(runId));
  if (!summary) {
    // Why there is none, from the run's manifest (best effort: unreadable is as good as absent).
    const fields = await readRunFields(new S3ObjectStore(s3, cfg.bucket), runId).catch(() => undefined);
    throw new AwsCliError(noSummaryText(runId, cfg.bucket, fields));
  }
  out(flags.json ? `${JSON.stringify(summary, null, 2)}\n` : summaryText(summary));
  return 0;
}
