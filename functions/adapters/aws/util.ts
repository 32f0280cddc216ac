/**
 * Small helpers shared by the AWS adapters: error-name narrowing, JSON logging.
 */
import type { Logger } from '../../ports.js';

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

/** One JSON line per log event, so CloudWatch Logs Insights can filter on fields. */
export function jsonLogger(write: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Logger {
  const emit = (level: string, message: string, data?: Record<string, unknown>) =>
    write(JSON.stringify({ level, message, time: new Date().toISOString(), ...data }));
  return {
    info: (m, d) => emit('info', m, d),
    warn: (m, d) => emit('warn', m, d),
    error: (m, d) => emit('error', m, d),
  };
}
