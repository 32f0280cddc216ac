/**
 * The Logger implementations (the interface is ports.ts's Logger): one JSON object a line — on
 * stdout with a time for Lambda, where CloudWatch Logs Insights filters on the fields; on stderr
 * for local runs — and a silent one.
 */
import type { Logger } from './ports.js';

export interface JsonLoggerOptions {
  /** Add an ISO `time` field after the message. Default true. */
  time?: boolean;
  /** Drop info lines; warnings and errors still go out. Default false. */
  quiet?: boolean;
}

/** One JSON line per log event: {level, message, time?, ...data}, written through `write`. */
export function jsonLogger(
  write: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
  opts: JsonLoggerOptions = {},
): Logger {
  const time = opts.time ?? true;
  const emit = (level: string, message: string, data?: Record<string, unknown>) =>
    write(JSON.stringify({ level, message, ...(time ? { time: new Date().toISOString() } : {}), ...data }));
  return {
    info: (m, d) => (opts.quiet ? undefined : emit('info', m, d)),
    warn: (m, d) => emit('warn', m, d),
    error: (m, d) => emit('error', m, d),
  };
}

/** The local runs' logger: one JSON object a line on stderr, without a time; quiet drops info lines. */
export function stderrLogger(quiet = false): Logger {
  return jsonLogger((l) => process.stderr.write(`${l}\n`), { time: false, quiet });
}

/** Logs nothing (tests, benches). */
export const silentLogger: Logger = { info: () => {}, warn: () => {}, error: () => {} };
