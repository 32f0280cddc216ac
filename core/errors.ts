/**
 * Typed errors. The ASL's Retry/Catch match on `name`, so names are part of the contract.
 */
export class PathbenchError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The plan is invalid; `problems` lists every problem as "path.to.field: what is wrong". */
export class PlanInvalidError extends PathbenchError {
  constructor(readonly problems: string[]) {
    super(`plan is invalid:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}
export class RunLockedError extends PathbenchError {}
export class RunExistsError extends PathbenchError {}
export class RunAbortedError extends PathbenchError {}
export class PollTimeoutError extends PathbenchError {}
export class ProbeTimeoutError extends PathbenchError {}
export class ProbeCommandFailedError extends PathbenchError {}
export class InstanceCapacityError extends PathbenchError {}
export class RouteSwapError extends PathbenchError {}
/** Routes not put back only because of transient errors (5xx, throttling): the ASL retries RestoreRoutes. */
export class RouteRestoreRetryableError extends PathbenchError {}
export class CollectError extends PathbenchError {}
export class QueryFailedError extends PathbenchError {}
export class ParseError extends PathbenchError {}
export class ConfigError extends PathbenchError {}
/** The run's cost estimate is over its budget and no override was given; nothing was written. */
export class OverBudgetError extends PathbenchError {}
/** A JSON document (a stored manifest, summary, spec …, or a service's answer) is not valid JSON or does not match its schema. */
export class DocumentInvalidError extends PathbenchError {}

/** Narrow an unknown throwable to a message. */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

/** Error codes of a transient refusal (throttling, service unavailable) whatever the HTTP status. */
const TRANSIENT_NAMES = new Set([
  'Throttling',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TooManyRequestsException',
  'InternalError',
  'InternalFailure',
  'ServiceUnavailable',
  'Unavailable',
]);

/** True for an AWS SDK error that a later attempt may not get: a 5xx (server fault) or throttling. */
export function isTransientError(e: unknown): boolean {
  if (!e || typeof e !== 'object') return false;
  const x = e as { name?: unknown; $fault?: unknown; $metadata?: { httpStatusCode?: number } };
  if (typeof x.name === 'string' && TRANSIENT_NAMES.has(x.name)) return true;
  const status = x.$metadata?.httpStatusCode;
  return x.$fault === 'server' || (typeof status === 'number' && status >= 500);
}
