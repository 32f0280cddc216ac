/** Running the CDK app (cdk.json in the repository root) for `deploy` and `destroy`. */
import { spawn } from 'node:child_process';
import { ROOT } from './cli-root.js';

/** Runs `npx cdk …` in the repo root; resolves with the exit code. */
export type CdkRunner = (args: string[]) => Promise<number>;

/** `npx cdk <args>` in the repository root, output on this terminal; resolves with cdk's exit code. */
export const runCdk: CdkRunner = (args) =>
  new Promise((resolve, reject) => {
    const child = spawn('npx', ['cdk', ...args], { cwd: ROOT, stdio: 'inherit' });
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? 1));
  });
