/**
 * Repository locations for the CDK app, resolved from this file (never the working directory),
 * and the bundles its stacks upload, built when a stack asks for them.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureAgentBundle, ensureEcsWorkerBundle } from '../agent/bundle.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const QUERIES_DIR = path.join(ROOT, 'queries');
export const LOCK_FILE = path.join(ROOT, 'package-lock.json');

const log = (line: string) => process.stderr.write(`pathbench: ${line}\n`);

/**
 * The agent bundle (dist/agent.cjs), built now if missing or stale (agent/bundle.ts): `cdk synth`
 * and `pathbench deploy` need no build step and never ship an agent older than its sources. Called
 * by the stacks that upload it, when they are constructed: importing this module builds nothing.
 */
export function agentBundle(): string {
  return ensureAgentBundle({ log }).path;
}

/** The ECS worker bundle (dist/ecs-worker.cjs, with the agent bundle it runs), built like agentBundle(). */
export function ecsWorkerBundle(): string {
  return ensureEcsWorkerBundle({ log }).path;
}
