/**
 * How the AWS commands fail: a problem the user can fix (credentials, region, missing stack, bad
 * plan) is one line on stderr and exit code 2.
 */
import { errorMessage } from '../../core/errors.js';
import { printable } from '../../core/printable.js';
import { ExitRequest, exitAfterFlush } from '../exit.js';

const EXIT_USAGE = 2;

/** A problem the user can fix (credentials, region, missing stack, bad plan): one line, exit 2. */
export class AwsCliError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AwsCliError';
  }
}

/** True for the SDK's "no credentials" and "no region" failures. */
export function isCredentialsOrRegionError(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  return (
    e.name === 'CredentialsProviderError' ||
    e.name === 'ExpiredTokenException' ||
    e.name === 'UnrecognizedClientException' ||
    /could not load credentials|region is missing|unable to resolve region/i.test(e.message)
  );
}

/** Turn SDK failures into one clear line. */
export function explainAwsError(e: unknown): AwsCliError {
  if (e instanceof AwsCliError) return e;
  if (isCredentialsOrRegionError(e)) {
    const what = /region/i.test(errorMessage(e)) ? 'no AWS region' : 'no usable AWS credentials';
    return new AwsCliError(
      `${what}: ${errorMessage(e).split('\n')[0]} (set AWS_PROFILE / AWS_REGION or pass --region)`,
      { cause: e },
    );
  }
  return new AwsCliError(errorMessage(e).split('\n')[0], { cause: e });
}

/** Run an action and exit with its code; any failure becomes one line on stderr and exit 2. */
export async function guarded(fn: () => Promise<number>): Promise<never> {
  let code: number;
  try {
    code = await fn();
  } catch (e) {
    if (e instanceof ExitRequest) throw e;
    const err = explainAwsError(e);
    process.stderr.write(`pathbench: ${printable(err.message)}\n`);
    code = EXIT_USAGE;
  }
  return exitAfterFlush(code);
}
