/**
 * Repository locations for the CDK app, resolved from this file (never the working directory).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const LAMBDA_ENTRY = path.join(ROOT, 'functions', 'lambda.ts');
export const ASL_FILE = path.join(ROOT, 'statemachine', 'measurement.asl.json');
export const QUERIES_DIR = path.join(ROOT, 'queries');
export const AGENT_BUNDLE = path.join(ROOT, 'dist', 'agent.cjs');
export const LOCK_FILE = path.join(ROOT, 'package-lock.json');
