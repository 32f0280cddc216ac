/**
 * README.md and docs/local.md as a user types them, on a clean tree with no lab: the loopback
 * plans, report, trend, compare, named plans, schedule create, plan mesh / az-matrix, and parse
 * of every probe kind on the raw files a run wrote. Each command runs through bash and `npx`.
 */
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Summary } from '../../core/run-summary.js';
import { cleanTree } from '../helpers/clean-tree.js';
import { docCommand } from './claims.js';
import { pipedBytes, type Ran, say, sh, slowPiped } from './shell.js';

let tree: ReturnType<typeof cleanTree>;
beforeAll(() => {
  tree = cleanTree('local');
});
afterAll(() => tree?.remove());

const run = (command: string) => sh(command, tree.dir);

/** Every path has figures (n > 0 in some result), except the ones named. */
function measured(s: Summary, except: string[] = []): string {
  for (const p of s.paths) {
    const n = Math.max(0, ...p.results.map((r) => r.n));
    if (!except.includes(p.id)) expect(n, `path ${p.id}: ${p.error ?? ''}`).toBeGreaterThan(0);
  }
  return s.paths.map((p) => `${p.id} n=${Math.max(0, ...p.results.map((r) => r.n))}`).join(', ');
}

/**
 * The command's stdout is whole through a slow pipe: as many bytes as the direct run gave (for
 * output that is the same each time).
 */
async function whole(r: Ran): Promise<void> {
  expect(await pipedBytes(r.command, tree.dir), `${r.command} | wc -c`).toBe(Buffer.byteLength(r.stdout));
}

