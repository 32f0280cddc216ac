/**
 * The CDK app as a fresh clone runs it: in a copy of the tree with no dist/ and no cdk.out/,
 * `npx cdk synth -c testbed=<name>` for every testbed builds each bundle its stacks upload (the
 * agent, the ECS worker, each Lambda's) and succeeds; and a CLI command that imports infra/ builds
 * nothing (infra/infra-paths.ts builds bundles only when a stack asks), so its error stays one line.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A copy of the working tree as git sees it (tracked and new files, nothing ignored), node_modules linked. */
function cleanTree(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'pb-clean-'));
  made.push(dir);
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  expect(listed.status, listed.stderr).toBe(0);
  for (const file of listed.stdout.split('\0')) {
    if (file === '' || file === 'node_modules' || !existsSync(path.join(ROOT, file))) continue;
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    cpSync(path.join(ROOT, file), path.join(dir, file));
  }
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  expect(existsSync(path.join(dir, 'dist'))).toBe(false);
  expect(existsSync(path.join(dir, 'cdk.out'))).toBe(false);
  return dir;
}

/** What a command prints, less the AWS SDK's notice about this Node version. */
const ours = (stderr: string) =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('pathbench'))
    .join('\n');

const TESTBEDS: { testbed: string; context: string[]; bundles: string[]; stacks: string[] }[] = [
  { testbed: 'seed-000', context: [], bundles: ['agent.cjs'], stacks: ['PathbenchTestbedClient'] },
  {
    testbed: 'seed-002',
    context: [],
    bundles: ['agent.cjs', 'ecs-worker.cjs'],
    stacks: ['PathbenchTestbed002'],
  },
  {
    testbed: 'seed-004',
    context: [],
    bundles: ['agent.cjs'],
    stacks: ['PathbenchTestbed004Tokyo', 'PathbenchTestbed004Osaka'],
  },
  {
    testbed: 'mesh',
    context: ['-c', 'meshRegions=us-east-1,eu-west-1'],
    bundles: ['agent.cjs'],
    stacks: ['PathbenchMesh-us-east-1', 'PathbenchMesh-eu-west-1'],
  },
];

describe('the CDK app on a clean tree', () => {
  for (const { testbed, context, bundles, stacks } of TESTBEDS) {
    it(`npx cdk synth -c testbed=${testbed} builds the bundles it needs (${bundles.join(', ')}) and succeeds`, () => {
      const tree = cleanTree();
      // seed-000 as the README types it (every stack, every bundle); the others name their own
      // stacks (-e), so the pipeline's Lambda bundles, built the same way each time, are not
      // rebuilt per testbed. Each app still synthesizes whole, and builds what its stacks ask for.
      const only = testbed === 'seed-000' ? [] : ['-e', ...stacks];
      const r = spawnSync('npx', ['cdk', 'synth', ...only, '-c', `testbed=${testbed}`, ...context, '--quiet'], {
        cwd: tree,
        encoding: 'utf8',
        env: { ...process.env, CI: 'true' },
        timeout: 540_000,
      });
      expect(r.status, r.stderr.slice(-4000)).toBe(0);
      for (const b of bundles) {
        expect(existsSync(path.join(tree, 'dist', b)), b).toBe(true);
        expect(ours(r.stderr)).toContain(`pathbench: built dist/${b}`);
      }
      const manifest = JSON.parse(readFileSync(path.join(tree, 'cdk.out', 'manifest.json'), 'utf8')) as {
        artifacts: Record<string, { type: string }>;
      };
      const synthesized = Object.entries(manifest.artifacts)
        .filter(([, a]) => a.type === 'aws:cloudformation:stack')
        .map(([id]) => id);
      expect(synthesized).toContain('Pathbench');
      for (const s of stacks) expect(synthesized).toContain(s);
      expect(synthesized.length, synthesized.join(', ')).toBeGreaterThan(1);
    });
  }

  it('lets a CLI command that imports infra/ fail in one line, building nothing', () => {
    const tree = cleanTree();
    const home = mkdtempSync(path.join(tmpdir(), 'pb-home-'));
    made.push(home);
    const { AWS_REGION: _r, AWS_DEFAULT_REGION: _d, AWS_PROFILE: _p, ...env } = process.env;
    const r = spawnSync(process.execPath, ['cli/pathbench.mjs', 'status', 'run-1'], {
      cwd: tree,
      encoding: 'utf8',
      env: { ...env, HOME: home },
      timeout: 120_000,
    });
    expect(r.status).toBe(2);
    expect(ours(r.stderr)).toBe(
      'pathbench: no AWS region: Region is missing (set AWS_PROFILE / AWS_REGION or pass --region)',
    );
    expect(existsSync(path.join(tree, 'dist'))).toBe(false);
  });
});
