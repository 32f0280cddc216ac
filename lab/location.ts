/** Where a lab lives: its namespace prefix and its state directory, from the caller's options. */
import { LabInputError } from './lab-errors.js';
import { defaultStateDir } from './lab-state.js';
import { DEFAULT_PREFIX, PREFIX_RE } from './namespace-names.js';

export interface LabOptions {
  /** Namespace prefix (default "pb-"); tests use their own, e.g. "pb-tl-". */
  prefix?: string;
  /** Where the state file lives (default /run/pathbench-lab/<prefix>). */
  stateDir?: string;
}

/** Prefix and state directory for `opts` (the lifecycle and the adapters resolve them alike). */
export function labLocation(opts: LabOptions = {}): { prefix: string; dir: string } {
  const prefix = opts.prefix ?? DEFAULT_PREFIX;
  if (!PREFIX_RE.test(prefix)) throw new LabInputError(`lab prefix "${prefix}" must match ${PREFIX_RE}`);
  return { prefix, dir: opts.stateDir ?? defaultStateDir(prefix) };
}
