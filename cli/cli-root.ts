/** Where the CLI finds the repository: plans/, cdk.json, the saved outputs under .pathbench/. */
import { fileURLToPath } from 'node:url';

/** The repository root (cdk runs here; default plan and outputs files are relative to it). */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));
