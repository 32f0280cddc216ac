/** The repository root and test/fixtures/, resolved from this file (never the working directory). */
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const FIXTURES = fileURLToPath(new URL('../fixtures', import.meta.url));
