/**
 * Which doc commands the acceptance suite runs. A case names the command as the doc prints it
 * (`docCommand` fails when the doc no longer has it, so a doc edit cannot silently drop a case)
 * and runs a concrete instance of it (placeholders such as RUN_ID filled in).
 */
import { expect } from 'vitest';
import { ROOT } from '../helpers/repo.js';
import { commandOf, docBlocks } from './docs-blocks.js';

/**
 * The docs whose every ```sh block is run by a case or marked `<!-- not run: REASON -->`
 * (coverage.accept.test.ts): README and every docs/ page.
 */
export const COVERED_DOCS = [
  'README.md',
  'docs/local.md',
  'docs/lab.md',
  'docs/aws.md',
  'docs/probes.md',
  'docs/benchmarks.md',
  'docs/testbed.md',
  'docs/architecture.md',
  'docs/data.md',
] as const;

/**
 * Single commands of a run block that no case here runs, and why (printed by the coverage test):
 * where they run as typed instead, or what covers them.
 */
const BENCH =
  'a benchmark: minutes of full-length runs whose figures are printed, not judged (`npm run bench`); reference.accept.test.ts checks that the part exists (`bench --list`)';

export const NOT_RUN_HERE: Record<string, string> = {
  'npx pathbench run --local --plan plans/lab-seed-002.json':
    '9 paths of ~45 s, over the time budget; test/lab/seed002.lab.test.ts runs this plan through the pipeline',
  'npm ci && npm start':
    'npm ci is what CI (.ci/run) does on the fresh clone before anything; npm start (package.json start script, `run --local`) runs as typed in test/cli/npm-start.lab.test.ts (in a clean copy of the tree, nothing built) and test/cli/npm-start.int.test.ts',
  'npm test': 'the command that runs this suite',
  'npx cdk synth --quiet': 'runs as typed in .ci/run on the fresh clone, before npm test',
  'npx cdk synth -c testbed=seed-000 --quiet':
    'test/infra/app.synth.test.ts runs `npx cdk synth -c testbed=<name> --quiet` for every testbed on a tree without dist/',
  'npx vitest run --project unit test/core': 'a part of npm test, the command that runs this suite',
  'npm run layers': 'a part of npm test, the command that runs this suite',
  'npm run bench -- --only percentiles': BENCH,
  'npm run bench -- --only orchestration': BENCH,
  'npm run bench -- --only collect': BENCH,
  'npm run bench -- --only precision': BENCH,
  'npm run bench -- --only http': BENCH,
  'npm run bench -- --only pingpong': BENCH,
  'npm run bench -- --only mesh': BENCH,
  'npm run bench -- --only regressions': BENCH,
  'npm run bench -- --only regressions --clean-runs 300 --shifted-runs 10 --persistence 2': BENCH,
  'npm run bench -- --only regressions --unpaired': BENCH,
  'npm run bench -- --only schedules': BENCH,
  'npm run bench -- --only lab-mesh': BENCH,
};

/**
 * The command `line` as `doc` prints it (trailing comment removed); fails when the doc lost it.
 * coverage.accept.test.ts finds each call's command in the case files' source.
 */
export function docCommand(doc: string, line: string): string {
  const all = docBlocks(ROOT, doc).flatMap((b) => b.commands);
  expect(all, `${doc} no longer has: ${line}`).toContain(commandOf(line));
  return commandOf(line);
}
