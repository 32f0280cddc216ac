/**
 * Lab errors. Names end in Error (the ASL and the CLI match on error names); the CLI maps
 * LabUnavailableError to exit 2.
 */
import { PathbenchError } from '../core/errors.js';

/** The lab cannot run here (not root, no `ip`, network namespaces unusable). */
export class LabUnavailableError extends PathbenchError {}
/** A command that builds or tears down the lab failed. */
export class LabCommandError extends PathbenchError {}
/** The lab is not up (no state file) or does not match what the caller expects. */
export class LabStateError extends PathbenchError {}
/** Bad lab input (profile, prefix, route target). */
export class LabInputError extends PathbenchError {}
