/**
 * The namespace lab as README.md and docs/lab.md type it (root): `lab up`, the seed's plan,
 * `lab status`, `lab calibrate --path A`, `lab down`, `lab up --profile seed-002`, and the seed-004 AZ-pair flow (`lab up
 * --profile seed-004`, its plan, report, trend, `lab down`), and the one-way profile's plan. Each run's figures come from `report --local RUN_ID --json`.
 * Nothing of the lab is left afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Summary } from '../../core/run-summary.js';
import { DEFAULT_PREFIX } from '../../lab/namespace-names.js';
import { ALL_ROLES } from '../../lab/profiles/profile-by-name.js';
import { cleanTree } from '../helpers/clean-tree.js';
import { docCommand } from './claims.js';
import { type Ran, say, sh } from './shell.js';

let tree: ReturnType<typeof cleanTree>;
beforeAll(async () => {
  tree = cleanTree('lab');
  // A lab someone left up would be reused as it is: start from none, as a new user does.
  const down = await sh('npx pathbench lab down', tree.dir);
  expect(down.code, down.stderr).toBe(0);
});
afterAll(async () => {
  if (tree) await sh('npx pathbench lab down', tree.dir);
  tree?.remove();
});

const run = (command: string) => sh(command, tree.dir, 420_000);

/** The default lab's namespaces still present (other prefixes are other runs' labs). */
async function labNamespaces(): Promise<string[]> {
  const mine = new Set(ALL_ROLES.map((r) => `${DEFAULT_PREFIX}${r}`));
  const list = await run('ip netns list');
  return list.stdout
    .split('\n')
    .map((l) => l.split(' ')[0])
    .filter((n) => mine.has(n));
}

/** The run id a table run printed (`run <id>: <status>`). */
function runIdOf(r: Ran): string {
  const id = /^run (\S+): /m.exec(r.stdout)?.[1];
  expect(id, r.stdout.slice(0, 500)).toBeDefined();
  return id as string;
}

/** The run's figures through `report --local RUN_ID --json`: every path n > 0. */
async function everyPathMeasured(runId: string): Promise<string> {
  const r = await run(`npx pathbench report --local ${runId} --json`);
  expect(r.code, r.stderr).toBe(0);
  const s = JSON.parse(r.stdout) as Summary;
  for (const p of s.paths) {
    const n = Math.max(0, ...p.results.map((x) => x.n));
    expect(n, `path ${p.id}: ${p.error ?? ''}`).toBeGreaterThan(0);
  }
  const figure = s.paths.map((p) => `${p.id} n=${Math.max(0, ...p.results.map((x) => x.n))}`).join(', ');
  say(r, figure);
  return figure;
}

