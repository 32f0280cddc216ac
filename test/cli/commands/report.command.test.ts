/** `pathbench report`: one command whose flags pick local or AWS, whatever order the areas register in. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerBench } from '../../../cli/bench.js';
import { registerAws } from '../../../cli/commands/aws.command.js';
import { registerLab } from '../../../cli/commands/lab.command.js';
import { registerParse } from '../../../cli/commands/parse.command.js';
import { type ReportActions, registerReport } from '../../../cli/commands/report.command.js';
import { registerTestbed } from '../../../cli/commands/testbed.command.js';
import { registerLocal } from '../../../cli/local.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** Every area's registration, in the order cli/cli-main.ts uses. */
const AREAS: ((program: Command) => void)[] = [
  registerLocal,
  registerReport,
  registerParse,
  registerLab,
  registerAws,
  registerTestbed,
  registerBench,
];

function programIn(order: ((program: Command) => void)[]): Command {
  const program = new Command('pathbench');
  for (const register of order) register(program);
  return program;
}

describe('report command', () => {
  it('is the same one command whatever order the areas register in', () => {
    const orders = [AREAS, [...AREAS].reverse(), [registerReport, ...AREAS.filter((r) => r !== registerReport)]];
    const helps = orders.map((order) => {
      const reports = programIn(order).commands.filter((c) => c.name() === 'report');
      expect(reports).toHaveLength(1);
      return reports[0].helpInformation();
    });
    for (const help of helps) expect(help).toBe(helps[0]);
    for (const flag of ['--local', '--data <dir>', '--json', '--aws', '--region <region>', '--stack <name>']) {
      expect(helps[0]).toContain(flag);
    }
  });

  it('runs the local report unless --aws is given, with the flags of each side', async () => {
    const calls: string[] = [];
    const actions: ReportActions = {
      local: async (runId, o) => void calls.push(`local ${runId} data=${o.data} json=${o.json ?? false}`),
      aws: async (runId, o) => void calls.push(`aws ${runId} stack=${o.stack} region=${o.region}`),
    };
    const parse = async (...args: string[]) => {
      const program = new Command('pathbench');
      registerReport(program, actions);
      await program.parseAsync(['report', ...args], { from: 'user' });
    };
    await parse('run-1');
    await parse('run-2', '--local', '--data', 'd', '--json');
    await parse('run-3', '--aws', '--region', 'ap-northeast-1');
    await parse('run-4', '--local', '--aws', '--stack', 'S');
    expect(calls).toEqual([
      'local run-1 data=.pathbench json=false',
      'local run-2 data=d json=true',
      'aws run-3 stack=Pathbench region=ap-northeast-1',
      'aws run-4 stack=S region=undefined',
    ]);
  });
});

describe('report from the command line', () => {
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [path.join(ROOT, 'cli/pathbench.mjs'), 'report', ...args], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: mkdtempSync(path.join(tmpdir(), 'pb-home-')),
        AWS_EC2_METADATA_DISABLED: 'true',
      },
      encoding: 'utf8',
      timeout: 60_000,
    });

  it('reads the local data directory by default', () => {
    const missing = path.join(mkdtempSync(path.join(tmpdir(), 'pb-report-')), 'none');
    const r = cli('run-1', '--data', missing);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`pathbench: no data directory ${missing}\n`);
  });

  it('goes to AWS with --aws (here: one line and exit 2, no region)', () => {
    const r = cli('run-1', '--aws', '--stack', 'PbNoSuchStack');
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^pathbench: no AWS region/);
  });
});
