/**
 * The probe agent bundle, dist/agent.cjs: ONE dependency-free file that runs on the client
 * instance with node built-ins only (agent/agent-main.ts and what it imports, zod included; `.c` and
 * `.h` sources inlined as text so the precision helper compiles on the instance).
 *
 * Every consumer — the local runner, the lab, the CDK app's stacks, the benches, `npm run build` —
 * gets the bundle through ensureAgentBundle() (and the ECS worker's through ensureEcsWorkerBundle())
 * when it needs it: it is built when missing and rebuilt when any of its inputs changed since it
 * was built (a stamp next to it records a hash of each input), so a fresh clone needs no build step
 * and a stale agent never reaches a fleet.
 */
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { z } from 'zod';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const AGENT_BUNDLE = path.join(ROOT, 'dist', 'agent.cjs');
/**
 * The ECS worker (agent/ecs-worker-main.ts): the command of a task client (a client service's ECS
 * task. It bundles the AWS SDK clients it needs (SQS, Step Functions, S3), so unlike the agent it
 * is not built-ins only; it runs the agent bundle beside it.
 */
export const ECS_WORKER_BUNDLE = path.join(ROOT, 'dist', 'ecs-worker.cjs');

interface BundleTarget {
  out: string;
  entry: string;
  /** The agent must run on a bare instance: nothing but node built-ins may stay external. */
  builtinsOnly: boolean;
}
const AGENT: BundleTarget = { out: AGENT_BUNDLE, entry: path.join(ROOT, 'agent', 'agent-main.ts'), builtinsOnly: true };
const ECS_WORKER: BundleTarget = {
  out: ECS_WORKER_BUNDLE,
  entry: path.join(ROOT, 'agent', 'ecs-worker-main.ts'),
  builtinsOnly: false,
};
/** Files that shape the bundle without being imported by it. */
const BUILD_INPUTS = ['agent/bundle.ts', 'package.json'];

/** `<bundle>.inputs.json`: what a bundle was made from, so a stale one is rebuilt. */
const stampSchema = z.object({
  version: z.string(),
  /** Repository-relative path → sha256 of its content, for every file the bundle was made from. */
  inputs: z.record(z.string(), z.string()),
});
type Stamp = z.output<typeof stampSchema>;

const packageJsonSchema = z.object({ version: z.string() });

export interface BundleResult {
  path: string;
  /** Why it was (re)built; undefined when the existing bundle was current. */
  built?: string;
  sizeKiB: number;
  version: string;
}

function sha256(file: string): string | undefined {
  try {
    return createHash('sha256')
      .update(readFileSync(path.join(ROOT, file)))
      .digest('hex');
  } catch {
    return undefined;
  }
}

function agentVersion(): string {
  return packageJsonSchema.parse(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'))).version;
}

/** Why the bundle must be (re)built, or undefined when it is current. */
export function staleReason(target: BundleTarget = AGENT): string | undefined {
  if (!existsSync(target.out)) return 'not built yet';
  let stamp: Stamp;
  try {
    stamp = stampSchema.parse(JSON.parse(readFileSync(`${target.out}.inputs.json`, 'utf8')));
  } catch {
    return 'no record of its inputs';
  }
  for (const [file, hash] of Object.entries(stamp.inputs)) {
    const now = sha256(file);
    if (now === undefined) return `${file} is gone`;
    if (now !== hash) return `${file} changed`;
  }
  return undefined;
}

/**
 * Return the agent bundle, building it first when it is missing or stale (or `force`).
 * Writes atomically (temp file + rename), so a concurrent reader never sees half a bundle.
 */
export function ensureAgentBundle(opts: { force?: boolean; log?: (line: string) => void } = {}): BundleResult {
  return ensureBundle(AGENT, opts);
}

/** The ECS worker bundle (and the agent bundle it runs), built when missing or stale like the agent's. */
export function ensureEcsWorkerBundle(opts: { force?: boolean; log?: (line: string) => void } = {}): BundleResult {
  ensureAgentBundle(opts);
  return ensureBundle(ECS_WORKER, opts);
}

function ensureBundle(target: BundleTarget, opts: { force?: boolean; log?: (line: string) => void }): BundleResult {
  const AGENT_BUNDLE = target.out;
  const STAMP = `${target.out}.inputs.json`;
  const version = agentVersion();
  const reason = opts.force ? 'requested' : staleReason(target);
  if (!reason) return { path: AGENT_BUNDLE, sizeKiB: sizeKiB(statSync(AGENT_BUNDLE).size), version };
  const result = buildSync({
    absWorkingDir: ROOT,
    entryPoints: [target.entry],
    bundle: true,
    write: false,
    outfile: AGENT_BUNDLE,
    platform: 'node',
    target: 'node18',
    format: 'cjs',
    sourcemap: false,
    banner: { js: '#!/usr/bin/env node' },
    define: { __AGENT_VERSION__: JSON.stringify(version) },
    loader: { '.c': 'text', '.h': 'text' },
    // platform "node" leaves node: built-ins external; anything else must be bundled.
    logLevel: 'warning',
    metafile: true,
  });
  // Guard the "built-ins only" promise: fail if anything non-builtin was left external.
  const externals = Object.values(result.metafile.outputs)
    .flatMap((o) => o.imports)
    .filter((i) => i.external && !i.path.startsWith('node:') && !builtinModules.includes(i.path));
  if (target.builtinsOnly && externals.length) {
    throw new Error(`agent bundle imports non-builtin modules: ${externals.map((i) => i.path).join(', ')}`);
  }
  const out = result.outputFiles.find((f) => f.path === AGENT_BUNDLE);
  if (!out) throw new Error(`esbuild produced no bundle for ${path.relative(ROOT, target.entry)}`);
  const inputs: Record<string, string> = {};
  for (const file of [...Object.keys(result.metafile.inputs), ...BUILD_INPUTS]) {
    if (file.includes('node_modules/')) continue; // pinned by package-lock.json
    const hash = sha256(file);
    if (hash) inputs[file] = hash;
  }
  inputs['package-lock.json'] = sha256('package-lock.json') ?? '';
  mkdirSync(path.dirname(AGENT_BUNDLE), { recursive: true });
  const tmp = `${AGENT_BUNDLE}.${process.pid}.tmp`;
  writeFileSync(tmp, out.contents, { mode: 0o755 });
  chmodSync(tmp, 0o755);
  renameSync(tmp, AGENT_BUNDLE);
  writeFileSync(`${STAMP}.${process.pid}.tmp`, `${JSON.stringify({ version, inputs } satisfies Stamp, null, 1)}\n`);
  renameSync(`${STAMP}.${process.pid}.tmp`, STAMP);
  const r = { path: AGENT_BUNDLE, built: reason, sizeKiB: sizeKiB(out.contents.length), version };
  opts.log?.(`built ${path.relative(ROOT, AGENT_BUNDLE)} (${r.sizeKiB} KiB, agent ${version}; ${reason})`);
  return r;
}

function sizeKiB(bytes: number): number {
  return Math.round((bytes / 1024) * 10) / 10;
}
