#!/usr/bin/env node
/**
 * Bundles the probe agent (agent/main.ts) into ONE dependency-free file,
 * dist/agent.cjs, that runs on the client instance with node built-ins only. The agent
 * version comes from package.json; `.c` and `.h` sources are imported as text so the precision
 * helper can compile its C code on the instance.
 */
import { chmodSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = path.join(ROOT, 'dist', 'agent.cjs');

const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

try {
  const result = await build({
    entryPoints: [path.join(ROOT, 'agent', 'main.ts')],
    outfile: OUT,
    bundle: true,
    platform: 'node',
    target: 'node18',
    format: 'cjs',
    sourcemap: false,
    banner: { js: '#!/usr/bin/env node' },
    define: { __AGENT_VERSION__: JSON.stringify(pkg.version) },
    loader: { '.c': 'text', '.h': 'text' },
    // platform "node" already leaves node: built-ins external; anything else must be bundled.
    logLevel: 'warning',
    metafile: true,
  });
  // Guard the "built-ins only" promise: fail if anything non-builtin was left external.
  const externals = Object.values(result.metafile.outputs)
    .flatMap((o) => o.imports)
    .filter((i) => i.external && !i.path.startsWith('node:') && !isBuiltin(i.path));
  if (externals.length) {
    console.error(`build: agent bundle imports non-builtin modules: ${externals.map((i) => i.path).join(', ')}`);
    process.exit(1);
  }
  chmodSync(OUT, 0o755);
  const size = statSync(OUT).size;
  console.log(`built ${path.relative(ROOT, OUT)} (${(size / 1024).toFixed(1)} KiB, agent ${pkg.version})`);
} catch (e) {
  // esbuild has already printed the detailed errors.
  console.error(`build: failed: ${e instanceof Error ? e.message.split('\n')[0] : e}`);
  process.exit(1);
}

function isBuiltin(name) {
  return builtinModules.includes(name);
}
