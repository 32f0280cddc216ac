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
export class CollectError extends PathbenchError {}
export class QueryFailedError extends PathbenchError {}
export class ParseError extends PathbenchError {}
export class ConfigError extends PathbenchError {}

/** Narrow an unknown throwable to a message. */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
