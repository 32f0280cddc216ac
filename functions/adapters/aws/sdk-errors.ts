/**
 * Small helpers shared by the AWS adapters: error-name narrowing.
 */

/** The SDK error name (the service's error code) of an unknown throwable, or undefined. */
export function awsErrorName(e: unknown): string | undefined {
  if (e && typeof e === 'object' && 'name' in e && typeof e.name === 'string') return e.name;
  return undefined;
}

/** True when `e` is an SDK error whose name is one of `names`. */
export function isAwsError(e: unknown, ...names: string[]): boolean {
  const n = awsErrorName(e);
  return n !== undefined && names.includes(n);
}
