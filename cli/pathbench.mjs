#!/usr/bin/env node
// The `pathbench` command: TypeScript sources run through tsx, so there is no build step for
// the CLI itself (the agent bundle is built by `npm run build`).
import { register } from 'tsx/esm/api';

register();
await import('./cli-main.ts');