/** JSON output is whole through a slow pipe: it parses (a report is recomputed each time). */
async function wholeJson(r: Ran): Promise<void> {
  const text = await slowPiped(r.command, tree.dir);
  expect(() => JSON.parse(text), `${r.command} | (sleep 1; cat) is not whole JSON`).not.toThrow();
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

const runs: string[] = [];
const loopback = 'npx pathbench run --local --plan plans/local-loopback.json';
let first: Promise<Ran> | undefined;

describe.sequential('README.md and docs/local.md, no lab', () => {
  it('runs the plan with every probe kind, starting the loopback targets it needs', async () => {
    const c = docCommand('README.md', 'npx pathbench run --local --plan plans/local-all-probes.json');
    const r = await run(`${c} --json`);
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const s = JSON.parse(r.stdout) as Summary;
    runs.push(s.runId);
    const probes = new Set(s.paths.flatMap((p) => p.results.filter((x) => x.n > 0).map((x) => x.probe)));
    say(r, `${measured(s)}; probes measured: ${[...probes].join(' ')}`);
  });

  it('parses the raw file of every probe kind that run wrote (the next run meanwhile)', async () => {
    // The next case's first loopback run mostly waits on its slow-accept path: it runs meanwhile
    // (parse reads files only; it takes no lock).
    first = run(`${loopback} --json`);
    const c = docCommand('docs/local.md', 'npx pathbench parse <iperf3|sockperf|http|mtu|tcp-connect> FILE');
    expect(c).toMatch(/^npx pathbench parse /);
    const raw = files(join(tree.dir, '.pathbench', 'raw')).filter((f) => /\/\d+\.[a-z]+(\.gz)?$/.test(f));
    const kinds = ['tcp-connect', 'http', 'iperf3', 'sockperf', 'mtu', 'pingpong', 'ping'];
    const parsed = await Promise.all(
      kinds.map((kind) => {
        const file = raw.find((f) => f.includes(`/${kind}/`));
        expect(file, `a raw ${kind} file`).toBeDefined();
        return run(`npx pathbench parse ${kind} ${file}`);
      }),
    );
    for (const r of parsed) {
      expect(r.code, r.stderr).toBe(0);
      const records = r.stdout.trim().split('\n');
      expect(records.length).toBeGreaterThan(0);
      for (const l of records) JSON.parse(l);
      say(r, `${records.length} records`);
    }
    await whole(parsed[kinds.indexOf('sockperf')]);
  });

  it('runs the loopback plan twice, with and without --json, and a chosen run id', async () => {
    const c = docCommand(
      'docs/local.md',
      'npx pathbench run --local --plan plans/local-loopback.json [--data DIR] [--run-id ID] [--json] [--verbose]',
    );
    expect(c.replace(/ \[.*$/, '')).toBe(loopback);
    const a = await (first as Promise<Ran>);
    expect(a.code, a.stderr.slice(-2000)).toBe(0);
    const s = JSON.parse(a.stdout) as Summary;
    runs.push(s.runId);
    // The closed port is the plan's loss path: every connect refused, no figures.
    say(a, measured(s, ['closed']));
    const b = await run(`${loopback} --run-id accept-loopback-2`);
    expect(b.code, b.stderr.slice(-2000)).toBe(0);
    expect(b.stdout).toMatch(/^run accept-loopback-2: succeeded$/m);
    runs.push('accept-loopback-2');
    say(b, `${b.stdout.split('\n').length} lines of table`);
  });

  it('recomputes a run from its samples, as a table and as JSON, whole through a pipe', async () => {
    const c = docCommand('README.md', 'npx pathbench report --local RUN_ID');
    docCommand('docs/local.md', 'npx pathbench report --local RUN_ID [--data DIR] [--json]');
    const t = await run(c.replace('RUN_ID', runs[1]));
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toMatch(new RegExp(`^run ${runs[1]}: succeeded`));
    say(t, `${t.stdout.length} bytes`);
    const j = await run(`${c.replace('RUN_ID', runs[0])} --json`);
    expect(j.code, j.stderr).toBe(0);
    say(j, measured(JSON.parse(j.stdout) as Summary));
    await wholeJson(j);
  });

  it("lists a plan's runs as a trend", async () => {
    const c = docCommand('README.md', 'npx pathbench trend --plan NAME [--path ID] [--metric M]');
    docCommand(
      'docs/local.md',
      'npx pathbench trend [--plan NAME] [--path ID] [--probe P] [--metric M] [--runs N] [--json]',
    );
    const r = await run(
      `${c.replace(/ \[.*$/, '').replace('NAME', 'local-loopback')} --path plain --metric connect_rtt_ms`,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(runs[1]);
    expect(r.stdout).toContain('accept-loopback-2');
    say(r, `${r.stdout.trim().split('\n').length} lines`);
    const j = await run('npx pathbench trend --json');
    expect(j.code, j.stderr).toBe(0);
    const rows = JSON.parse(j.stdout) as unknown[];
    expect(rows.length).toBeGreaterThan(0);
    await wholeJson(j);
    say(j, `${rows.length} rows`);
  });

  it('compares two runs', async () => {
    const c = docCommand('README.md', 'npx pathbench compare RUN_A RUN_B');
    docCommand('docs/local.md', 'npx pathbench compare RUN_A RUN_B [--json]');
    const r = await run(c.replace('RUN_A', runs[1]).replace('RUN_B', runs[2]));
    expect(r.code, r.stderr).toBe(0);
    say(r, `${r.stdout.trim().split('\n').length} lines`);
  });

  it("asks what each run's paths were, in SQL over the data directory", async () => {
    const c = docCommand(
      'README.md',
      'npx pathbench sql "SELECT run_id, path_id, method, status FROM paths ORDER BY run_id, path_id"',
    );
    const r = await run(c);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0].split(/\s+/)).toEqual(['run_id', 'path_id', 'method', 'status']);
    expect(lines.at(-1)).toMatch(/^\(\d+ rows\)$/);
    // a loopback run of this suite: its three paths, each with its status
    const mine = lines.filter((l) => l.startsWith(`${runs[1]} `)).map((l) => l.split(/\s+/));
    expect(mine.map((cells) => cells[1])).toEqual(['closed', 'plain', 'slow-accept']);
    for (const cells of mine) expect(['succeeded', 'failed']).toContain(cells.at(-1));
    await whole(r);
    say(r, lines.at(-1) ?? '');
  });

  it('stores, reads, lists and removes a named plan; prints the crontab line of a schedule', async () => {
    docCommand('README.md', 'npx pathbench plan put NAME FILE · schedule create NAME --cron "…"');
    docCommand('docs/local.md', 'npx pathbench plan put NAME FILE | get NAME | list | rm NAME');
    for (const [cmd, check] of [
      ['npx pathbench plan put local-loopback plans/local-loopback.json', /local-loopback/],
      ['npx pathbench plan get local-loopback', /"name": "local-loopback"/],
      ['npx pathbench plan list', /local-loopback/],
    ] as const) {
      const r = await run(cmd);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).toMatch(check);
      say(r, `${r.stdout.length} bytes`);
    }
    const c = docCommand(
      'docs/local.md',
      'npx pathbench schedule create NAME --cron "cron(0 18 ? * SUN *)" [--timezone TZ]',
    );
    const s = await run(c.replace(' [--timezone TZ]', ' --timezone Asia/Tokyo').replace('NAME', 'local-loopback'));
    expect(s.code, s.stderr).toBe(0);
    expect(s.stdout).toMatch(/^0 18 \* \* (0|SUN|7) .*pathbench.*run --local/m);
    say(s, s.stdout.trim().split('\n').at(-1) ?? '');
    const rm = await run('npx pathbench plan rm local-loopback');
    expect(rm.code, rm.stderr).toBe(0);
    const gone = await run('npx pathbench plan get local-loopback');
    expect(gone.code).toBe(2);
    expect(gone.stderr.trim().split('\n')).toHaveLength(1);
    say(gone, gone.stderr.trim());
  });

  it('writes a region mesh plan and an AZ-matrix plan, whole through a pipe', async () => {
    const c = docCommand(
      'README.md',
      'npx pathbench plan mesh --regions us-east-1,eu-west-1,…  ·  plan az-matrix --hosts FILE',
    );
    const three = await run(`${c.replace(/,….*$/, '')},ap-northeast-1`);
    expect(three.code, three.stderr).toBe(0);
    expect(JSON.parse(three.stdout).paths).toHaveLength(6);
    say(three, '6 paths');
    const all = await run('npx pathbench plan mesh --regions all');
    expect(all.code, all.stderr).toBe(0);
    const paths = JSON.parse(all.stdout).paths.length;
    expect(Buffer.byteLength(all.stdout)).toBeGreaterThan(256 * 1024);
    await whole(all);
    say(all, `${paths} paths, ${Buffer.byteLength(all.stdout)} bytes`);
    const hosts = join(tree.dir, 'hosts.json');
    writeFileSync(
      hosts,
      JSON.stringify([
        { region: 'ap-northeast-1', azId: 'apne1-az1', instanceId: 'i-0a', ip: '10.0.1.10' },
        { region: 'ap-northeast-1', azId: 'apne1-az2', instanceId: 'i-0b', ip: '10.0.2.10' },
        { region: 'ap-northeast-1', azId: 'apne1-az4', instanceId: 'i-0c', ip: '10.0.3.10' },
      ]),
    );
    const az = await run('npx pathbench plan az-matrix --hosts hosts.json --out az.json');
    expect(az.code, az.stderr).toBe(0);
    const check = await run('node -e "console.log(require(\'./az.json\').paths.length)"');
    expect(Number(check.stdout)).toBeGreaterThanOrEqual(6);
    say(az, `${check.stdout.trim()} paths`);
  });
});
