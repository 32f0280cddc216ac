/**
 * Local commands: `run --local` (with no `--plan` it is what `npm start` runs), and `reportLocal` behind
 * `report --local` (the command is registered in ./commands/report.ts).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { errorMessage, OverBudgetError, PlanInvalidError, RunLockedError } from '../core/errors.js';
import { checkRunId, keys, newRunId } from '../core/keys.js';
import { formatProblems } from '../core/plan.js';
import { printable } from '../core/printable.js';
import type { ResolvedPlan } from '../core/resolved-plan.js';
import { readSummary, type Summary } from '../core/run-summary.js';
import { parseSettings } from '../core/settings.js';
import { stderrLogger } from '../functions/log.js';
import { judgeStored } from '../functions/pipeline/regressions.js';
import { buildSummary } from '../functions/pipeline/summary.js';
import { labProfileForPlan } from '../lab/plan-profile.js';
import { DirStore } from '../local/dir-store.js';
import { DuckDbQueryEngine } from '../local/duckdb-query.js';
import { DEFAULT_DATA_DIR, type LocalRunResult, localPollSeconds, runLocal } from '../local/local-driver.js';
import { listening, loopbackTargetPorts, startLoopbackTargets } from '../local/targets.js';
import { renderTable, runNotes } from '../report/report-text.js';
import { ROOT } from './cli-root.js';
import { exitAfterFlush, exitWith } from './exit.js';
import { loadPlanFile } from './plan-file.js';
import { liveStatus, RunProgress } from './progress.js';
import { preflightAndPrint, SETTINGS_OPTIONS, type SettingsFlags } from './run-settings.js';

/**
 * Exit codes: 0 ok, 1 the run failed or was partial, 2 bad input (nothing written), 3 another run
 * holds the lock, 130 interrupted (routes restored and lock released before exiting).
 */
export const EXIT = { ok: 0, runFailed: 1, badInput: 2, locked: 3, interrupted: 130 } as const;

export function fail(message: string, code: number = EXIT.badInput): never {
  process.stderr.write(`pathbench: ${printable(message)}\n`);
  exitWith(code);
}

function exitFor(r: LocalRunResult): number {
  if (r.interrupted) return EXIT.interrupted;
  if (r.execution.status === 'FAILED' && r.execution.error?.name === 'RunLockedError') return EXIT.locked;
  if (
    r.execution.status === 'FAILED' &&
    ['PlanInvalidError', 'RunExistsError', 'OverBudgetError'].includes(r.execution.error?.name ?? '')
  ) {
    return EXIT.badInput;
  }
  if (nothingMeasured(r)) return EXIT.runFailed;
  return r.summary?.status === 'succeeded' && r.execution.status === 'SUCCEEDED' ? EXIT.ok : EXIT.runFailed;
}

interface RunFlags extends SettingsFlags {
  plan?: string;
  data?: string;
  json?: boolean;
  runId?: string;
  verbose?: boolean;
  trigger?: string;
}

/** `--trigger`: what started a local run (there is no console locally). */
function runTriggerFlag(v: string | undefined): 'cli' | 'schedule' {
  if (v === undefined || v === 'cli' || v === 'schedule') return v ?? 'cli';
  fail(`--trigger: expected cli or schedule, got ${JSON.stringify(v)}`);
}

