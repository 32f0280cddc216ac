/** A failure the user can fix; printed as one line, exit code 2. */
export class TestbedCliError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TestbedCliError';
  }
}
