/**
 * Wrong input as a new user types it: a typo in a plan file name, a run id that does not exist,
 * a data directory that is a file, a bad option value. Each ends with one clear line on stderr,
 * nothing on stdout, and exit code 2 (bad input).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanTree } from '../helpers/clean-tree.js';
import { say, sh } from './shell.js';

let tree: ReturnType<typeof cleanTree>;
beforeAll(() => {
  tree = cleanTree('wrong');
  writeFileSync(join(tree.dir, 'not-a-dir'), 'a file\n');
});
afterAll(() => tree?.remove());

const CASES: [command: string, line: RegExp][] = [
  [
    'npx pathbench run --local --plan plans/lab-sed-000.json',
    /^pathbench: no plan file plans\/lab-sed-000\.json; did you mean plans\/lab-seed-000\.json\?$/,
  ],
  ['npx pathbench report --local 20260101T000000Z-abcdef --data not-a-dir', /is a file, not a data directory$/],
  ['npx pathbench run --local --plan plans/local-loopback.json --data not-a-dir', /is a file, not a data directory$/],
  ['npx pathbench trend --data not-a-dir', /is a file, not a data directory$/],
  ['npx pathbench report --local 20260101T000000Z-abcdef', /^pathbench: no data directory /],
  ['npx pathbench compare 20260101T000000Z-abcdef 20260102T000000Z-abcdef', /^pathbench: no data directory /],
  ['npx pathbench trend --runs zero', /^pathbench: --runs: expected a positive integer, got "zero"$/],
  ['npx pathbench plan get no-such-plan', /^pathbench: name: no plan named "no-such-plan"$/],
  ['npx pathbench parse traceroute README.md', /^pathbench parse: /],
  ['npx pathbench lab up --profile seed-005', /^pathbench lab: unknown lab profile "seed-005"/],
  ['npx pathbench bench --only percentile', /^pathbench: no bench part "percentile"; the parts: percentiles, /],
];

describe.concurrent('wrong input: one clear line, exit 2', () => {
  it.each(CASES)('%s', async (command, line) => {
    const r = await sh(command, tree.dir);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(line);
    say(r, lines[0]);
  });
});