/** Run a plan file locally and print the table (or the summary JSON). */
export async function runPlanFile(flags: RunFlags & { plan: string }): Promise<number> {
  const trigger = runTriggerFlag(flags.trigger);
  if (!existsSync(flags.plan)) fail(noPlanFile(flags.plan));
  const loaded = await loadPlanFile(flags.plan);
  if (!loaded.ok) fail(`plan ${flags.plan} is invalid:\n${loaded.problems.map((p) => `  ${p}`).join('\n')}`);
  let runId: string;
  try {
    runId = checkRunId(flags.runId ?? newRunId());
  } catch (e) {
    fail(errorMessage(e));
  }
  const raw = JSON.parse(readFileSync(flags.plan, 'utf8').replace(/^\uFEFF/, ''));
  // The settings, parsed once, and the checks ValidatePlan will make (limits, the cost guard):
  // refused here, with the estimate printed, before anything starts.
  let settings: ReturnType<typeof parseSettings>;
  try {
    settings = parseSettings(flags, process.env);
    preflightAndPrint(raw, settings, { runId, pollSeconds: localPollSeconds(loaded.plan) }, (t) =>
      process.stderr.write(printable(t)),
    );
  } catch (e) {
    if (e instanceof PlanInvalidError) fail(`plan ${flags.plan} is invalid:\n${formatProblems(e.problems)}`);
    fail(errorMessage(e));
  }
  const paths = loaded.plan.paths.length;
  const log = stderrLogger(!flags.verbose);
  process.stderr.write(
    `pathbench: running plan "${loaded.plan.name}" (${paths} path${paths === 1 ? '' : 's'}) on the local driver\n`,
  );
  let result: LocalRunResult;
  const release = await prepareTargets(loaded.plan);
  const progress = new RunProgress(loaded.plan);
  try {
    result = await runLocal({
      plan: raw,
      dataDir: flags.data,
      runId,
      log,
      settings,
      trigger,
      onEvent: progress.onEvent,
      onSamples: progress.onSamples,
    });
  } catch (e) {
    progress.stop();
    await release();
    if (e instanceof PlanInvalidError || e instanceof OverBudgetError) fail(e.message);
    if (e instanceof RunLockedError) fail(e.message, EXIT.locked);
    throw e;
  }
  progress.stop();
  await release();
  printResult(result, flags.json ?? false);
  for (const n of result.summary ? runNotes(result.summary) : []) process.stderr.write(`pathbench: ${n}\n`);
  return exitFor(result);
}

/** One line for a plan file that is not there: the closest file of plans/ when one is close. */
function noPlanFile(file: string): string {
  const dir = join(ROOT, 'plans');
  const names = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')) : [];
  const want = basename(file);
  const best = names
    .map((n) => ({ n, d: editDistance(n, want) }))
    .sort((a, b) => a.d - b.d)
    .at(0);
  const hint = best && best.d <= 3 ? `; did you mean plans/${best.n}?` : `; plans/ has ${names.join(', ')}`;
  return `no plan file ${file}${hint}`;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length];
}

/** No sample of any path succeeded (the summary carries a note saying why). */
function nothingMeasured(r: LocalRunResult): boolean {
  return !!r.summary && !r.summary.paths.some((p) => p.results.some((x) => x.n > 0));
}

/**
 * What a plan's targets need on this machine, started before the run and stopped after it:
 * the namespace lab for lab plans (brought up if it is not, and down again afterwards), the
 * loopback target servers for plans aimed at their ports on 127.0.0.1 (unless something
 * already listens there). Returns the clean-up.
 */
async function prepareTargets(plan: ResolvedPlan): Promise<() => Promise<void>> {
  const profile = labProfileForPlan(plan);
  if (profile) {
    const lab = await import('../lab/index.js');
    const st = await lab.labStatus();
    if (st.healthy && st.profile === profile) return async () => undefined;
    if (st.up && st.profile !== profile) {
      fail(
        `the lab is up with profile ${st.profile ?? '(unknown)'}${st.healthy ? '' : ' (unhealthy)'}; plan "${plan.name}" needs ${profile}: \`npx pathbench lab up --profile ${profile}\``,
      );
    }
    process.stderr.write(
      `pathbench: bringing the lab up (as \`pathbench lab up --profile ${profile}\`; the first time calibrates delays)\n`,
    );
    const status = liveStatus('  lab: ');
    try {
      await lab.labUp({ profile, onProgress: (l: string) => status.update(l) });
    } finally {
      status.done();
    }
    // A lab that was up (only unhealthy, now repaired) stays up.
    if (st.up) return async () => undefined;
    return async () => {
      // Leave the machine as we found it: a lab we brought up goes down again.
      await lab.labDown();
      process.stderr.write('pathbench: lab removed again (`npx pathbench lab up` keeps one running)\n');
    };
  }
  const ports = loopbackTargetPorts(plan);
  if (ports.length === 0) return async () => undefined;
  const free = await Promise.all(ports.map(async (port) => !(await listening(port))));
  if (!free.some(Boolean)) {
    process.stderr.write(`pathbench: 127.0.0.1:${ports.join(',')} already listening: using those targets\n`);
    return async () => undefined;
  }
  const targets = await startLoopbackTargets(stderrLogger(true));
  process.stderr.write(
    `pathbench: loopback targets: ${targets.started.join('; ')}${targets.missing.length ? ` (not installed: ${targets.missing.join(', ')})` : ''}\n`,
  );
  return () => targets.stop();
}

