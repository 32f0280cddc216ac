/**
 * What `pathbench` loads to start: every command pays for the modules the CLI imports before it
 * parses its arguments, and each goes through tsx's loader thread. aws-cdk-lib (the stacks) and
 * ECharts (thousands of ES modules, for summary.html only) must not be among them.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ROOT } from '../helpers/repo.js';

const dir = mkdtempSync(path.join(tmpdir(), 'pb-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The packages (node_modules/<name>) a CLI invocation resolves, with their module counts. */
function loaded(args: string[]): Map<string, number> {
  const log = path.join(dir, `${args.join('-') || 'none'}.log`);
  execFileSync(
    process.execPath,
    ['--import', path.join(ROOT, 'test/helpers/resolve-log.mjs'), path.join(ROOT, 'cli/pathbench.mjs'), ...args],
    { cwd: ROOT, env: { ...process.env, PATHBENCH_RESOLVE_LOG: log }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const counts = new Map<string, number>();
  for (const url of readFileSync(log, 'utf8').split('\n')) {
    const m = /node_modules\/((@[^/]+\/)?[^/]+)\//.exec(url);
    if (m) counts.set(m[1], (counts.get(m[1]) ?? 0) + 1);
  }
  return counts;
}

it('starts without aws-cdk-lib or ECharts', () => {
  const counts = loaded(['--help']);
  // The log works: the CLI's own parser is in it.
  expect(counts.get('commander')).toBeGreaterThan(0);
  for (const heavy of ['aws-cdk-lib', 'echarts', 'zrender']) expect(counts.get(heavy), heavy).toBeUndefined();
});
