/**
 * `pathbench trend` and `pathbench compare` on a local data directory: a plan's runs as a time
 * series with each run's regressions (cli/trend.ts), and two runs side by side (cli/compare.ts).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { DirStore } from '../../local/dir-store.js';
import { DuckDbQueryEngine } from '../../local/duckdb-query.js';
import { DEFAULT_DATA_DIR } from '../../local/local-driver.js';
import { compareText } from '../compare.js';
import { compareRuns } from '../compare-runs.js';
import { InputError } from '../exit.js';
import { trendRows, trendText } from '../trend.js';

interface TrendFlags {
  plan?: string;
  path?: string;
  probe?: string;
  metric?: string;
  runs?: string;
  data: string;
  json?: boolean;
}

function dataDir(d: string): string {
  const dir = resolve(d);
  if (!existsSync(dir)) throw new InputError(`no data directory ${dir}`);
  return dir;
}

export async function trendAction(o: TrendFlags, out: (t: string) => void): Promise<void> {
  const runs = o.runs === undefined ? undefined : Number(o.runs);
  if (runs !== undefined && !(Number.isInteger(runs) && runs > 0))
    throw new InputError(`--runs: expected a positive integer, got ${JSON.stringify(o.runs)}`);
  const rows = await trendRows(new DirStore(dataDir(o.data)), {
    plan: o.plan,
    path: o.path,
    probe: o.probe,
    metric: o.metric,
    runs,
  });
  out(o.json ? `${JSON.stringify(rows, null, 2)}\n` : trendText(rows));
}

export async function compareAction(
  runA: string,
  runB: string,
  o: { data: string; json?: boolean },
  out: (t: string) => void,
): Promise<void> {
  const dir = dataDir(o.data);
  const query = await DuckDbQueryEngine.open(dir);
  try {
    const c = await compareRuns({ store: new DirStore(dir), query }, runA, runB);
    out(o.json ? `${JSON.stringify(c, null, 2)}\n` : compareText(c));
  } finally {
    await query.close();
  }
}

const stdout = (t: string) => process.stdout.write(t);

export function registerTrend(program: Command): void {
  program
    .command('trend')
    .description("a plan's runs as a time series of each path's p50 / p99, with the runs that were flagged")
    .option('--plan <name>', 'one plan (default: every plan with runs here)')
    .option('--path <id>', 'one path')
    .option('--probe <name>', 'one probe')
    .option('--metric <metric>', 'one metric, e.g. connect_rtt_ms or throughput_bps')
    .option('--runs <n>', 'only the latest n runs of each plan')
    .option('--data <dir>', 'data directory', DEFAULT_DATA_DIR)
    .option('--json', 'print the rows as JSON')
    .action((o: TrendFlags) => trendAction(o, stdout));
  program
    .command('compare')
    .description('the same paths across two runs: B − A per percentile with 95 % intervals and verdicts')
    .argument('<runA>', 'the run before (the baseline)')
    .argument('<runB>', 'the run after')
    .option('--data <dir>', 'data directory', DEFAULT_DATA_DIR)
    .option('--json', 'print the comparison as JSON')
    .action((a: string, b: string, o: { data: string; json?: boolean }) => compareAction(a, b, o, stdout));
}