export function printResult(r: LocalRunResult, json: boolean): void {
  if (r.execution.status === 'FAILED') {
    process.stderr.write(printable(`\nexecution failed: ${r.execution.error?.name}: ${r.execution.error?.message}\n`));
    for (const line of r.failures ?? []) process.stderr.write(printable(`  ${line}\n`));
  }
  if (!r.summary) {
    if (json) process.stdout.write(`${JSON.stringify({ runId: r.runId, status: 'failed', paths: [] })}\n`);
    return;
  }
  if (json) {
    process.stdout.write(printable(`${JSON.stringify(r.summary, null, 2)}\n`));
    return;
  }
  // The table shows labels, notes and errors (tool output included): nothing in it acts on the terminal.
  process.stdout.write(printable(`\nrun ${r.runId}: ${r.summary.status}\n\n${renderTable(r.summary)}`));
  process.stdout.write(`\nreports: ${join(r.dataDir, keys.reportsPrefix(r.runId))}summary.{json,md,csv,html}\n`);
}

export function registerLocal(program: Command): void {
  const run = program.command('run');
  for (const [flag, help] of SETTINGS_OPTIONS) run.option(flag, help);
  run
    .description('run a plan through the state machine')
    .option('--plan <file>', 'plan JSON file (default: the lab plan when the lab can run here, else the loopback plan)')
    .option('--local', 'use the local driver (the default; AWS runs use `pathbench start`)', true)
    .option('--data <dir>', 'data directory (local object store)', DEFAULT_DATA_DIR)
    .option('--run-id <id>', 'run id (default: time-based)')
    .option(
      '--trigger <what>',
      'what started the run, for the runs table (started_by): cli or schedule (the crontab line of `schedule create` passes it)',
      'cli',
    )
    .option('--json', 'print the summary JSON on stdout and nothing else there')
    .option('--verbose', 'structured logs on stderr')
    .action(async (o: RunFlags) =>
      exitAfterFlush(await (o.plan ? runPlanFile({ ...o, plan: o.plan }) : runDefault(o))),
    );
}

export async function reportLocal(runId: string, o: { data: string; json?: boolean }): Promise<number> {
  try {
    checkRunId(runId);
  } catch (e) {
    fail(errorMessage(e));
  }
  const dir = resolve(o.data);
  if (!existsSync(dir)) fail(`no data directory ${dir}`);
  const store = new DirStore(dir);
  const samples = await store.list(`samples/`);
  if (!samples.some((k) => k.includes(`/run=${runId}/`))) fail(`no samples for run ${runId} in ${dir}`);
  const query = await DuckDbQueryEngine.open(dir);
  let summary: Summary;
  try {
    summary = await buildSummary({ store, query }, runId);
    // What the lab applied to each path was measured during the run, not stored with the
    // samples: it comes from the summary the run stored (a lab run's only).
    const stored = await readSummary(store, runId).catch(() => undefined);
    for (const p of summary.paths) {
      const lab = stored?.paths.find((x) => x.id === p.id)?.lab;
      if (lab && !p.lab) p.lab = lab;
    }
    // Against the plan's stored runs, as the pipeline judged it (nothing is written).
    await judgeStored({ store }, summary);
  } finally {
    await query.close();
  }
  if (o.json) process.stdout.write(printable(`${JSON.stringify(summary, null, 2)}\n`));
  else process.stdout.write(printable(`run ${runId}: ${summary.status}\n\n${renderTable(summary)}`));
  return EXIT.ok;
}

async function labUsable(): Promise<{ ok: boolean; reason?: string }> {
  try {
    const lab = await import('../lab/index.js');
    return await lab.labAvailable();
  } catch (e) {
    return { ok: false, reason: errorMessage(e) };
  }
}

/**
 * `run --local` with no plan (what `npm start` runs): the seed's lab plan when the lab can run
 * here (root, iproute2), else the loopback plan with its own listeners; says which it chose.
 */
async function runDefault(flags: RunFlags): Promise<number> {
  const lab = await labUsable();
  const planName = lab.ok ? 'lab-seed-000' : 'local-loopback';
  process.stderr.write(
    lab.ok
      ? 'pathbench: root and iproute2 are here, so this runs the namespace lab (plans/lab-seed-000.json)\n'
      : `pathbench: the lab cannot run here (${lab.reason}); running the loopback plan (plans/local-loopback.json)\n`,
  );
  return runPlanFile({ ...flags, plan: join(ROOT, 'plans', `${planName}.json`) });
}
