/**
 * `pathbench parse` on a raw file with damaged lines: every good record on stdout, each bad line
 * named on stderr, exit 1; a file with no usable line is unusable input (exit 2, stdout empty).
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { registerParse } from '../../../cli/commands/parse.command.js';
import { FIXTURES } from '../../helpers/repo.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pathbench-parse-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function parse(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((c) => out.push(String(c)) > 0);
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((c) => err.push(String(c)) > 0);
  process.exitCode = undefined;
  try {
    const program = new Command('pathbench').exitOverride();
    registerParse(program);
    await program.parseAsync(['parse', ...args], { from: 'user' });
    return { code: Number(process.exitCode ?? 0), stdout: out.join(''), stderr: err.join('') };
  } finally {
    o.mockRestore();
    e.mockRestore();
    process.exitCode = undefined;
  }
}

describe('pathbench parse of a stored (gzipped) raw file', () => {
  it('reads 1.csv.gz as the plain file', async () => {
    const plain = join(FIXTURES, 'sockperf', 'udp-mps50.csv');
    const gz = join(dir, '1.csv.gz');
    await writeFile(gz, gzipSync(readFileSync(plain)));
    const a = await parse('sockperf', plain, '--trial', '1');
    const b = await parse('sockperf', gz, '--probe', 'sockperf');
    expect(b.code, b.stderr).toBe(0);
    expect(b.stdout).toBe(a.stdout);
  });
});

describe('pathbench parse with damaged lines', () => {
  it('prints every good sockperf record, names the one bad line and exits 1', async () => {
    const good = await parse('sockperf', join(FIXTURES, 'sockperf', 'udp-mps50.csv'));
    expect(good.code, good.stderr).toBe(0);
    const n = good.stdout.trim().split('\n').length;
    expect(n).toBeGreaterThan(10);

    const raw = readFileSync(join(FIXTURES, 'sockperf', 'udp-mps50.csv'), 'utf8').split('\n');
    const at = raw.findIndex((l) => l.startsWith('5, '));
    raw[at] = raw[at].replace('958.876', '958.87#6');
    const file = join(dir, 'damaged.csv');
    await writeFile(file, raw.join('\n'));
    const r = await parse('sockperf', file);
    expect(r.code).toBe(1);
    expect(r.stdout.trim().split('\n')).toHaveLength(n - 1);
    expect(r.stderr).toContain(`sockperf line ${at + 1}:`);
  });

  it('names each bad tcp-connect line; a file with none usable is exit 2 with nothing on stdout', async () => {
    const ok = '{"seq":1,"t_start":1,"t_end":2,"ok":true,"rtt_ms":0.1}';
    const file = join(dir, 'two-bad.jsonl');
    await writeFile(file, `${ok}\n{"seq":2,\n${ok.replace('"seq":1', '"seq":3')}\nnot json\n`);
    const r = await parse('tcp-connect', file);
    expect(r.code).toBe(1);
    expect(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).seq),
    ).toEqual([1, 3]);
    expect(r.stderr).toMatch(/tcp-connect line 2:/);
    expect(r.stderr).toMatch(/tcp-connect line 4:/);

    const none = join(dir, 'none.jsonl');
    await writeFile(none, '{"seq":2,\n');
    const bad = await parse('tcp-connect', none);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/no usable tcp-connect line/);
  });
});
