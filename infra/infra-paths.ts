/**
 * Repository locations for the CDK app, resolved from this file (never the working directory).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureAgentBundle } from '../agent/bundle.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const ASL_FILE = path.join(ROOT, 'statemachine', 'measurement.asl.json');
/** The mesh machine, derived from ASL_FILE (statemachine/mesh-definition.ts). */
export const MESH_ASL_FILE = path.join(ROOT, 'statemachine', 'mesh.asl.json');
export const QUERIES_DIR = path.join(ROOT, 'queries');
/**
 * The agent bundle the stacks upload, built now if missing or stale (agent/bundle.ts): `cdk synth`
 * and `pathbench deploy` need no build step and never ship an agent older than its sources.
 */
export const AGENT_BUNDLE = ensureAgentBundle({ log: (l) => process.stderr.write(`pathbench: ${l}\n`) }).path;
export const LOCK_FILE = path.join(ROOT, 'package-lock.json');
