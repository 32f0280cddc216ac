/**
 * How the CLI ends. `process.exit` drops whatever stdout or stderr has not yet handed to a pipe
 * (a reader slower than the writer keeps only the first 64–128 KB), so commands end here instead:
 * the exit waits until both streams have flushed what was written before it.
 */

/** Thrown to end the command with `code` from deep inside it; cli-main exits after the flush. */
export class ExitRequest extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
    this.name = 'ExitRequest';
  }
}

/** Input the user can fix (no such run, no data directory, a bad option value): one line, exit 2. */
export class InputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InputError';
  }
}

/** End the command with `code` (after the streams drain): a `never` for synchronous call sites. */
export function exitWith(code: number): never {
  throw new ExitRequest(code);
}

/** Exit with `code` once everything written to stdout and stderr so far has been flushed. */
export function exitAfterFlush(code: number): Promise<never> {
  process.exitCode = code;
  return new Promise<never>(() => {
    let pending = 2;
    const done = () => {
      pending -= 1;
      if (pending === 0) process.exit(code);
    };
    // A write's callback runs once it, and so every write queued before it, is flushed.
    process.stdout.write('', done);
    process.stderr.write('', done);
  });
}
