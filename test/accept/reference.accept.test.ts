/**
 * The reference pages' commands as typed (docs/aws.md, docs/probes.md, docs/benchmarks.md,
 * docs/testbed.md, docs/architecture.md): the ones that run offline in seconds run here; the
 * benchmarks' part names are checked against `bench --list` (a benchmark is minutes of
 * full-length runs, printed figures, not a pass/fail check); the rest are in NOT_RUN_HERE with
 * where they run instead.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanTree } from '../helpers/clean-tree.js';
import { ROOT } from '../helpers/repo.js';
import { docCommand } from './claims.js';
import { docBlocks } from './docs-blocks.js';
import { pipedBytes, say, sh } from './shell.js';

let tree: ReturnType<typeof cleanTree>;
beforeAll(() => {
  tree = cleanTree('reference');
});
afterAll(() => tree?.remove());

describe.concurrent('the reference pages, as typed', () => {
  it('docs/aws.md: prices estimate prints the estimate of the example plan', async () => {
    const cmd = docCommand(
      'docs/aws.md',
      'npx pathbench prices estimate --plan plans/seed-000-tokyo-osaka.example.json',
    );
    const r = await sh(cmd, tree.dir);
    expect(r.code, r.stderr).toBe(0);
    const total = /^\s*total\s+(\$[\d.]+)/m.exec(r.stdout)?.[1];
    expect(total, r.stdout).toMatch(/^\$\d+\.\d\d$/);
    expect(await pipedBytes(cmd, tree.dir)).toBe(Buffer.byteLength(r.stdout));
    say(r, `total ${total}`);
  });

  const parseCase = async (cmd: string) => {
    const r = await sh(cmd, tree.dir);
    expect(r.code, r.stderr).toBe(0);
    const records = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { ok: boolean });
    expect(records.length).toBeGreaterThan(0);
    expect(records.some((x) => x.ok)).toBe(true);
    say(r, `${records.length} records, ${records.filter((x) => !x.ok).length} failed`);
  };
  it('docs/probes.md: parse an iperf3 fixture', () =>
    parseCase(docCommand('docs/probes.md', 'npx pathbench parse iperf3 test/fixtures/iperf3/tcp-p2.json')));
  it('docs/probes.md: parse a ping fixture', () =>
    parseCase(docCommand('docs/probes.md', 'npx pathbench parse ping test/fixtures/ping/every-third-lost.txt')));

  it('docs/benchmarks.md: every `bench --only` part the page names exists', async () => {
    const r = await sh('npx pathbench bench --list', tree.dir);
    expect(r.code, r.stderr).toBe(0);
    const parts = r.stdout.trim().split('\n');
    const named = docBlocks(ROOT, 'docs/benchmarks.md')
      .flatMap((b) => b.commands)
      .map((c) => /^npm run bench -- --only (\S+)$/.exec(c)?.[1])
      .filter((x): x is string => x !== undefined);
    expect(named.length).toBeGreaterThan(5);
    for (const part of named) {
      docCommand('docs/benchmarks.md', `npm run bench -- --only ${part}`);
      expect(parts, `docs/benchmarks.md names a bench part that does not exist: ${part}`).toContain(part);
    }
    say(r, `${named.length} parts named, all of ${parts.length} known`);
  });
});
