/** Run a command (argv, no shell) and return its stdout; throws when it exits non-zero. */
import { execFileSync } from 'node:child_process';

export const sh = (...args: string[]) => execFileSync(args[0], args.slice(1), { stdio: 'pipe' }).toString();
