#!/usr/bin/env node
/**
 * `npm run build`: (re)builds the probe agent bundle, dist/agent.cjs, and the ECS worker bundle,
 * dist/ecs-worker.cjs, now. Nothing needs this step — every command and stack that uses a bundle
 * builds it when it is missing or stale (agent/bundle.ts, infra/infra-paths.ts), and CDK bundles
 * each Lambda at synth — it is here to build on purpose and to see the sizes.
 */
import { register } from 'tsx/esm/api';

register();
const { ensureEcsWorkerBundle } = await import('../agent/bundle.ts');
try {
  // Forced, it rebuilds the agent bundle it runs first.
  ensureEcsWorkerBundle({ force: true, log: (line) => console.log(line) });
} catch (e) {
  // esbuild has already printed the detailed errors.
  console.error(`build: failed: ${e instanceof Error ? e.message.split('\n')[0] : e}`);
  process.exit(1);
}