describe.sequential('README.md and docs/lab.md, the namespace lab', () => {
  it('brings the seed-000 lab up, runs its plan and measures every path', async () => {
    docCommand(
      'docs/lab.md',
      'npx pathbench lab up [--profile seed-000|seed-002|seed-004|mesh|one-way] [--prefix pb-] [--no-calibrate]',
    );
    docCommand('docs/lab.md', 'npx pathbench run --local --plan plans/lab-seed-000.json');
    const c = docCommand(
      'README.md',
      'npx pathbench lab up && npx pathbench run --local --plan plans/lab-seed-000.json',
    );
    const r = await run(c);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(r.stdout).toMatch(/^run \S+: succeeded$/m);
    say(r, `run ${runIdOf(r)} succeeded`);
    await everyPathMeasured(runIdOf(r));
  });

  it('says the lab is up and healthy, as text and as JSON', async () => {
    const c = docCommand('docs/lab.md', 'npx pathbench lab status [--json]');
    const t = await run(c.replace(' [--json]', ''));
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toMatch(/seed-000 .* healthy/);
    say(t, t.stdout.split('\n')[0]);
    const j = await run(c.replace(' [--json]', ' --json'));
    expect(j.code, j.stderr).toBe(0);
    const st = JSON.parse(j.stdout) as { healthy: boolean; profile: string };
    expect(st).toMatchObject({ healthy: true, profile: 'seed-000' });
    say(j, `healthy ${st.healthy}, profile ${st.profile}`);
  });

  it('re-tunes one path of the lab that is up, keeping the others as calibrated', async () => {
    const c = docCommand('docs/lab.md', 'npx pathbench lab calibrate [--path A[,B]]');
    const r = await run(c.replace(' [--path A[,B]]', ' --path A'));
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    // Progress: "lab calibrate: calibration round 1 (kernel-tcpi_rtt): A 0.201/0.21 (applied 0.186) ms".
    const rounds = `${r.stdout}\n${r.stderr}`.split('\n').filter((l) => /calibration round \d+ /.test(l));
    expect(rounds.length, `${r.stdout}${r.stderr}`).toBeGreaterThan(0);
    for (const l of rounds) expect(l).toMatch(/\): A [\d.]+\/0\.21( \(applied [\d.]+\))? ms$/);
    const st = await run('npx pathbench lab status --json');
    expect(JSON.parse(st.stdout)).toMatchObject({ healthy: true, profile: 'seed-000' });
    // A path the profile does not have is refused by name, and nothing is changed.
    const bad = await run('npx pathbench lab calibrate --path Z');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/has no path Z: its paths are A, B/);
    say(r, rounds.at(-1) ?? '');
  });

  it('takes it down, leaving no namespace', async () => {
    const c = docCommand('docs/lab.md', 'npx pathbench lab down');
    const r = await run(c);
    expect(r.code, r.stderr).toBe(0);
    expect(await labNamespaces()).toEqual([]);
    const st = await run('npx pathbench lab status');
    expect(st.stdout).toMatch(/is down/);
    say(r, st.stdout.trim());
  });

  it('brings up the seed-002 profile (its real proxies) and takes it down', async () => {
    docCommand('README.md', 'npx pathbench lab up --profile seed-002');
    const up = await run(docCommand('docs/lab.md', 'npx pathbench lab up --profile seed-002'));
    expect(up.code, up.stderr.slice(-2000)).toBe(0);
    const st = await run('npx pathbench lab status --json');
    expect(JSON.parse(st.stdout)).toMatchObject({ healthy: true, profile: 'seed-002' });
    say(up, 'healthy, profile seed-002');
    const down = await run('npx pathbench lab down');
    expect(down.code, down.stderr).toBe(0);
  });

  it('runs the seed-004 AZ pairs: every path measured by sockperf; report, trend, lab down', async () => {
    const up = await run('npx pathbench lab up --profile seed-004');
    expect(up.code, up.stderr.slice(-2000)).toBe(0);
    say(up, up.stdout.trim().split('\n').at(-1) ?? '');
    const r = await run('npx pathbench run --local --plan plans/lab-seed-004.json');
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    say(r, `run ${runIdOf(r)}: ${/^run \S+: (\S+)$/m.exec(r.stdout)?.[1]}`);
    await everyPathMeasured(runIdOf(r));
    const t = await run('npx pathbench trend --plan lab-seed-004 --runs 1');
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toContain(runIdOf(r));
    say(t, `${t.stdout.trim().split('\n').length} lines`);
    const down = await run('npx pathbench lab down');
    expect(down.code, down.stderr).toBe(0);
    expect(await labNamespaces()).toEqual([]);
  });

  it("runs the one-way profile's plan: every path's one-way figures, with no clock error, the way its delay is set", async () => {
    const up = await run(docCommand('docs/lab.md', 'npx pathbench lab up --profile one-way'));
    expect(up.code, up.stderr.slice(-2000)).toBe(0);
    const r = await run(docCommand('docs/lab.md', 'npx pathbench run --local --plan plans/lab-one-way.json'));
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(r.stdout).toMatch(/^run \S+: succeeded$/m);
    const rep = await run(`npx pathbench report --local ${runIdOf(r)} --json`);
    const s = JSON.parse(rep.stdout) as Summary;
    const oneWay = (id: string) => s.paths.find((p) => p.id === id)?.results.find((x) => x.metric === 'rtt_us')?.oneWay;
    for (const id of ['A', 'FWD', 'REV']) expect(oneWay(id), id).toMatchObject({ n: 3000, clock_error_us: 0 });
    // FWD's delay is mostly on the way out, REV's on the way back (the profile's 80 % and 90 %)
    expect(oneWay('FWD')!.fwd_p50_us!).toBeGreaterThan(3 * oneWay('FWD')!.rev_p50_us!);
    expect(oneWay('REV')!.rev_p50_us!).toBeGreaterThan(5 * oneWay('REV')!.fwd_p50_us!);
    expect(r.stdout).toMatch(/one-way p50 fwd [\d.]+ µs, rev [\d.]+ µs \(clocks ±0 µs\)/);
    const line = (id: string) => `${id} fwd ${oneWay(id)?.fwd_p50_us} rev ${oneWay(id)?.rev_p50_us}`;
    say(r, ['A', 'FWD', 'REV'].map(line).join(', '));
    const down = await run(docCommand('docs/lab.md', 'npx pathbench lab down'));
    expect(down.code, down.stderr).toBe(0);
    expect(await labNamespaces()).toEqual([]);
  });
});
