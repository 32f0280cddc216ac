#!/usr/bin/env node
/**
 * `npm run build`: (re)builds the probe agent bundle, dist/agent.cjs, now. Nothing needs this
 * step — every command that uses the bundle rebuilds it when it is missing or stale
 * (agent/bundle.ts) — it is here to build on purpose and to see the size.
 */
import { register } from 'tsx/esm/api';

register();
const { ensureAgentBundle } = await import('../agent/bundle.ts');
try {
  ensureAgentBundle({ force: true, log: (line) => console.log(line) });
} catch (e) {
  // esbuild has already printed the detailed errors.
  console.error(`build: failed: ${e instanceof Error ? e.message.split('\n')[0] : e}`);
  process.exit(1);
}
